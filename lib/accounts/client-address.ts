// The address a request came from, for sign-in limits and the sign-in log.
//
// Without a proxy (the default) it is the TCP peer. Behind reverse proxies
// (BATON_TRUST_PROXY=1) each proxy appends the address it received the
// request from to X-Forwarded-For, so only the entries those proxies wrote can
// be believed: with N trusted hops (BATON_TRUSTED_PROXY_HOPS, default 1) the
// client is the N-th entry from the right. Everything to its left was written
// by the client itself and is ignored: taking the leftmost entry would let
// anyone pick a new "address" on every request.
import net from "node:net";
import type { Env } from "./env";
import { headerValue, type HeaderSource } from "./request";

export const MAX_TRUSTED_PROXY_HOPS = 10;

export class ProxyConfigError extends Error {
  override name = "ProxyConfigError";
}

/** Trusted proxy hops in front of the console: 0 unless BATON_TRUST_PROXY=1, then BATON_TRUSTED_PROXY_HOPS (default 1). */
export function trustedProxyHops(env: Env): number {
  if (env.BATON_TRUST_PROXY !== "1") {
    const raw = env.BATON_TRUST_PROXY?.trim();
    if (raw !== undefined && raw !== "" && raw !== "0")
      throw new ProxyConfigError(`BATON_TRUST_PROXY must be 1 or 0, got "${env.BATON_TRUST_PROXY}"`);
    return 0;
  }
  const raw = env.BATON_TRUSTED_PROXY_HOPS?.trim();
  if (raw === undefined || raw === "") return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_TRUSTED_PROXY_HOPS) {
    throw new ProxyConfigError(
      `BATON_TRUSTED_PROXY_HOPS must be an integer between 1 and ${MAX_TRUSTED_PROXY_HOPS}, got "${env.BATON_TRUSTED_PROXY_HOPS}"`,
    );
  }
  return n;
}

/** "203.0.113.7", "[2001:db8::1]:443", "203.0.113.7:5123" → the bare address, or null when it is not an IP address. */
function bareIp(entry: string): string | null {
  let s = entry.trim();
  if (s.startsWith("[")) {
    const end = s.indexOf("]");
    if (end < 0) return null;
    s = s.slice(1, end);
  } else if (/^\d{1,3}(\.\d{1,3}){3}:\d+$/.test(s)) {
    s = s.slice(0, s.lastIndexOf(":"));
  }
  return net.isIP(s) !== 0 ? s.toLowerCase() : null;
}

/**
 * The client's address. `remoteAddress` is the TCP peer (`req.socket.remoteAddress`).
 * An X-Forwarded-For entry that is not an IP address is not believed: the
 * request is then counted under the proxy's own address.
 */
export function clientAddress(req: { remoteAddress: string | undefined; headers: HeaderSource }, env: Env): string {
  const peer = req.remoteAddress ?? "unknown";
  const hops = trustedProxyHops(env);
  if (hops === 0) return peer;
  const forwarded = headerValue(req.headers, "x-forwarded-for");
  if (forwarded === undefined) return peer;
  const entries = forwarded
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e !== "");
  if (entries.length === 0) return peer;
  // Fewer entries than hops: the request entered behind the outermost proxy,
  // and every entry there was written by a trusted one.
  const chosen = entries[Math.max(0, entries.length - hops)] as string;
  return bareIp(chosen) ?? peer;
}
