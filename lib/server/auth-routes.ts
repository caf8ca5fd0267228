// Sign-in over plain HTTP, handled by the console server before Connect and
// Next.js (OIDC needs browser redirects, and a sign-in form should work
// without JavaScript):
//
//   POST /auth/login          {username, password} as JSON or a form → login cookie
//   POST /auth/logout         ends the login (CSRF token required)
//   GET  /auth/whoami         the signed-in user and their CSRF token; 401 when signed out
//   POST /auth/password       {currentPassword, newPassword} (CSRF token required)
//   GET  /auth/methods        which sign-in methods are on: {password, oidc}, and
//                             whether reading needs sign-in: {signInRequired}
//   GET  /auth/oidc/login?returnTo=/path   → 302 to the identity provider
//   GET  /auth/oidc/callback  the provider's redirect back → login cookie, 302 to returnTo
//
// JSON requests get JSON answers; a form post (no JavaScript) gets a 303
// redirect: to returnTo on success, to /login?error=<code>&returnTo=… on
// failure (OIDC failures add reason=<code>; no free text ever goes in the
// URL). Never logs passwords, cookies or tokens.
import type http from "node:http";
import type { Accounts, Authenticated } from "@/lib/accounts/accounts";
import { clientAddress } from "@/lib/accounts/client-address";
import type { Env } from "@/lib/accounts/env";
import { allowedOriginsFor, checkCsrf, checkOrigin } from "@/lib/accounts/csrf";
import { readLoginCookie } from "@/lib/accounts/login-cookie";
import { headerValue, isSecureRequest } from "@/lib/accounts/request";
import { OidcLoginError, clearOidcStateCookie, oidcStateCookie, readOidcStateCookie, safeReturnTo, type OidcLogin } from "@/lib/oidc";
import type { GatewayLogger } from "@/lib/gateway/logger";

export const AUTH_PREFIX = "/auth/";
const MAX_BODY_BYTES = 16 * 1024;

export interface AuthRoutesOptions {
  accounts: Accounts;
  /** The OIDC sign-in, or null when BATON_OIDC_ISSUER is unset. Read on each request. */
  oidc: () => OidcLogin | null;
  /** Reads need sign-in (BATON_REQUIRE_SIGN_IN); reported by /auth/methods so pages know to send signed-out people to /login. */
  signInRequired?: boolean;
  env: Env;
  logger: GatewayLogger;
}

type Req = http.IncomingMessage;
type Res = http.ServerResponse;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Short code for form redirects (/login?error=…). */
    readonly code: string,
  ) {
    super(message);
  }
}

function encrypted(req: Req): boolean {
  return (req.socket as { encrypted?: boolean }).encrypted === true;
}

function secure(req: Req, env: Env): boolean {
  return isSecureRequest({ headers: req.headers, encrypted: encrypted(req) }, env);
}

function allowedOrigins(req: Req, env: Env): string[] {
  return allowedOriginsFor({ headers: req.headers, encrypted: encrypted(req) }, env);
}

/** The client's address: the TCP peer, or behind trusted proxies the X-Forwarded-For entry they wrote (client-address.ts). */
function clientIp(req: Req, env: Env): string {
  return clientAddress({ remoteAddress: req.socket.remoteAddress, headers: req.headers }, env);
}

