// Who is calling a Connect RPC, checked once per call by one interceptor on
// the console's router (accessInterceptor, rules in access-rules.ts): the
// console login cookie (the users file is re-read, so disabling an account or
// changing a role takes effect at once), the CSRF token for calls that change
// something, the one-time-password gate and the method's lowest role. The
// interceptor puts the signed-in caller in the call's context values
// (kSignedIn); handlers read it with signedInOf / readerOf.
import { Code, ConnectError, createContextKey, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import type { Accounts, Authenticated } from "@/lib/accounts/accounts";
import type { Env } from "@/lib/accounts/env";
import { allowedOriginsFor, checkCsrf } from "@/lib/accounts/csrf";
import { roleAtLeast, type Role } from "@/lib/authz/roles";
import { accessRuleFor } from "./access-rules";
import type { SignedInUser } from "./identity";

export interface RequestAuthOptions {
  accounts: Accounts;
  /** BATON_PUBLIC_ORIGIN, BATON_TRUST_PROXY, BATON_COOKIE_SECURE. */
  env: Env;
}

export const NOT_SIGNED_IN = "You are not signed in, or your session has ended. Sign in again.";
export const MUST_CHANGE_PASSWORD = "Choose a new password first: you signed in with a one-time password (POST /auth/password).";
export const SHUTTING_DOWN = "the console is shutting down";

export interface SignInRequirement {
  /** Check the x-baton-csrf token and the request's origin (state-changing calls). */
  csrf: boolean;
  /** Lowest role allowed; default viewer (everyone signed in). */
  minimumRole?: Role;
}

/** The signed-in caller, or a ConnectError (UNAUTHENTICATED, PERMISSION_DENIED, FAILED_PRECONDITION). */
export async function requireSignedIn(headers: Headers, options: RequestAuthOptions, need: SignInRequirement): Promise<Authenticated> {
  const auth = await options.accounts.authenticate(headers);
  if (!auth) throw new ConnectError(NOT_SIGNED_IN, Code.Unauthenticated);
  if (need.csrf) {
    // Connect calls are POSTs; the console serves plain HTTP unless a proxy in front says otherwise.
    const csrf = checkCsrf({ method: "POST", headers }, auth.login, {
      allowedOrigins: allowedOriginsFor({ headers }, options.env),
    });
    if (!csrf.ok)
      throw new ConnectError(`Request refused (CSRF check): ${csrf.reason}.`, Code.PermissionDenied, { "x-baton-deny": "csrf" });
  }
  if (auth.mustChangePassword) throw new ConnectError(MUST_CHANGE_PASSWORD, Code.FailedPrecondition);
  const minimum = need.minimumRole ?? "viewer";
  if (!roleAtLeast(auth.user.role, minimum)) {
    throw new ConnectError(`This needs the ${minimum} role; your account is ${auth.user.role}.`, Code.PermissionDenied, {
      "x-baton-deny": "role",
    });
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

/** The caller the access interceptor signed in for this call; null when the method was open to anyone. */
export const kSignedIn = createContextKey<Authenticated | null>(null, { description: "the signed-in caller (access interceptor)" });

/** The signed-in caller of a method whose rule needs a sign-in; UNAUTHENTICATED if none was checked (fail closed). */
export function signedInOf(ctx: HandlerContext): Authenticated {
  const auth = ctx.values.get(kSignedIn);
  if (!auth) throw new ConnectError(NOT_SIGNED_IN, Code.Unauthenticated);
  return auth;
}

/** Who is reading (a key per person, for the per-person stream cap), or undefined when reads are open to anyone. */
export function readerOf(ctx: HandlerContext): string | undefined {
  return ctx.values.get(kSignedIn)?.user.username;
}

export interface AccessOptions {
  /** Null when the console has no accounts: methods that always need a sign-in are refused. */
  auth: RequestAuthOptions | null;
  /** ConsoleService reads need a signed-in viewer (BATON_REQUIRE_SIGN_IN, default on). */
  requireSignInToRead: boolean;
  /** The gateway is shutting down: calls are refused with UNAVAILABLE before anything else is checked. */
  isClosed: () => boolean;
}

/**
 * The console router's access check, once per call, from the method's rule
 * (access-rules.ts): a method without a rule is refused. In order: shutting
 * down (UNAVAILABLE), sign-in (UNAUTHENTICATED), CSRF (PERMISSION_DENIED),
 * one-time password (FAILED_PRECONDITION), role (PERMISSION_DENIED). The
 * caller goes into kSignedIn.
 */
export function accessInterceptor(options: AccessOptions): Interceptor {
  return (next) => async (req) => {
    const rule = accessRuleFor(req.service.typeName, req.method.name);
    if (!rule) {
      throw new ConnectError(`${req.service.typeName}/${req.method.name} has no access rule; refused.`, Code.PermissionDenied, {
        "x-baton-deny": "no-rule",
      });
    }
    if (rule.signIn === "by-service") return next(req);
    if (!rule.whileClosing && options.isClosed()) throw new ConnectError(SHUTTING_DOWN, Code.Unavailable);
    const needed = rule.signIn === "always" || (options.requireSignInToRead && options.auth !== null);
    if (needed) {
      if (!options.auth) throw new ConnectError(NOT_SIGNED_IN, Code.Unauthenticated);
      const need: SignInRequirement = { csrf: rule.csrf, ...(rule.minimumRole ? { minimumRole: rule.minimumRole } : {}) };
      req.contextValues.set(kSignedIn, await requireSignedIn(req.header, options.auth, need));
    }
    return next(req);
  };
}
