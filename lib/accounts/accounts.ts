// The console's account service: sign-in with a password, the current user
// for a request, sign-out, "whoami", password changes, and logins for OIDC
// sign-ins. One instance per console server. Server-side only.
//
// Its public types are in accounts-types.ts and the sign-in change
// notifications in sign-in-changes.ts; both are re-exported or used here.
//
// Never logs passwords, hashes, tokens, cookies or CSRF tokens.
import type { WhoAmI } from "@/lib/views/sign-in";
import type { Env } from "./env";
import { UserDirectory } from "./directory";
import { LoginLimiter } from "./rate-limit";
import {
  DEFAULT_SCRYPT,
  MAX_PASSWORD_LENGTH,
  hashPassword,
  passwordProblem,
  verifyAgainstNothing,
  verifyPassword,
  type ScryptParams,
} from "./password";
import { clearLoginCookies, loadLoginSecret, loginCookie, readLoginCookie } from "./login-cookie";
import { LoginStore, credentialTag, type LoginRecord, type Principal } from "./logins";
import type { HeaderSource } from "./request";
import { LoginFile, loginsFilePath, type LoginFileLoad } from "./login-file";
import { normalizeUsername, usernameProblem, usersFilePath, type UserRecord } from "./users-file";
import type { AccountsLogger, AccountsOptions, Authenticated, ChangePasswordResult, LoginResult, SignInChange } from "./accounts-types";
import { SignInChanges } from "./sign-in-changes";

export type {
  AccountsLogger,
  AccountsOptions,
  Authenticated,
  ChangePasswordResult,
  LoginResult,
  SignInChange,
  WhoAmI,
} from "./accounts-types";

const silent: AccountsLogger = { info: () => undefined, warn: () => undefined };

const GENERIC_FAILURE = "Incorrect username or password.";

function principalOf(u: UserRecord, authMethod: Principal["authMethod"], oidcSubject?: string): Principal {
  return {
    username: u.username,
    displayName: u.displayName,
    role: u.role,
    participantId: u.participantId,
    authMethod,
    ephemeral: false,
    ...(oidcSubject !== undefined ? { oidcSubject } : {}),
  };
}

export class Accounts {
  readonly directory: UserDirectory;
  readonly logins: LoginStore;
  private readonly limiter: LoginLimiter;
  private readonly scrypt: ScryptParams;
  private readonly log: AccountsLogger;
  private readonly loginFile: LoginFile | null;
  private readonly signInChanges: SignInChanges;

  constructor(options: AccountsOptions) {
    this.directory = new UserDirectory(options.usersFile);
    this.logins = new LoginStore({
      secret: options.loginSecret,
      idleMs: options.idleMs,
      absoluteMs: options.absoluteMs,
      now: options.now,
    });
    this.limiter = new LoginLimiter({ ...options.limits, now: options.now });
    this.scrypt = options.scrypt ?? DEFAULT_SCRYPT;
    this.log = options.logger ?? silent;
    this.signInChanges = new SignInChanges(this.directory, this.logins, options.usersPollMs ?? 1_000, this.log);
    this.loginFile =
      options.loginsFile !== undefined && options.loginsFile !== null
        ? new LoginFile({
            file: options.loginsFile,
            secret: options.loginSecret,
            logger: this.log,
            ...(options.now ? { now: options.now } : {}),
          })
        : null;
    // Prepare the unknown-user decoy hash now, so the first such sign-in is not slower.
    void verifyAgainstNothing("", this.scrypt).catch(() => undefined);
  }

  /** The file sign-ins are kept in, or null when they live in memory only. */
  get loginsFile(): string | null {
    return this.loginFile?.file ?? null;
  }

  /**
   * Load the logins file (when there is one) and keep it up to date from
   * now on. Call once, before serving requests. A bad file never throws: it
   * is moved aside with a warning and nobody is signed in.
   */
  async restoreLogins(): Promise<LoginFileLoad | null> {
    return this.loginFile ? this.loginFile.attach(this.logins) : null;
  }

  /** Write pending login changes now (on shutdown). Never rejects. */
  async flushLogins(): Promise<void> {
    await this.loginFile?.flush();
  }

