// The browser's side of signing in: the /auth/* endpoints of the console
// server (lib/server/auth-routes.ts), with every answer validated before use,
// and the sentences people see. Pure functions plus thin fetch wrappers.

import { isRole, type Role } from "@/lib/authz/roles";
import { safeReturnTo } from "@/lib/views/return-to";

/** GET /auth/whoami: what the browser learns about itself. The one declaration: lib/accounts answers with it. */
export interface WhoAmI {
  username: string;
  displayName: string;
  role: Role;
  participantId: string;
  authMethod: "password" | "oidc";
  mustChangePassword: boolean;
  /** Sent back as `x-baton-csrf` on every state-changing request. */
  csrfToken: string;
  /** When this console sign-in (a login, not a MACP session) ends, Unix ms; 0 when unknown. */
  sessionEndsAt: number;
}

/** GET /auth/methods. */
export interface AuthMethods {
  password: boolean;
  oidc: boolean;
  /** Reading sessions needs sign-in (BATON_REQUIRE_SIGN_IN, on by default). */
  signInRequired: boolean;
}

/** The header that carries the CSRF token: sent by the browser, checked by lib/accounts/csrf.ts. */
export const CSRF_HEADER = "x-baton-csrf";
/** Assumed until /auth/methods answers: the server's default. */
export const DEFAULT_METHODS: AuthMethods = Object.freeze({ password: true, oidc: false, signInRequired: true });

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): v is string => typeof v === "string";

export function parseWhoAmI(json: unknown): WhoAmI | null {
  if (!isObj(json)) return null;
  const { username, displayName, role, participantId, authMethod, mustChangePassword, csrfToken, sessionEndsAt } = json;
  if (
    !str(username) ||
    username === "" ||
    !str(displayName) ||
    !isRole(role) ||
    !str(participantId) ||
    !str(csrfToken) ||
    csrfToken === ""
  ) {
    return null;
  }
  return {
    username,
    displayName: displayName || username,
    role,
    participantId,
    authMethod: authMethod === "oidc" ? "oidc" : "password",
    mustChangePassword: mustChangePassword === true,
    csrfToken,
    sessionEndsAt: typeof sessionEndsAt === "number" && Number.isFinite(sessionEndsAt) ? sessionEndsAt : 0,
  };
}

export function parseAuthMethods(json: unknown): AuthMethods {
  if (!isObj(json)) return DEFAULT_METHODS;
  return {
    password: json.password !== false,
    oidc: json.oidc === true,
    signInRequired: json.signInRequired !== false,
  };
}

/**
 * A same-site path to return to after signing in, or "/" (lib/views/return-to.ts:
 * the one rule the server applies too).
 */
export { safeReturnTo };

export function loginHref(returnTo: string, extra: Record<string, string> = {}): string {
  const back = safeReturnTo(returnTo);
  const q = new URLSearchParams(extra);
  if (back !== "/") q.set("returnTo", back);
  const qs = q.toString();
  return qs ? `/login?${qs}` : "/login";
}

export function changePasswordHref(returnTo: string): string {
  const back = safeReturnTo(returnTo);
  return back === "/" ? "/account/password" : `/account/password?${new URLSearchParams({ returnTo: back }).toString()}`;
}

export function oidcLoginHref(returnTo: string): string {
  return `/auth/oidc/login?${new URLSearchParams({ returnTo: safeReturnTo(returnTo) }).toString()}`;
}

export const ROLE_LABELS: Readonly<Record<Role, string>> = Object.freeze({
  viewer: "Viewer",
  operator: "Operator",
  approver: "Approver",
  admin: "Admin",
});

/** "AN" for "Alice Ng", "B" for "bob". */
export function initials(displayName: string): string {
  const parts = displayName.trim().split(/\s+/).filter(Boolean);
  const letters = parts.length > 1 ? [parts[0], parts[parts.length - 1]] : parts;
  return letters.map((p) => (p ?? "").charAt(0).toUpperCase()).join("") || "?";
}

// ------------------------------------------------------------------ fetches

export class AuthRequestError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "AuthRequestError";
  }
}

