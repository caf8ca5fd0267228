import { describe, expect, it } from "vitest";
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, passwordProblem } from "@/lib/accounts/password";
import { PASSWORD_RULES, loginErrorMessage, newPasswordProblem } from "@/lib/views/sign-in-forms";
import {
  changePasswordHref,
  gateDecision,
  initials,
  loginHref,
  oidcLoginHref,
  parseAuthMethods,
  parseWhoAmI,
  safeReturnTo,
  type WhoAmI,
} from "@/lib/views/sign-in";

const ME: WhoAmI = {
  username: "alice",
  displayName: "Alice Ng",
  role: "operator",
  participantId: "human:alice",
  authMethod: "password",
  mustChangePassword: false,
  csrfToken: "t0k3n",
  sessionEndsAt: 1,
};

describe("parseWhoAmI", () => {
  it("accepts the server's answer and nothing malformed", () => {
    expect(parseWhoAmI({ ...ME, extra: 1 })).toEqual(ME);
    expect(parseWhoAmI({ ...ME, role: "owner" })).toBeNull();
    expect(parseWhoAmI({ ...ME, csrfToken: "" })).toBeNull();
    expect(parseWhoAmI({ ...ME, username: 3 })).toBeNull();
    expect(parseWhoAmI(null)).toBeNull();
    expect(parseWhoAmI([ME])).toBeNull();
    expect(parseWhoAmI({ ...ME, authMethod: "magic", sessionEndsAt: "soon", mustChangePassword: "yes" })).toMatchObject({
      authMethod: "password",
      sessionEndsAt: 0,
      mustChangePassword: false,
    });
  });

  it("reads /auth/methods with safe defaults", () => {
    expect(parseAuthMethods({ password: true, oidc: true, signInRequired: false })).toEqual({
      password: true,
      oidc: true,
      signInRequired: false,
    });
    expect(parseAuthMethods({})).toEqual({ password: true, oidc: false, signInRequired: true });
    expect(parseAuthMethods("nope")).toEqual({ password: true, oidc: false, signInRequired: true });
  });
});

describe("return paths", () => {
  it("keeps same-site paths and refuses everything else", () => {
    expect(safeReturnTo("/sessions/abc?event=3#e-3")).toBe("/sessions/abc?event=3#e-3");
    expect(safeReturnTo("/")).toBe("/");
    for (const bad of [
      null,
      undefined,
      "",
      "https://evil.example/",
      "//evil.example",
      "/\\evil.example",
      "javascript:alert(1)",
      "sessions",
      "/\u0000x",
      "/login",
      "/auth/logout",
      "/account/password",
    ]) {
      expect(safeReturnTo(bad)).toBe("/");
    }
    expect(safeReturnTo(`/${"a".repeat(3000)}`)).toBe("/");
  });

  it("builds the sign-in, password and SSO links", () => {
    expect(loginHref("/")).toBe("/login");
    expect(loginHref("/inbox")).toBe("/login?returnTo=%2Finbox");
    expect(loginHref("//evil")).toBe("/login");
    expect(changePasswordHref("/inbox")).toBe("/account/password?returnTo=%2Finbox");
    expect(changePasswordHref("/")).toBe("/account/password");
    expect(oidcLoginHref("/sessions/x")).toBe("/auth/oidc/login?returnTo=%2Fsessions%2Fx");
  });
});

describe("loginErrorMessage", () => {
  it("turns the server's codes into sentences", () => {
    expect(loginErrorMessage(null)).toBeNull();
    expect(loginErrorMessage("invalid")).toBe("Incorrect username or password.");
    expect(loginErrorMessage("throttled")).toMatch(/Too many failed sign-ins/);
    expect(loginErrorMessage("disabled")).toMatch(/disabled/);
    // Only known reason codes become sentences: text from the URL is never printed (issue 10, item 3).
    expect(loginErrorMessage("oidc", "cancelled")).toBe(
      "Sign-in with your identity provider failed: Sign-in was cancelled or refused at your identity provider.",
    );
    expect(loginErrorMessage("oidc", "state")).toMatch(/sign in again/);
    for (const hostile of [
      "The identity provider refused: access_denied",
      "Call +1 555 0100 to restore access",
      "<img src=x onerror=alert(1)>",
      "toString",
      "__proto__",
    ]) {
      expect(loginErrorMessage("oidc", hostile)).toBe("Sign-in with your identity provider failed.");
    }
    expect(loginErrorMessage("oidc")).toBe("Sign-in with your identity provider failed.");
    expect(loginErrorMessage("<script>")).toBe("Sign-in failed. Try again.");
  });
});

