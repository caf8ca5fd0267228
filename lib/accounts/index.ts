// Console accounts: the server-side API the gateway uses. See README.md here.
export { Accounts, createAccountsFromEnv, type AccountsLogger, type AccountsOptions, type Authenticated, type ChangePasswordResult, type LoginResult, type SignInChange, type WhoAmI } from "./accounts";
export { UserDirectory } from "./directory";
export type { Env } from "./env";
export { DEFAULT_SCRYPT, TEST_SCRYPT, generatePassword, hashPassword, passwordProblem, verifyPassword, type ScryptParams } from "./password";
export { LoginLimiter, SlidingWindow } from "./rate-limit";
export { SessionFile, sessionsFilePath, type SessionFileLoad, type SessionFileOptions } from "./login-file";
export {
  CSRF_HEADER,
  SessionStore,
  allowedOriginsFor,
  checkCsrf,
  checkOrigin,
  clearSessionCookies,
  isSafeMethod,
  isSecureRequest,
  loadSessionSecret,
  readSessionCookie,
  sessionCookie,
  sessionKey,
  type CsrfResult,
  type HeaderSource,
  type Principal,
  type RequestLike,
  type SessionRecord,
  type StoredSession,
} from "./logins";
export {
  UsersFileError,
  bootstrapMessage,
  ensureBootstrapAdmin,
  readUsersFile,
  usersFilePath,
  usersFilePermissionWarning,
  type BootstrapResult,
  type UserRecord,
  type UsersFile,
} from "./users-file";