  /**
   * Password sign-in. Unknown users, disabled users and wrong passwords cost
   * the same scrypt work and get the same message; only someone who knows the
   * password learns that the account is disabled.
   */
  async login(input: { username: unknown; password: unknown; ip: string; userAgent?: string }): Promise<LoginResult> {
    if (typeof input.username !== "string" || typeof input.password !== "string") {
      return { ok: false, status: 400, reason: "Enter a username and a password." };
    }
    const username = normalizeUsername(input.username);
    const password = input.password;
    if (username === "" || password === "") return { ok: false, status: 400, reason: "Enter a username and a password." };
    if (password.length > MAX_PASSWORD_LENGTH || username.length > 64) {
      return { ok: false, status: 400, reason: GENERIC_FAILURE };
    }
    const ip = input.ip || "unknown";
    const limit = this.limiter.check(username, ip);
    if (!limit.allowed) {
      const minutes = Math.ceil(limit.retryAfterMs / 60_000);
      this.log.warn({ username, ip }, "sign-in throttled");
      return {
        ok: false,
        status: 429,
        reason: `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`,
        retryAfterMs: limit.retryAfterMs,
      };
    }

    let user: UserRecord | undefined;
    try {
      user = usernameProblem(username) ? undefined : await this.directory.find(username);
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, "users file unavailable");
      return {
        ok: false,
        status: 503,
        reason: "Sign-in is unavailable: the users file is invalid. An admin must fix it (see the server log).",
      };
    }
    const ok =
      user?.passwordHash !== undefined
        ? await verifyPassword(password, user.passwordHash)
        : await verifyAgainstNothing(password, this.scrypt);
    if (!ok || !user) {
      this.limiter.failed(username, ip);
      this.log.info({ username, ip, known: user !== undefined }, "sign-in failed");
      return { ok: false, status: 401, reason: GENERIC_FAILURE };
    }
    if (user.disabled === true) {
      this.limiter.failed(username, ip);
      this.log.info({ username, ip }, "sign-in refused: account disabled");
      return { ok: false, status: 403, reason: "This account is disabled. Ask an admin to enable it." };
    }
    this.limiter.succeeded(username, ip);
    const principal = principalOf(user, "password");
    const { login, cookieValue } = this.logins.create(principal, {
      ip,
      credentialTag: credentialTag(user.passwordHash as string),
      ...(input.userAgent !== undefined ? { userAgent: input.userAgent } : {}),
    });
    this.log.info({ username, ip, role: user.role }, "signed in");
    return { ok: true, login, cookieValue, user: principal, mustChangePassword: user.mustChangePassword === true };
  }

  /** Start a login for a user resolved by OIDC (see lib/oidc). */
  startLogin(principal: Principal, meta: { ip?: string; userAgent?: string } = {}): { login: LoginRecord; cookieValue: string } {
    const created = this.logins.create(principal, meta);
    this.log.info({ username: principal.username, ip: meta.ip, role: principal.role, method: principal.authMethod }, "signed in");
    return created;
  }

  /**
   * The signed-in user for a request (headers carry the Cookie), or null.
   * Re-reads the users file: a disabled or deleted account loses its logins.
   */
  async authenticate(headers: HeaderSource): Promise<Authenticated | null> {
    const login = this.logins.get(readLoginCookie(headers));
    if (!login) return null;
    return this.validate(login);
  }

  /**
   * Is a sign-in already in use (an open stream's) still good? The same
   * checks as authenticate() against the current users file, but without
   * counting as activity: an open tab does not keep an idle login alive.
   * Returns the current identity (role changes included), or null when the
   * sign-in has ended.
   */
  async recheck(auth: Authenticated): Promise<Authenticated | null> {
    const login = this.logins.peek(auth.login.key);
    if (!login) return null;
    return this.validate(login);
  }

  /**
   * Be told when any sign-in may have changed: `{ kind: "login", key }` when
   * one login ended or changed here (sign-out, password change, expiry,
   * role seen changed), `{ kind: "users" }` when the users file changed (an
   * admin disabled someone, reset a password or changed a role, from this
   * process or another). While anyone listens the users file is polled every
   * `usersPollMs` (a stat; it is read only when it changed).
   */
  onSignInChange(listener: (change: SignInChange) => void): () => void {
    return this.signInChanges.listen(listener);
  }

  private async validate(login: LoginRecord): Promise<Authenticated | null> {
    const p = login.principal;
    let record: UserRecord | undefined;
    try {
      record = p.ephemeral
        ? p.oidcSubject !== undefined
          ? await this.directory.findByOidcSubject(p.oidcSubject)
          : undefined
        : await this.directory.find(p.username);
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, "users file unavailable");
      return null;
    }
    if (!p.ephemeral && !record) {
      this.logins.destroyForUser(p.username);
      return null;
    }
    if (record?.disabled === true) {
      this.logins.destroyForUser(p.username);
      return null;
    }
    if (p.authMethod === "password" && (record?.passwordHash === undefined || credentialTag(record.passwordHash) !== login.credentialTag)) {
      // The password was changed or removed since this login signed in.
      this.logins.destroy(login);
      return null;
    }
    if (p.ephemeral && record) {
      // An admin linked this OIDC subject to a users-file entry since sign-in:
      // the entry now decides (they sign in again under its username).
      this.logins.destroy(login);
      return null;
    }
    const user: Principal = record ? principalOf(record, p.authMethod, p.oidcSubject) : p;
    this.logins.update(login, { principal: user });
    const out: Authenticated = { login, user, mustChangePassword: record?.mustChangePassword === true };
    if (record?.runtimeToken !== undefined) out.runtimeToken = record.runtimeToken;
    return out;
  }

  whoami(auth: Authenticated): WhoAmI {
    return {
      username: auth.user.username,
      displayName: auth.user.displayName,
      role: auth.user.role,
      participantId: auth.user.participantId,
      authMethod: auth.user.authMethod,
      mustChangePassword: auth.mustChangePassword,
      csrfToken: auth.login.csrfToken,
      sessionEndsAt: this.logins.endsAt(auth.login),
    };
  }

  /** Sign out: destroys the server-side login. Returns the Set-Cookie headers that clear the cookie. */
  logout(headers: HeaderSource, options: { secure: boolean }): string[] {
    const login = this.logins.get(readLoginCookie(headers));
    if (login) {
      this.logins.destroy(login);
      this.log.info({ username: login.principal.username }, "signed out");
    }
    return clearLoginCookies(options);
  }

  /** Set-Cookie for a login created by login/startSession. */
  cookieFor(cookieValue: string, options: { secure: boolean }): string {
    return loginCookie(cookieValue, { secure: options.secure, maxAgeSeconds: this.logins.absoluteMs / 1000 });
  }

  /**
   * Change the signed-in user's own password (also clears mustChangePassword).
   * Other logins of the user are ended; the current one stays.
   */
  async changePassword(auth: Authenticated, current: unknown, next: unknown, ip: string): Promise<ChangePasswordResult> {
    if (typeof current !== "string" || typeof next !== "string") {
      return { ok: false, status: 400, reason: "Enter your current password and a new one." };
    }
    if (auth.user.ephemeral || auth.user.authMethod === "oidc") {
      return { ok: false, status: 403, reason: "You signed in with your identity provider; change your password there." };
    }
    const problem = passwordProblem(next);
    if (problem) return { ok: false, status: 400, reason: problem };
    if (next === current) return { ok: false, status: 400, reason: "Choose a password different from the current one." };
    const username = auth.user.username;
    const limit = this.limiter.check(username, ip);
    if (!limit.allowed) return { ok: false, status: 429, reason: "Too many failed attempts. Try again later." };
    const record = await this.directory.find(username);
    if (!record?.passwordHash || !(await verifyPassword(current, record.passwordHash))) {
      this.limiter.failed(username, ip);
      return { ok: false, status: 401, reason: "Your current password is not correct." };
    }
    const hash = await hashPassword(next, this.scrypt);
    await this.directory.update((data) => {
      const u = data.users.find((x) => x.username === username);
      if (!u) throw new Error(`user ${username} disappeared from the users file`);
      u.passwordHash = hash;
      delete u.mustChangePassword;
    });
    this.logins.destroyForUser(username, auth.login.id);
    this.logins.update(auth.login, { credentialTag: credentialTag(hash) });
    this.log.info({ username }, "password changed");
    return { ok: true };
  }
}