/** A JSON answer that is never cached (also used by status-routes.ts). */
export function send(res: Res, status: number, body: unknown, cookies: string[] = [], extra: Record<string, string> = {}): void {
  const text = body === null ? "" : `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    ...(body === null ? {} : { "content-type": "application/json; charset=utf-8" }),
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    ...(cookies.length > 0 ? { "set-cookie": cookies } : {}),
    ...extra,
  });
  res.end(text);
}

function redirect(res: Res, status: 302 | 303, location: string, cookies: string[] = []): void {
  res.writeHead(status, {
    location,
    "cache-control": "no-store",
    ...(cookies.length > 0 ? { "set-cookie": cookies } : {}),
  });
  res.end();
}

function isForm(req: Req): boolean {
  const type = headerValue(req.headers, "content-type")?.split(";")[0]?.trim().toLowerCase();
  return type === "application/x-www-form-urlencoded" || type === "multipart/form-data";
}

/** A form post from a page without JavaScript: answer with redirects, not JSON. */
function wantsRedirect(req: Req): boolean {
  return isForm(req) && !(headerValue(req.headers, "accept") ?? "").includes("application/json");
}

async function readBody(req: Req): Promise<Record<string, unknown>> {
  const type = headerValue(req.headers, "content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, "The request is too large.", "bad_request");
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (type === "application/json") {
    let parsed: unknown;
    try {
      parsed = text.trim() === "" ? {} : JSON.parse(text);
    } catch {
      throw new HttpError(400, "The request body is not valid JSON.", "bad_request");
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new HttpError(400, "The request body must be a JSON object.", "bad_request");
    }
    return parsed as Record<string, unknown>;
  }
  if (type === "application/x-www-form-urlencoded") return Object.fromEntries(new URLSearchParams(text));
  throw new HttpError(415, "Send JSON (application/json) or a form (application/x-www-form-urlencoded).", "bad_request");
}

/** /login with an error code (and for OIDC failures a reason code): only codes, never sentences, so the page never prints text from its URL. */
function loginErrorLocation(code: string, returnTo: string, reason?: string): string {
  const q = new URLSearchParams({ error: code });
  if (reason !== undefined) q.set("reason", reason);
  if (returnTo !== "/") q.set("returnTo", returnTo);
  return `/login?${q.toString()}`;
}

const LOGIN_CODES: Record<number, string> = { 400: "bad_request", 401: "invalid", 403: "disabled", 429: "throttled", 503: "unavailable" };

/**
 * A request listener for /auth/*. Returns false for other paths (the caller
 * passes them on). Errors are answered here; nothing is thrown.
 */
export function createAuthRoutes(options: AuthRoutesOptions): (req: Req, res: Res) => boolean {
  const { accounts, env, logger } = options;

  async function login(req: Req, res: Res): Promise<void> {
    const form = wantsRedirect(req);
    let returnTo = "/";
    try {
      const origin = checkOrigin(req.headers, allowedOrigins(req, env));
      if (!origin.ok) throw new HttpError(403, `Sign-in refused: ${origin.reason}.`, "cross_site");
      const body = await readBody(req);
      returnTo = safeReturnTo(body.returnTo);
      const userAgent = headerValue(req.headers, "user-agent");
      const result = await accounts.login({
        username: body.username,
        password: body.password,
        ip: clientIp(req, env),
        ...(userAgent !== undefined ? { userAgent } : {}),
      });
      if (!result.ok) {
        const extra: Record<string, string> =
          result.retryAfterMs !== undefined ? { "retry-after": String(Math.ceil(result.retryAfterMs / 1000)) } : {};
        if (form) return redirect(res, 303, loginErrorLocation(LOGIN_CODES[result.status] ?? "invalid", returnTo));
        return send(res, result.status, { error: result.reason }, [], extra);
      }
      // A new sign-in replaces whatever login this browser had.
      const previous = accounts.logins.get(readLoginCookie(req.headers));
      if (previous) accounts.logins.destroy(previous);
      const cookie = accounts.cookieFor(result.cookieValue, { secure: secure(req, env) });
      if (form) return redirect(res, 303, returnTo, [cookie]);
      const auth: Authenticated = { login: result.login, user: result.user, mustChangePassword: result.mustChangePassword };
      send(res, 200, accounts.whoami(auth), [cookie]);
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      if (form) return redirect(res, 303, loginErrorLocation(e.code, returnTo));
      send(res, e.status, { error: e.message });
    }
  }

  async function logout(req: Req, res: Res): Promise<void> {
    const isSecure = secure(req, env);
    const login = accounts.logins.get(readLoginCookie(req.headers));
    const check = login
      ? checkCsrf({ method: "POST", headers: req.headers }, login, { allowedOrigins: allowedOrigins(req, env) })
      : checkOrigin(req.headers, allowedOrigins(req, env));
    if (!check.ok) return send(res, 403, { error: `Sign-out refused: ${check.reason}.` });
    const cookies = accounts.logout(req.headers, { secure: isSecure });
    if (wantsRedirect(req)) return redirect(res, 303, "/login", cookies);
    send(res, 200, { ok: true }, cookies);
  }

  async function whoami(req: Req, res: Res): Promise<void> {
    const auth = await accounts.authenticate(req.headers);
    if (!auth) return send(res, 401, { error: "Not signed in." });
    send(res, 200, accounts.whoami(auth));
  }

  async function changePassword(req: Req, res: Res): Promise<void> {
    const auth = await accounts.authenticate(req.headers);
    if (!auth) return send(res, 401, { error: "Not signed in." });
    const csrf = checkCsrf({ method: "POST", headers: req.headers }, auth.login, { allowedOrigins: allowedOrigins(req, env) });
    if (!csrf.ok) return send(res, 403, { error: `Request refused: ${csrf.reason}.` });
    let body: Record<string, unknown>;
    try {
      body = await readBody(req);
    } catch (e) {
      if (e instanceof HttpError) return send(res, e.status, { error: e.message });
      throw e;
    }
    const result = await accounts.changePassword(auth, body.currentPassword, body.newPassword, clientIp(req, env));
    if (!result.ok) return send(res, result.status, { error: result.reason });
    auth.mustChangePassword = false;
    send(res, 200, accounts.whoami(auth));
  }

  async function oidcLogin(req: Req, res: Res, url: URL): Promise<void> {
    const oidc = options.oidc();
    if (!oidc) return send(res, 404, { error: "Sign-in with an identity provider is not configured (BATON_OIDC_ISSUER)." });
    const returnTo = safeReturnTo(url.searchParams.get("returnTo") ?? "/");
    try {
      const begun = await oidc.beginLogin({ returnTo });
      redirect(res, 302, begun.redirectUrl, [oidcStateCookie(begun.cookieState, { secure: secure(req, env) })]);
    } catch (e) {
      if (!(e instanceof OidcLoginError)) throw e;
      logger.warn({ detail: e.detail }, "OIDC sign-in could not start");
      redirect(res, 302, loginErrorLocation("oidc", returnTo, e.code));
    }
  }

  async function oidcCallback(req: Req, res: Res): Promise<void> {
    const oidc = options.oidc();
    if (!oidc) return send(res, 404, { error: "Sign-in with an identity provider is not configured (BATON_OIDC_ISSUER)." });
    const isSecure = secure(req, env);
    const clearState = clearOidcStateCookie({ secure: isSecure });
    try {
      const done = await oidc.completeLogin(req.url ?? "/", readOidcStateCookie(req.headers));
      const previous = accounts.logins.get(readLoginCookie(req.headers));
      if (previous) accounts.logins.destroy(previous);
      const userAgent = headerValue(req.headers, "user-agent");
      const { cookieValue } = accounts.startLogin(done.user, {
        ip: clientIp(req, env),
        ...(userAgent !== undefined ? { userAgent } : {}),
      });
      redirect(res, 302, done.returnTo, [accounts.cookieFor(cookieValue, { secure: isSecure }), clearState]);
    } catch (e) {
      if (!(e instanceof OidcLoginError)) throw e;
      logger.warn({ detail: e.detail }, "OIDC sign-in failed");
      redirect(res, 302, loginErrorLocation("oidc", "/", e.code), [clearState]);
    }
  }

  type Handler = (req: Req, res: Res, url: URL) => Promise<void>;
  const routes: Record<string, { method: "GET" | "POST"; run: Handler }> = {
    "/auth/login": { method: "POST", run: login },
    "/auth/logout": { method: "POST", run: logout },
    "/auth/whoami": { method: "GET", run: whoami },
    "/auth/password": { method: "POST", run: changePassword },
    "/auth/methods": {
      method: "GET",
      run: async (_req, res) =>
        send(res, 200, { password: true, oidc: options.oidc() !== null, signInRequired: options.signInRequired === true }),
    },
    "/auth/oidc/login": { method: "GET", run: oidcLogin },
    "/auth/oidc/callback": { method: "GET", run: oidcCallback },
  };

  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://console.invalid");
    if (!url.pathname.startsWith(AUTH_PREFIX)) return false;
    const route = routes[url.pathname];
    if (!route) {
      send(res, 404, { error: `No such sign-in endpoint: ${url.pathname}` });
      return true;
    }
    const method = (req.method ?? "GET").toUpperCase();
    if (method !== route.method && !(route.method === "GET" && method === "HEAD")) {
      send(res, 405, { error: `Use ${route.method} for ${url.pathname}.` }, [], { allow: route.method });
      return true;
    }
    route.run(req, res, url).catch((err: unknown) => {
      logger.error({ err, path: url.pathname }, "sign-in endpoint failed");
      if (!res.headersSent) send(res, 500, { error: "Internal error." });
      else res.destroy();
    });
    return true;
  };
}
