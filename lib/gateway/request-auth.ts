// Who is calling a Connect RPC: the console login cookie, checked on every
// call (the users file is re-read, so disabling an account or changing a role
// takes effect at once), the CSRF token for calls that change something, and
// the one-time-password gate.
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { Accounts, Authenticated } from "@/lib/accounts/accounts";
import type { Env } from "@/lib/accounts/env";
import { allowedOriginsFor, checkCsrf } from "@/lib/accounts/csrf";
import { roleAtLeast, type Role } from "@/lib/authz/roles";
import type { SignedInUser } from "./identity";

export interface RequestAuthOptions {
  accounts: Accounts;
  /** BATON_PUBLIC_ORIGIN, BATON_TRUST_PROXY, BATON_COOKIE_SECURE. */
  env: Env;
}

export const NOT_SIGNED_IN = "You are not signed in, or your session has ended. Sign in again.";
export const MUST_CHANGE_PASSWORD = "Choose a new password first: you signed in with a one-time password (POST /auth/password).";

export interface SignInRequirement {
  /** Check the x-baton-csrf token and the request's origin (state-changing calls). */
  csrf: boolean;
  /** Lowest role allowed; default viewer (everyone signed in). */
  minimumRole?: Role;
}

/** The signed-in caller, or a ConnectError (UNAUTHENTICATED, PERMISSION_DENIED, FAILED_PRECONDITION). */
export async function requireSignedIn(ctx: HandlerContext, options: RequestAuthOptions, need: SignInRequirement): Promise<Authenticated> {
  const headers = ctx.requestHeader;
  const auth = await options.accounts.authenticate(headers);
  if (!auth) throw new ConnectError(NOT_SIGNED_IN, Code.Unauthenticated);
  if (need.csrf) {
    // Connect calls are POSTs; the console serves plain HTTP unless a proxy in front says otherwise.
    const csrf = checkCsrf({ method: "POST", headers }, auth.login, {
      allowedOrigins: allowedOriginsFor({ headers }, options.env),
    });
    if (!csrf.ok) throw new ConnectError(`Request refused (CSRF check): ${csrf.reason}.`, Code.PermissionDenied, { "x-baton-deny": "csrf" });
  }
  if (auth.mustChangePassword) throw new ConnectError(MUST_CHANGE_PASSWORD, Code.FailedPrecondition);
  const minimum = need.minimumRole ?? "viewer";
  if (!roleAtLeast(auth.user.role, minimum)) {
    throw new ConnectError(`This needs the ${minimum} role; your account is ${auth.user.role}.`, Code.PermissionDenied, { "x-baton-deny": "role" });
  }
  return auth;
}

export function signedInUser(auth: Authenticated): SignedInUser {
  return {
    username: auth.user.username,
    displayName: auth.user.displayName,
    role: auth.user.role,
    participantId: auth.user.participantId,
    ...(auth.runtimeToken !== undefined ? { runtimeToken: auth.runtimeToken } : {}),
  };
}