/**
 * An Accounts service from the environment: BATON_USERS_FILE,
 * BATON_SESSION_SECRET (or data/session-secret), BATON_SESSION_IDLE_MINUTES,
 * BATON_SESSION_MAX_HOURS, BATON_LOGINS_FILE or BATON_SESSIONS_FILE (default
 * data/console-sessions.json; `off` = memory only). Logins from the file
 * are restored before it returns.
 */
export async function createAccountsFromEnv(env: Env = process.env, extra: Partial<AccountsOptions> = {}): Promise<Accounts> {
  const minutes = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === "") return undefined;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number (got "${v}")`);
    return n;
  };
  const idle = minutes("BATON_SESSION_IDLE_MINUTES");
  const max = minutes("BATON_SESSION_MAX_HOURS");
  const secretFile = env.BATON_SESSION_SECRET_FILE?.trim();
  const accounts = new Accounts({
    usersFile: usersFilePath(env),
    loginSecret: await loadLoginSecret({ env, ...(secretFile ? { file: secretFile } : {}) }),
    loginsFile: loginsFilePath(env),
    ...(idle !== undefined ? { idleMs: idle * 60_000 } : {}),
    ...(max !== undefined ? { absoluteMs: max * 3_600_000 } : {}),
    ...extra,
  });
  await accounts.restoreLogins();
  return accounts;
}
