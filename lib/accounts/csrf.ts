// CSRF protection for requests made with the login cookie: every login has
// a synchronizer token that the browser learns from "whoami" and sends back
// as `x-baton-csrf` on each state-changing request; in addition Origin /
// Sec-Fetch-Site must say the request came from the console itself.
import { timingSafeEqual } from "node:crypto";
import type { Env } from "./env";
import type { LoginRecord } from "./logins";
import { headerValue, isSecureRequest, type HeaderSource, type RequestLike } from "./request";
import { CSRF_HEADER } from "@/lib/views/sign-in";

// The header name is declared once, with the browser side that sends it (lib/views/sign-in.ts).
export { CSRF_HEADER };

export type CsrfResult = { ok: true } | { ok: false; reason: string };

const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

export function isSafeMethod(method: string | undefined): boolean {
  return method !== undefined && SAFE_METHODS.has(method.toUpperCase());
}

/** Normalize an origin ("https://Baton.example:443" → "https://baton.example"); null when not an http(s) origin. */
export function normalizeOrigin(value: string): string | null {
  try {
    const u = new URL(value);
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    return u.origin;
  } catch {
    return null;
  }
}

/**
 * Does the request come from one of the console's own pages? Checks
 * Sec-Fetch-Site (modern browsers) and Origin; requests with neither (old
 * browsers, non-browser clients) pass here and rely on the token check.
 * Use it alone for sign-in, where there is no login yet.
 */
export function checkOrigin(headers: HeaderSource, allowedOrigins: readonly string[]): CsrfResult {
  const site = headerValue(headers, "sec-fetch-site")?.trim().toLowerCase();
  if (site !== undefined && site !== "same-origin") {
    return { ok: false, reason: `cross-site request refused (Sec-Fetch-Site: ${site})` };
  }
  const origin = headerValue(headers, "origin");
  if (origin !== undefined) {
    const normalized = origin.trim() === "null" ? null : normalizeOrigin(origin.trim());
    if (normalized === null) return { ok: false, reason: "request refused: its Origin header is opaque or malformed" };
    const allowed = allowedOrigins.map((o) => normalizeOrigin(o)).filter((o): o is string => o !== null);
    if (!allowed.includes(normalized)) return { ok: false, reason: `request refused: origin ${normalized} is not this console` };
  }
  return { ok: true };
}

/**
 * CSRF check for a state-changing request made with a login cookie:
 * same-origin (see `checkOrigin`) and the login's token in `x-baton-csrf`.
 * Safe methods (GET, HEAD, OPTIONS) pass; never change state on them.
 */
export function checkCsrf(
  request: { method?: string; headers: HeaderSource },
  login: Pick<LoginRecord, "csrfToken"> | undefined,
  options: { allowedOrigins: readonly string[] },
): CsrfResult {
  if (isSafeMethod(request.method)) return { ok: true };
  const origin = checkOrigin(request.headers, options.allowedOrigins);
  if (!origin.ok) return origin;
  if (!login) return { ok: false, reason: "not signed in" };
  const token = headerValue(request.headers, CSRF_HEADER);
  if (token === undefined || token === "") return { ok: false, reason: `missing ${CSRF_HEADER} header` };
  const a = Buffer.from(token, "utf8");
  const b = Buffer.from(login.csrfToken, "utf8");
  if (a.length !== b.length || !timingSafeEqual(a, b))
    return { ok: false, reason: `wrong ${CSRF_HEADER} token (sign in again if this persists)` };
  return { ok: true };
}

/**
 * The console's own origin(s) for Origin checks: BATON_PUBLIC_ORIGIN (comma
 * separated) if set, else the request's Host with http/https per `secure`.
 */
export function allowedOriginsFor(req: RequestLike, env: Env = process.env): string[] {
  const configured = env.BATON_PUBLIC_ORIGIN?.split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (configured && configured.length > 0) return configured;
  const host = headerValue(req.headers, "host")?.trim();
  if (!host) return [];
  return [`${isSecureRequest(req, env) ? "https" : "http"}://${host}`];
}
