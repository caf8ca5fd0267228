// Console accounts for `npm start`: the users file (created with a bootstrap
// admin on first start), the session secret, the Accounts service, and its
// sign-ins restored from the logins file (BATON_LOGINS_FILE, formerly BATON_SESSIONS_FILE).
import type { Env } from "@/lib/accounts/env";
import { createAccountsFromEnv, type Accounts, type AccountsLogger } from "@/lib/accounts/accounts";
import type { ScryptParams } from "@/lib/accounts/password";
import { loadLoginSecret } from "@/lib/accounts/login-cookie";
import {
  bootstrapMessage,
  ensureBootstrapAdmin,
  usersFilePath,
  usersFilePermissionWarning,
  type BootstrapResult,
} from "@/lib/accounts/users-file";

export interface AccountsSetup {
  accounts: Accounts;
  secret: Buffer;
  usersFile: string;
  /** Where sign-ins are kept across restarts; null when BATON_LOGINS_FILE=off. Flush with accounts.flushLogins(). */
  loginsFile: string | null;
  bootstrap: BootstrapResult;
  /** A warning about the users file's permissions, if any. */
  permissionWarning: string | null;
}

export async function setupAccounts(env: Env, logger: AccountsLogger, options: { scrypt?: ScryptParams } = {}): Promise<AccountsSetup> {
  const usersFile = usersFilePath(env);
  const bootstrap = await ensureBootstrapAdmin(usersFile, options.scrypt ? { scrypt: options.scrypt } : {});
  const secretFile = env.BATON_SESSION_SECRET_FILE?.trim();
  const secret = await loadLoginSecret({ env, ...(secretFile ? { file: secretFile } : {}) });
  // Restores the sign-ins kept in the sessions file, so a restart signs nobody out.
  const accounts = await createAccountsFromEnv(env, { loginSecret: secret, logger, ...(options.scrypt ? { scrypt: options.scrypt } : {}) });
  return {
    accounts,
    secret,
    usersFile,
    loginsFile: accounts.loginsFile,
    bootstrap,
    permissionWarning: await usersFilePermissionWarning(usersFile),
  };
}

/**
 * What to print to the terminal once the console listens: the bootstrap
 * admin's one-time password right after the users file was created (the only
 * time it exists in clear), or a hint when no admin is left; else null.
 */
export function bootstrapNotice(setup: Pick<AccountsSetup, "bootstrap" | "usersFile">, origin: string): string | null {
  return bootstrapMessage(setup.bootstrap, origin, setup.usersFile);
}
