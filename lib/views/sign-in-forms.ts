// The sign-in and password forms' part of lib/views/sign-in.ts: the
// sentences for failed sign-ins, the sign-in and password-change requests and
// the new-password rules. Its own module so the header, on every page, does
// not carry them (it needs only who is signed in, sign-out and the page gate).

import { safeReturnTo } from "@/lib/views/return-to";
import { AuthRequestError, CSRF_HEADER, errorOf, JSON_HEADERS, parseWhoAmI, type WhoAmI } from "@/lib/views/sign-in";

/**
 * Why a sign-in with the identity provider failed, as a code in
 * /login?error=oidc&reason=<code>. Only codes travel in the URL: the sign-in
 * page prints the sentence for a known code and a generic one otherwise, so a
 * link cannot make it print text of the sender's choosing.
 */
export const OIDC_FAILURE_MESSAGES = Object.freeze({
  unavailable: "Sign-in with your identity provider is unavailable right now. Try again, or use a password.",
  state: "Your sign-in took too long or was started in another browser. Please sign in again.",
  cancelled: "Sign-in was cancelled or refused at your identity provider.",
  provider: "Your identity provider could not sign you in.",
  failed: "Sign-in with your identity provider failed. Please try again.",
  no_subject: "The identity provider did not say who you are (no subject).",
  linked_elsewhere: "Your email belongs to a Baton account that is linked to a different sign-in. Ask an admin.",
  disabled: "This account is disabled. Ask an admin to enable it.",
  no_access: "Your account at the identity provider has no access to Baton. Ask an admin to add you.",
  id_taken: "Your sign-in maps to a participant id that is already taken. Ask an admin to link your account.",
} as const);

export type OidcFailure = keyof typeof OIDC_FAILURE_MESSAGES;

export function isOidcFailure(v: unknown): v is OidcFailure {
  return typeof v === "string" && Object.prototype.hasOwnProperty.call(OIDC_FAILURE_MESSAGES, v);
}

/** The sentence for /login?error=<code>[&reason=<oidc failure code>] (form posts and OIDC failures). Never echoes the URL. */
export function loginErrorMessage(code: string | null | undefined, reason?: string | null): string | null {
  if (!code) return null;
  switch (code) {
    case "invalid":
      return "Incorrect username or password.";
    case "disabled":
      return "This account is disabled. Ask an admin to enable it.";
    case "throttled":
      return "Too many failed sign-ins. Wait a few minutes, then try again.";
    case "unavailable":
      return "Sign-in is unavailable right now: the users file is invalid. An admin must fix it.";
    case "bad_request":
      return "Enter a username and a password.";
    case "cross_site":
      return "Sign-in was refused because the form came from another site. Open the console's own address and try again.";
    case "oidc":
      return isOidcFailure(reason)
        ? `Sign-in with your identity provider failed: ${OIDC_FAILURE_MESSAGES[reason]}`
        : "Sign-in with your identity provider failed.";
    case "signed_out":
      return "Your session has ended. Sign in again.";
    default:
      return "Sign-in failed. Try again.";
  }
}

export async function postLogin(username: string, password: string, returnTo: string): Promise<WhoAmI> {
  const res = await fetch("/auth/login", {
    method: "POST",
    credentials: "same-origin",
    headers: JSON_HEADERS,
    body: JSON.stringify({ username, password, returnTo: safeReturnTo(returnTo) }),
  });
  if (!res.ok) throw await errorOf(res, "Sign-in failed. Try again.");
  const me = parseWhoAmI(await res.json());
  if (!me) throw new AuthRequestError("The console's answer to the sign-in is not understood.", res.status);
  return me;
}

export async function postPasswordChange(csrfToken: string, currentPassword: string, newPassword: string): Promise<WhoAmI> {
  const res = await fetch("/auth/password", {
    method: "POST",
    credentials: "same-origin",
    headers: { ...JSON_HEADERS, [CSRF_HEADER]: csrfToken },
    body: JSON.stringify({ currentPassword, newPassword }),
  });
  if (!res.ok) throw await errorOf(res, "The password could not be changed. Try again.");
  const me = parseWhoAmI(await res.json());
  if (!me) throw new AuthRequestError("The console's answer to the password change is not understood.", res.status);
  return me;
}

/** Mirrors the server's password rules (lib/accounts/password.ts; a unit test keeps them equal). */
export const PASSWORD_RULES = Object.freeze({ min: 10, max: 1024 });

/** What is wrong with a new password, or null. */
export function newPasswordProblem(
  next: string,
  confirm: string,
  current: string,
): { field: "newPassword" | "confirm"; message: string } | null {
  if (next.length < PASSWORD_RULES.min) return { field: "newPassword", message: `Use at least ${PASSWORD_RULES.min} characters.` };
  if (next.length > PASSWORD_RULES.max) return { field: "newPassword", message: `Use at most ${PASSWORD_RULES.max} characters.` };
  if (next.trim() === "") return { field: "newPassword", message: "A password can't be only spaces." };
  if (/[\u0000-\u001f\u007f]/.test(next)) return { field: "newPassword", message: "Remove the control characters." };
  if (next === current) return { field: "newPassword", message: "Choose a password different from the current one." };
  if (confirm !== next) return { field: "confirm", message: "The two new passwords don't match." };
  return null;
}