describe("gateDecision", () => {
  const methods = { password: true, oidc: false, signInRequired: true };
  it("sends signed-out people to /login with where they were going", () => {
    expect(gateDecision({ pathname: "/sessions/abc", search: "?event=2", me: null, methods })).toEqual({
      kind: "redirect",
      to: "/login?returnTo=%2Fsessions%2Fabc%3Fevent%3D2",
    });
    expect(gateDecision({ pathname: "/login", search: "", me: null, methods })).toEqual({ kind: "show" });
  });

  it("keeps reading pages open when reads are open, but not the pages that act", () => {
    const open = { ...methods, signInRequired: false };
    expect(gateDecision({ pathname: "/", search: "", me: null, methods: open })).toEqual({ kind: "show" });
    expect(gateDecision({ pathname: "/inbox", search: "", me: null, methods: open })).toEqual({
      kind: "redirect",
      to: "/login?returnTo=%2Finbox",
    });
    expect(gateDecision({ pathname: "/sessions/new", search: "", me: null, methods: undefined })).toMatchObject({ kind: "redirect" });
    expect(gateDecision({ pathname: "/", search: "", me: null, methods: undefined })).toEqual({ kind: "show" });
  });

  it("waits for the answer only on pages that act", () => {
    expect(gateDecision({ pathname: "/inbox", search: "", me: undefined, methods })).toEqual({ kind: "wait" });
    expect(gateDecision({ pathname: "/", search: "", me: undefined, methods })).toEqual({ kind: "show" });
  });

  it("shows the inbox's server-rendered first view while checking, when the server found the request signed in", () => {
    expect(gateDecision({ pathname: "/inbox", search: "", me: undefined, methods, serverSignedIn: true })).toEqual({ kind: "show" });
    expect(gateDecision({ pathname: "/inbox", search: "", me: undefined, methods, serverSignedIn: false })).toEqual({ kind: "wait" });
    // Only the inbox: the other pages that act still wait for the browser's own check.
    expect(gateDecision({ pathname: "/sessions/new", search: "", me: undefined, methods, serverSignedIn: true })).toEqual({ kind: "wait" });
    // The browser's answer decides once it is in.
    expect(gateDecision({ pathname: "/inbox", search: "", me: null, methods, serverSignedIn: true })).toMatchObject({ kind: "redirect" });
  });

  it("sends people with a one-time password to change it first", () => {
    const fresh = { ...ME, mustChangePassword: true };
    expect(gateDecision({ pathname: "/inbox", search: "", me: fresh, methods })).toEqual({
      kind: "redirect",
      to: "/account/password?returnTo=%2Finbox",
    });
    expect(gateDecision({ pathname: "/account/password", search: "", me: fresh, methods })).toEqual({ kind: "show" });
    expect(gateDecision({ pathname: "/inbox", search: "", me: ME, methods })).toEqual({ kind: "show" });
  });
});

describe("newPasswordProblem", () => {
  it("mirrors the server's password rules", () => {
    expect(PASSWORD_RULES).toEqual({ min: MIN_PASSWORD_LENGTH, max: MAX_PASSWORD_LENGTH });
    for (const pw of ["short", "x".repeat(10), " ".repeat(12), "tab\there-long", "ok but long enough", "y".repeat(1025)]) {
      expect(newPasswordProblem(pw, pw, "current password") === null).toBe(passwordProblem(pw) === null);
    }
  });

  it("checks the repeat and refuses the current password", () => {
    expect(newPasswordProblem("a good new password", "a good new passw0rd", "old one here")).toEqual({
      field: "confirm",
      message: "The two new passwords don't match.",
    });
    expect(newPasswordProblem("same old password", "same old password", "same old password")?.field).toBe("newPassword");
    expect(newPasswordProblem("a good new password", "a good new password", "old one here")).toBeNull();
  });
});

it("initials", () => {
  expect(initials("Alice Ng")).toBe("AN");
  expect(initials("bob")).toBe("B");
  expect(initials("Mary Ann van der Berg")).toBe("MB");
  expect(initials("  ")).toBe("?");
});
