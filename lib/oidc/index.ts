// OpenID Connect sign-in for the console. See client.ts for the flow.
export { OidcLogin, OidcLoginError, type BeginLoginResult, type CompleteLoginResult, type OidcLoginOptions } from "./client";
export { OidcConfigError, oidcSettingsFromEnv, type OidcSettings } from "./config";
export { mapOidcUser, roleFromClaims, type Claims, type MapResult } from "./map-user";
export { OIDC_STATE_COOKIE, clearOidcStateCookie, oidcStateCookie, readOidcStateCookie, safeReturnTo } from "./state";