/** The console's refusal as an AuthRequestError: its `error` sentence, or `fallback`. */
export async function errorOf(res: Response, fallback: string): Promise<AuthRequestError> {
  let message = fallback;
  try {
    const body: unknown = await res.json();
    if (isObj(body) && str(body.error) && body.error !== "") message = body.error;
  } catch {
    // not JSON: keep the fallback
  }
  return new AuthRequestError(message, res.status);
}

export const JSON_HEADERS = { "content-type": "application/json", accept: "application/json" };

/** The signed-in user, or null when signed out. Throws on network errors and unexpected answers. */
export async function fetchWhoAmI(signal?: AbortSignal): Promise<WhoAmI | null> {
  const res = await fetch("/auth/whoami", {
    credentials: "same-origin",
    cache: "no-store",
    headers: { accept: "application/json" },
    signal,
  });
  // 404: a console started without accounts has no /auth/* at all.
  if (res.status === 401 || res.status === 404) return null;
  if (!res.ok) throw await errorOf(res, `The console answered ${res.status} to /auth/whoami.`);
  const me = parseWhoAmI(await res.json());
  if (!me) throw new AuthRequestError("The console's answer to /auth/whoami is not understood.", res.status);
  return me;
}

export async function fetchAuthMethods(signal?: AbortSignal): Promise<AuthMethods> {
  const res = await fetch("/auth/methods", {
    credentials: "same-origin",
    cache: "no-store",
    headers: { accept: "application/json" },
    signal,
  });
  if (res.status === 404) return { password: false, oidc: false, signInRequired: false };
  if (!res.ok) return DEFAULT_METHODS;
  return parseAuthMethods(await res.json());
}

export async function postLogout(csrfToken: string): Promise<void> {
  const res = await fetch("/auth/logout", {
    method: "POST",
    credentials: "same-origin",
    headers: { ...JSON_HEADERS, [CSRF_HEADER]: csrfToken },
    body: "{}",
  });
  if (!res.ok) throw await errorOf(res, "Sign-out failed. Try again.");
}

// ------------------------------------------------------------ page access

export type GateDecision = { kind: "show" } | { kind: "wait" } | { kind: "redirect"; to: string };

/** Pages anyone may open, signed in or not. */
const PUBLIC_PAGES = new Set(["/login"]);
/** Pages for signed-in people only, even when reads are open (they act). */
const ACCOUNT_PAGES = ["/inbox", "/sessions/new", "/admin", "/account/password"];

function needsAccount(pathname: string): boolean {
  return ACCOUNT_PAGES.some((p) => pathname === p || pathname.startsWith(`${p}/`));
}

/**
 * Account pages whose server render is made for the person the server found
 * signed in (the inbox's first view): shown while the browser's own check
 * runs, when the server said so, instead of "Checking your sign-in…".
 */
const SERVER_CHECKED_PAGES = new Set(["/inbox"]);

/**
 * What a page does with the sign-in state: show itself, wait for the answer,
 * or send the person to /login (signed out) or /account/password (one-time
 * password still to change). `me` undefined = not known yet.
 */
export function gateDecision(input: {
  pathname: string;
  search: string;
  me: WhoAmI | null | undefined;
  methods: AuthMethods | undefined;
  /** The server found this page's request signed in (by someone past a one-time password). */
  serverSignedIn?: boolean;
}): GateDecision {
  const { pathname, me } = input;
  if (PUBLIC_PAGES.has(pathname)) return { kind: "show" };
  const here = `${pathname}${input.search}`;
  if (me === undefined)
    return needsAccount(pathname) && !(input.serverSignedIn === true && SERVER_CHECKED_PAGES.has(pathname))
      ? { kind: "wait" }
      : { kind: "show" };
  if (me === null) {
    // Reading pages stay up while /auth/methods is unknown; the server already
    // redirected a signed-out visit when reads need sign-in.
    const required = needsAccount(pathname) || input.methods?.signInRequired === true;
    return required ? { kind: "redirect", to: loginHref(here) } : { kind: "show" };
  }
  if (me.mustChangePassword && pathname !== "/account/password") return { kind: "redirect", to: changePasswordHref(here) };
  return { kind: "show" };
}
