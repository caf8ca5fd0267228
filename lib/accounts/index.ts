// Console accounts: the server-side API the gateway uses. See README.md here.
export {
  Accounts,
  createAccountsFromEnv,
  type AccountsLogger,
  type AccountsOptions,
  type Authenticated,
  type ChangePasswordResult,
  type LoginResult,
  type SignInChange,
  type WhoAmI,
} from "./accounts";
export { UserDirectory } from "./directory";
export type { Env } from "./env";
export {
  DEFAULT_SCRYPT,
  TEST_SCRYPT,
  generatePassword,
  hashPassword,
  passwordProblem,
  verifyPassword,
  type ScryptParams,
} from "./password";
export { LoginLimiter, SlidingWindow } from "./rate-limit";
export { LoginFile, loginsFilePath, type LoginFileLoad, type LoginFileOptions } from "./login-file";
export { clearLoginCookies, loadLoginSecret, loginCookie, loginKey, readLoginCookie } from "./login-cookie";
export { LoginStore, type LoginRecord, type Principal, type StoredLogin } from "./logins";
export { CSRF_HEADER, allowedOriginsFor, checkCsrf, checkOrigin, isSafeMethod, type CsrfResult } from "./csrf";
export { isSecureRequest, type HeaderSource, type RequestLike } from "./request";
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
