// Response headers that keep the console's pages from being framed, sniffed,
// leaking their URLs, or running script they did not ship. Set by the
// console's HTTP server (http.ts) on every response, before any route runs:
//
// - pages (everything Next.js serves) get a Content-Security-Policy with a
//   fresh nonce per request: scripts only from the console itself or inline
//   with that nonce (Next.js puts it on its own inline scripts, and the root
//   layout on the theme script), no 'unsafe-inline' or eval for scripts, no
//   plugins, no <base>, forms only to the console, and no framing at all;
// - every other response (sign-in JSON, Connect) gets `default-src 'none'`:
//   nothing in it is meant to be rendered;
// - everywhere: X-Frame-Options DENY (older browsers), nosniff,
//   Referrer-Policy same-origin, and HSTS when the request came over https
//   (directly or, with BATON_TRUST_PROXY=1, through a proxy that says so).
//
// Styles keep 'unsafe-inline': React writes style attributes (virtualized
// lists, table alignment) and they cannot carry a nonce. Style injection
// cannot run script under this policy.
//
// Next.js development mode (npm run dev) needs eval and a websocket for hot
// reloading; the policy allows them there only.
import { randomBytes } from "node:crypto";
import type http from "node:http";
import type { Env } from "@/lib/accounts/env";
import { isSecureRequest } from "@/lib/accounts/request";
import { NONCE_HEADER } from "@/lib/views/nonce-header";

export interface SecurityHeaderOptions {
  env: Env;
  /** Next.js development mode. */
  dev: boolean;
}

const HSTS = "max-age=31536000; includeSubDomains";
const NON_PAGE_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The policy of one page response. */
export function pageContentSecurityPolicy(nonce: string, options: { dev: boolean }): string {
  const script = ["'self'", `'nonce-${nonce}'`, ...(options.dev ? ["'unsafe-eval'"] : [])];
  const connect = ["'self'", ...(options.dev ? ["ws:", "wss:"] : [])];
  return [
    "default-src 'self'",
    `script-src ${script.join(" ")}`,
    "style-src 'self' 'unsafe-inline'",
    // Icons and the favicon; markdown images are never fetched (links instead).
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${connect.join(" ")}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "frame-src 'none'",
    "worker-src 'self'",
  ].join("; ");
}

function encrypted(req: http.IncomingMessage): boolean {
  return (req.socket as { encrypted?: boolean }).encrypted === true;
}

/**
 * Headers every response gets. Returns the nonce when `page` (a request for
 * Next.js), after putting it where Next.js and the layout read it.
 */
export function applySecurityHeaders(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  options: SecurityHeaderOptions,
  page: boolean,
): string | null {
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("referrer-policy", "same-origin");
  res.setHeader("x-frame-options", "DENY");
  if (isSecureRequest({ headers: req.headers, encrypted: encrypted(req) }, options.env)) res.setHeader("strict-transport-security", HSTS);
  if (!page) {
    res.setHeader("content-security-policy", NON_PAGE_CSP);
    return null;
  }
  const nonce = randomBytes(18).toString("base64");
  const csp = pageContentSecurityPolicy(nonce, { dev: options.dev });
  res.setHeader("content-security-policy", csp);
  // Next.js reads the nonce from the request's CSP and puts it on every
  // script it renders; the root layout reads NONCE_HEADER for its own.
  req.headers["content-security-policy"] = csp;
  req.headers[NONCE_HEADER] = nonce;
  delete req.headers["content-security-policy-report-only"];
  return nonce;
}
