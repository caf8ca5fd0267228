// The account service's public types: its options and logger, the signed-in
// user for a request, sign-in and password-change results, and sign-in change
// events. Re-exported by accounts.ts (the service itself).
import type { LoginLimiterOptions } from "./rate-limit";
import type { ScryptParams } from "./password";
import type { LoginRecord, Principal } from "./logins";

/** Minimal structured logger (pino-compatible). */
export interface AccountsLogger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
}

export interface AccountsOptions {
  usersFile: string;
  /** HMAC key for login cookies; see loadLoginSecret. */
  loginSecret: Buffer;
  /** scrypt cost for new hashes and for the unknown-user decoy. Default N=2^15, r=8, p=1. */
  scrypt?: ScryptParams;
  idleMs?: number;
  absoluteMs?: number;
  limits?: LoginLimiterOptions;
  logger?: AccountsLogger;
  now?: () => number;
  /**
   * Keep sign-ins in this file so they survive a restart (see
   * login-file.ts); call restoreLogins() before serving. Unset or null:
   * memory only.
   */
  loginsFile?: string | null;
  /** How often the users file is checked for changes while sign-in watchers listen (onSignInChange). Default 1 s. */
  usersPollMs?: number;
}

/** See Accounts.onSignInChange. */
export type SignInChange = { kind: "login"; key: string; ended: boolean } | { kind: "users" };

/** The signed-in user for one request. */
export interface Authenticated {
  login: LoginRecord;
  /** Current identity: re-read from the users file unless the user exists only through OIDC. */
  user: Principal;
  /** True until the user replaces a one-time password; allow only whoami, changePassword and logout. */
  mustChangePassword: boolean;
  /** The user's runtime bearer token from the users file, if any (server-side only: never send it to the browser). */
  runtimeToken?: string;
}

/** What the browser learns about itself: one declaration, shared with the browser (lib/views/sign-in.ts). */
export type { WhoAmI } from "@/lib/views/sign-in";

export type LoginResult =
  | { ok: true; login: LoginRecord; cookieValue: string; user: Principal; mustChangePassword: boolean }
  | { ok: false; status: 400 | 401 | 403 | 429 | 503; reason: string; retryAfterMs?: number };

export type ChangePasswordResult = { ok: true } | { ok: false; status: 400 | 401 | 403 | 429; reason: string };
