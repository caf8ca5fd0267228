// The short-lived sign-in state kept in the browser between "go to the
// identity provider" and "back at the callback": state, nonce, PKCE verifier
// and where to return. Sealed with AES-256-GCM under a key derived from the
// session secret, so it can be neither read nor forged, and it expires.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { headerValue, readCookie, type HeaderSource } from "@/lib/accounts/request";
import { safeReturnTo } from "@/lib/views/return-to";

export const OIDC_STATE_COOKIE = "baton_oidc";
export const OIDC_STATE_TTL_MS = 10 * 60_000;

export interface LoginState {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Relative path to return to after sign-in. */
  returnTo: string;
  /** When the sign-in began (Unix ms). */
  issuedAt: number;
}

function keyFor(secret: Buffer): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), "baton oidc login state v1", 32));
}

export function sealLoginState(secret: Buffer, state: LoginState): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyFor(secret), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(state), "utf8"), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
}

/** The sealed state, or null when tampered with, sealed under another secret, malformed or expired. */
export function unsealLoginState(secret: Buffer, sealed: string, now: number = Date.now()): LoginState | null {
  if (sealed.length > 4096 || !/^[A-Za-z0-9_-]+$/.test(sealed)) return null;
  const raw = Buffer.from(sealed, "base64url");
  if (raw.length < 12 + 16 + 2) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyFor(secret), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    const text = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString("utf8");
    const v = JSON.parse(text) as Partial<LoginState>;
    if (
      typeof v.state !== "string" ||
      typeof v.nonce !== "string" ||
      typeof v.codeVerifier !== "string" ||
      typeof v.returnTo !== "string" ||
      typeof v.issuedAt !== "number"
    ) {
      return null;
    }
    if (now - v.issuedAt > OIDC_STATE_TTL_MS || v.issuedAt - now > 60_000) return null;
    return { state: v.state, nonce: v.nonce, codeVerifier: v.codeVerifier, returnTo: v.returnTo, issuedAt: v.issuedAt };
  } catch {
    return null;
  }
}

/**
 * A safe place to return to after sign-in: a normalised path on this console,
 * never another site in any spelling; anything else is "/". The same rule as
 * the browser's (lib/views/return-to.ts).
 */
export { safeReturnTo };

/** Set-Cookie for the sealed state: HttpOnly, SameSite=Lax (the callback is a top-level GET), 10 minutes. */
export function oidcStateCookie(sealed: string, options: { secure: boolean }): string {
  const attrs = [`${OIDC_STATE_COOKIE}=${sealed}`, "Path=/", "HttpOnly", "SameSite=Lax", `Max-Age=${OIDC_STATE_TTL_MS / 1000}`];
  if (options.secure) attrs.push("Secure");
  return attrs.join("; ");
}

export function clearOidcStateCookie(options: { secure: boolean }): string {
  return [`${OIDC_STATE_COOKIE}=`, "Path=/", "HttpOnly", "SameSite=Lax", "Max-Age=0", ...(options.secure ? ["Secure"] : [])].join("; ");
}

export function readOidcStateCookie(headers: HeaderSource): string | undefined {
  return readCookie(headerValue(headers, "cookie"), OIDC_STATE_COOKIE);
}
