// Reading a request on the server, whatever its shape (Node's
// IncomingMessage, a fetch Request, a plain map): header values, cookies,
// and whether it came over https.
import type { Env } from "./env";

/** Node's IncomingHttpHeaders, a fetch Headers, or a plain map. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export function headerValue(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const map = headers as Record<string, string | string[] | undefined>;
  const v = map[name.toLowerCase()];
  return Array.isArray(v) ? v.join(", ") : v;
}

/** Value of a cookie in a Cookie header. */
export function readCookie(cookieHeader: string | undefined, name: string): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const raw = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

export interface RequestLike {
  headers: HeaderSource;
  /** true for TLS connections (e.g. `req.socket.encrypted` in Node). */
  encrypted?: boolean;
  /** Full request URL if known (fetch Request.url). */
  url?: string;
}

/**
 * Whether cookies for this request get `Secure`: TLS, BATON_COOKIE_SECURE=1,
 * or `x-forwarded-proto: https` behind a trusted proxy (BATON_TRUST_PROXY=1).
 */
export function isSecureRequest(req: RequestLike, env: Env = process.env): boolean {
  if (env.BATON_COOKIE_SECURE === "1") return true;
  if (req.encrypted === true) return true;
  if (req.url?.startsWith("https://")) return true;
  if (env.BATON_TRUST_PROXY === "1") {
    const proto = headerValue(req.headers, "x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
    if (proto === "https") return true;
  }
  return false;
}
