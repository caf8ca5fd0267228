// Sign-in with OpenID Connect (authorization code + PKCE S256 + state +
// nonce, discovery), using openid-client v6. Server-side only.
//
//   const oidc = new OidcLogin({ settings, secret, users: accounts.directory });
//   GET /auth/oidc/login     → const { redirectUrl, cookieState } = await oidc.beginLogin({ returnTo });
//                              Set-Cookie: oidcStateCookie(cookieState), 302 to redirectUrl
//   GET /auth/oidc/callback  → const { user, returnTo } = await oidc.completeLogin(req URL, readOidcStateCookie(headers));
//                              accounts.startLogin(user), Set-Cookie session + clearOidcStateCookie, 302 to returnTo
import * as client from "openid-client";
import { OIDC_FAILURE_MESSAGES, type OidcFailure } from "@/lib/views/sign-in-forms";
import type { UserRecord } from "@/lib/accounts/users-file";
import type { Principal } from "@/lib/accounts/logins";
import type { OidcSettings } from "./config";
import { mapOidcUser, type Claims } from "./map-user";
import { safeReturnTo, sealLoginState, unsealLoginState } from "./state";

/**
 * A sign-in that did not work: a code for the sign-in page's URL (the page
 * shows the fixed sentence for it), that sentence, and the detail for the log.
 */
export class OidcLoginError extends Error {
  readonly userMessage: string;
  constructor(
    readonly code: OidcFailure,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${OIDC_FAILURE_MESSAGES[code]} (${detail})`, options);
    this.userMessage = OIDC_FAILURE_MESSAGES[code];
    this.name = "OidcLoginError";
  }
}

export interface OidcLoginOptions {
  settings: OidcSettings;
  /** The session secret: seals the state cookie. */
  secret: Buffer;
  /** Users-file lookup (UserDirectory satisfies it). */
  users: { users(): Promise<readonly UserRecord[]> };
  /** HTTP timeout for requests to the provider, seconds. Default 10. */
  timeoutSeconds?: number;
  now?: () => number;
}

export interface BeginLoginResult {
  /** Send the browser here (302). */
  redirectUrl: string;
  /** Store in the `baton_oidc` cookie (see oidcStateCookie); opaque and sealed. */
  cookieState: string;
}

export interface CompleteLoginResult {
  user: Principal;
  /** Claims from the ID token, completed by the userinfo endpoint. */
  claims: Claims;
  /** Whether a users-file entry matched (by subject or verified email). */
  linked: boolean;
  /** Where to send the browser now: a path on the console. */
  returnTo: string;
}

export class OidcLogin {
  private config: Promise<client.Configuration> | undefined;
  private readonly now: () => number;

  constructor(private readonly options: OidcLoginOptions) {
    this.now = options.now ?? Date.now;
  }

  get settings(): OidcSettings {
    return this.options.settings;
  }

  /** Discover the provider once; a failure is retried on the next sign-in. */
  configuration(): Promise<client.Configuration> {
    if (!this.config) {
      const s = this.options.settings;
      const auth = s.clientSecret !== undefined ? client.ClientSecretBasic(s.clientSecret) : client.None();
      const metadata = s.clientSecret !== undefined ? { client_secret: s.clientSecret } : {};
      this.config = client
        .discovery(s.issuer, s.clientId, metadata, auth, {
          timeout: this.options.timeoutSeconds ?? 10,
          ...(s.allowInsecure ? { execute: [client.allowInsecureRequests] } : {}),
        })
        .catch((e: unknown) => {
          this.config = undefined;
          throw new OidcLoginError("unavailable", `discovery at ${s.issuer.href} failed: ${(e as Error).message}`, { cause: e });
        });
    }
    return this.config;
  }

  async beginLogin(options: { returnTo?: string } = {}): Promise<BeginLoginResult> {
    const config = await this.configuration();
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUrl.href,
      scope: this.settings.scopes.join(" "),
      response_type: "code",
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    const cookieState = sealLoginState(this.options.secret, {
      state,
      nonce,
      codeVerifier,
      returnTo: safeReturnTo(options.returnTo),
      issuedAt: this.now(),
    });
    return { redirectUrl: url.href, cookieState };
  }

  /**
   * Finish the sign-in at the callback. `callbackUrl` is the URL the browser
   * arrived on (only its query is used, against the configured redirect URL,
   * so proxies rewriting the host do not matter); `cookieState` is the
   * `baton_oidc` cookie set by beginLogin.
   */
  async completeLogin(callbackUrl: string | URL, cookieState: string | undefined): Promise<CompleteLoginResult> {
    const saved = cookieState !== undefined ? unsealLoginState(this.options.secret, cookieState, this.now()) : null;
    if (!saved) {
      throw new OidcLoginError("state", "missing, expired or invalid state cookie");
    }
    const incoming = new URL(callbackUrl, this.settings.redirectUrl);
    const current = new URL(this.settings.redirectUrl.href);
    current.search = incoming.search;

    const providerError = current.searchParams.get("error");
    if (providerError !== null) {
      const description = current.searchParams.get("error_description");
      throw new OidcLoginError(
        providerError === "access_denied" ? "cancelled" : "provider",
        `${providerError}${description ? `: ${description}` : ""}`,
      );
    }

    const config = await this.configuration();
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: saved.codeVerifier,
        expectedState: saved.state,
        expectedNonce: saved.nonce,
        idTokenExpected: true,
      });
    } catch (e) {
      throw new OidcLoginError("failed", (e as Error).message, { cause: e });
    }
    const idClaims = tokens.claims();
    if (!idClaims) throw new OidcLoginError("failed", "no ID token in the token response");

    let claims: Claims = { ...idClaims };
    if (config.serverMetadata().userinfo_endpoint !== undefined && tokens.access_token) {
      try {
        const info = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
        // The ID token is signed and checked; it wins where both say something.
        claims = { ...info, ...idClaims };
      } catch {
        // Userinfo is optional: fall back to the ID token's claims.
      }
    }

    const mapped = mapOidcUser(claims, await this.options.users.users(), this.settings);
    if (!mapped.ok) throw new OidcLoginError(mapped.code, `refused subject ${String(idClaims.sub)}`);
    // Checked again: a state sealed before this rule was tightened must not send anyone off-site.
    return { user: mapped.user, claims, linked: mapped.linked, returnTo: safeReturnTo(saved.returnTo) };
  }
}
