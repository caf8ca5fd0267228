// Where to go after signing in: one rule for the browser (the login form's
// redirect and its "Continue" link) and the server (the form post's 303, the
// OIDC login and callback). Pure, no Node-only imports.
//
// Only a path on this console is accepted, and only in the form the browser
// will actually follow: the value is resolved the way a browser resolves a
// Location header (WHATWG URL: dot segments, `%2e`, tabs and newlines
// removed, backslashes as slashes), and the *result* must still be a plain
// path. Checking the raw string alone is not enough: `/.//evil.example`
// passes a "starts with / but not //" test and then normalises to
// `//evil.example`, which a browser follows to another site.

const BASE = "http://return-to.invalid";
export const MAX_RETURN_TO_CHARS = 2048;

/** Pages it makes no sense to return to after signing in. */
function isSignInPage(pathname: string): boolean {
  return pathname === "/login" || pathname.startsWith("/auth/") || pathname === "/account/password";
}

/** A path is safe when it is absolute, not protocol-relative in any spelling, and free of control characters and backslashes. */
function plainPath(s: string): boolean {
  if (!s.startsWith("/") || s.startsWith("//")) return false;
  // Control characters (a browser drops tabs and newlines inside URLs), DEL,
  // backslashes (read as slashes) and spaces have no place in a return path.
  return !/[\u0000-\u0020\u007f\\]/.test(s);
}

/**
 * The normalised same-origin path (with query and fragment) to return to, or
 * "/" when `raw` is anything else: another origin in any spelling, a scheme,
 * control characters, a sign-in page, or longer than 2048 characters.
 */
export function safeReturnTo(raw: unknown): string {
  if (typeof raw !== "string" || raw.length === 0 || raw.length > MAX_RETURN_TO_CHARS) return "/";
  if (!plainPath(raw)) return "/";
  let url: URL;
  try {
    url = new URL(raw, BASE);
  } catch {
    return "/";
  }
  if (url.origin !== BASE) return "/";
  const out = `${url.pathname}${url.search}${url.hash}`;
  // After normalisation the path must still be plain (`/.//x` → `//x` is not).
  if (!plainPath(out) || out.length > MAX_RETURN_TO_CHARS) return "/";
  // And stable: resolving it again gives the same place on the same origin.
  let again: URL;
  try {
    again = new URL(out, BASE);
  } catch {
    return "/";
  }
  if (again.origin !== BASE || `${again.pathname}${again.search}${again.hash}` !== out) return "/";
  if (isSignInPage(url.pathname)) return "/";
  return out;
}
