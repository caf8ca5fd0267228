// Signed-out page visits: when reads need sign-in (BATON_REQUIRE_SIGN_IN, on
// by default), a browser opening a console page without a session is sent to
// /login?returnTo=<the page>, before any HTML is rendered. Only full document
// navigations are redirected; Next.js's own data requests (RSC, prefetch) and
// assets pass, and the browser's sign-in check (useWhoAmI) handles a session
// that ends while a page is open. Data in pages is checked where it is read:
// Connect calls check the session themselves, and the one page rendered with
// data on the server (a session's first view, lib/server/page-data.ts) applies
// the same sign-in rule before reading, RSC requests included.
import type { IncomingHttpHeaders } from "node:http";

/** Paths anyone may open: the sign-in page, Next.js assets, /auth/*, icons. */
const PUBLIC_PREFIXES = ["/_next/", "/auth/", "/favicon"];
const PUBLIC_EXACT = new Set(["/login", "/robots.txt"]);

function header(headers: IncomingHttpHeaders, name: string): string {
  const v = headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? "";
}

/** A top-level page load (not an asset, an RSC payload or a prefetch). */
export function isDocumentNavigation(method: string, url: URL, headers: IncomingHttpHeaders): boolean {
  if (method !== "GET" && method !== "HEAD") return false;
  if (header(headers, "rsc") !== "" || url.searchParams.has("_rsc")) return false;
  if (header(headers, "next-router-prefetch") !== "" || header(headers, "purpose") === "prefetch") return false;
  const dest = header(headers, "sec-fetch-dest");
  if (dest !== "") return dest === "document";
  return header(headers, "accept").includes("text/html");
}

export function isPublicPath(pathname: string): boolean {
  return PUBLIC_EXACT.has(pathname) || PUBLIC_PREFIXES.some((p) => pathname.startsWith(p));
}

/**
 * Where to send a signed-out visitor, or null to serve the request as is.
 * `rawUrl` is the request's path and query.
 */
export function signInRedirect(method: string, rawUrl: string, headers: IncomingHttpHeaders): string | null {
  let url: URL;
  try {
    url = new URL(rawUrl, "http://console.invalid");
  } catch {
    return null;
  }
  if (isPublicPath(url.pathname) || !isDocumentNavigation(method.toUpperCase(), url, headers)) return null;
  const back = `${url.pathname}${url.search}`;
  return back === "/" ? "/login" : `/login?${new URLSearchParams({ returnTo: back }).toString()}`;
}
