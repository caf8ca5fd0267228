// The whole authorization-code flow against a real OpenID Connect provider
// (oidc-provider) on a loopback port, without a browser.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Accounts } from "@/lib/accounts/accounts";
import { TEST_SCRYPT } from "@/lib/accounts/password";
import { writeUsersFile } from "@/lib/accounts/users-file";
import { OidcLogin, OidcLoginError } from "@/lib/oidc/client";
import { oidcSettingsFromEnv, type OidcSettings } from "@/lib/oidc/config";
import { oidcStateCookie, readOidcStateCookie, unsealLoginState } from "@/lib/oidc/state";
import { startOidcProvider, type TestOidcProvider } from "@/tests/support/oidc-provider";

const CONSOLE = "http://127.0.0.1:3999";
const CALLBACK = `${CONSOLE}/auth/oidc/callback`;
const SECRET = Buffer.from("oidc-flow-test-session-secret-long-enough");

let op: TestOidcProvider;
let dir: string;
let accounts: Accounts;

beforeAll(async () => {
  op = await startOidcProvider({
    redirectUris: [CALLBACK],
    accounts: [
      {
        sub: "sub-carol",
        username: "carol",
        password: "carol-pw",
        claims: {
          email: "Carol@Example.com",
          email_verified: true,
          name: "Carol Lee",
          preferred_username: "carol",
          groups: ["oncall-leads"],
        },
      },
      {
        sub: "sub-erin",
        username: "erin",
        password: "erin-pw",
        claims: {
          email: "erin@example.com",
          email_verified: true,
          name: "Erin Park",
          preferred_username: "erin",
          groups: ["sre", "oncall-leads"],
        },
      },
      { sub: "sub-frank", username: "frank", password: "frank-pw", claims: { name: "Frank", preferred_username: "admin", groups: [] } },
      {
        sub: "sub-mallory",
        username: "mallory",
        password: "mallory-pw",
        claims: { email: "carol@example.com", email_verified: false, groups: [] },
      },
      { sub: "sub-dan", username: "dan", password: "dan-pw", claims: { email: "dan@example.com", email_verified: true } },
    ],
  });
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-oidc-"));
  const usersFile = path.join(dir, "users.json");
  await writeUsersFile(usersFile, {
    version: 1,
    users: [
      // Linked by verified email; the file's role wins over the claim.
      { username: "carol", displayName: "Carol (lead)", role: "approver", participantId: "human:carol", email: "carol@example.com" },
      // Linked by subject, but disabled.
      { username: "dan", displayName: "Dan", role: "operator", participantId: "human:dan", oidcSubject: "sub-dan", disabled: true },
    ],
  });
  accounts = new Accounts({ usersFile, loginSecret: SECRET, scrypt: TEST_SCRYPT });
}, 30_000);

afterAll(async () => {
  await op?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function settings(extra: Record<string, string> = {}): OidcSettings {
  const s = oidcSettingsFromEnv(
    {
      BATON_OIDC_ISSUER: op.issuer,
      BATON_OIDC_CLIENT_ID: op.clientId,
      BATON_OIDC_CLIENT_SECRET: op.clientSecret,
      BATON_OIDC_SCOPES: "groups",
      BATON_OIDC_ROLE_CLAIM: "groups",
      BATON_OIDC_ROLE_MAP: "oncall-leads=approver,sre=operator",
      ...extra,
    },
    CONSOLE,
  );
  if (!s) throw new Error("no settings");
  return s;
}

function login(extra: Record<string, string> = {}): OidcLogin {
  return new OidcLogin({ settings: settings(extra), secret: SECRET, users: accounts.directory });
}

async function flow(oidc: OidcLogin, username: string, password: string, returnTo = "/sessions/abc?tab=timeline") {
  const begin = await oidc.beginLogin({ returnTo });
  // The browser would carry this cookie back to the callback.
  const cookieHeader = oidcStateCookie(begin.cookieState, { secure: false }).split(";")[0] as string;
  const callbackUrl = await op.signIn(begin.redirectUrl, { username, password });
  return oidc.completeLogin(callbackUrl, readOidcStateCookie({ cookie: cookieHeader }));
}

describe("OIDC sign-in against a real provider", () => {
  it("builds an authorization request with PKCE S256, state and nonce", async () => {
    const { redirectUrl, cookieState } = await login().beginLogin();
    const u = new URL(redirectUrl);
    expect(u.origin).toBe(op.issuer);
    expect(u.searchParams.get("client_id")).toBe(op.clientId);
    expect(u.searchParams.get("redirect_uri")).toBe(CALLBACK);
    expect(u.searchParams.get("response_type")).toBe("code");
    expect(u.searchParams.get("scope")).toBe("openid email profile groups");
    expect(u.searchParams.get("code_challenge_method")).toBe("S256");
    const saved = unsealLoginState(SECRET, cookieState);
    expect(saved?.state).toBe(u.searchParams.get("state"));
    expect(saved?.nonce).toBe(u.searchParams.get("nonce"));
    expect(u.searchParams.get("code_challenge")).not.toBe(saved?.codeVerifier);
    expect(redirectUrl).not.toContain(saved?.codeVerifier ?? "-");
  });

  it("signs in a person linked by verified email: the users file decides", async () => {
    const r = await flow(login(), "carol", "carol-pw");
    expect(r.linked).toBe(true);
    expect(r.returnTo).toBe("/sessions/abc?tab=timeline");
    expect(r.user).toEqual({
      username: "carol",
      displayName: "Carol (lead)",
      role: "approver",
      participantId: "human:carol",
      authMethod: "oidc",
      oidcSubject: "sub-carol",
      ephemeral: false,
    });
    expect(r.claims).toMatchObject({ sub: "sub-carol", email: "Carol@Example.com", name: "Carol Lee" });

    // The result becomes a console session like a password sign-in.
    const { cookieValue } = accounts.startLogin(r.user, { ip: "127.0.0.1" });
    const auth = await accounts.authenticate({ cookie: `baton_session=${cookieValue}` });
    expect(auth && accounts.whoami(auth)).toMatchObject({
      username: "carol",
      role: "approver",
      authMethod: "oidc",
      participantId: "human:carol",
    });
  });

  it("maps an unknown person's role claim (highest wins) and gives them an oidc: participant id", async () => {
    const r = await flow(login(), "erin", "erin-pw", "https://evil.example/");
    expect(r.linked).toBe(false);
    expect(r.returnTo).toBe("/");
    expect(r.user).toEqual({
      username: "oidc:erin",
      displayName: "Erin Park",
      role: "approver",
      participantId: "oidc:sub-erin",
      authMethod: "oidc",
      oidcSubject: "sub-erin",
      ephemeral: true,
    });
  });

  it("works when the provider puts the claims in the ID token", async () => {
    const op2 = await startOidcProvider({
      redirectUris: [CALLBACK],
      claimsInIdToken: true,
      accounts: [{ sub: "s-1", username: "gil", password: "gil-pw", claims: { name: "Gil", preferred_username: "gil", groups: ["sre"] } }],
    });
    try {
      const oidc = new OidcLogin({
        settings: settings({
          BATON_OIDC_ISSUER: op2.issuer,
          BATON_OIDC_CLIENT_ID: op2.clientId,
          BATON_OIDC_CLIENT_SECRET: op2.clientSecret,
        }),
        secret: SECRET,
        users: accounts.directory,
      });
      const begin = await oidc.beginLogin();
      const callback = await op2.signIn(begin.redirectUrl, { username: "gil", password: "gil-pw" });
      const r = await oidc.completeLogin(callback, begin.cookieState);
      expect(r.user).toMatchObject({ role: "operator", displayName: "Gil", participantId: "oidc:s-1" });
    } finally {
      await op2.close();
    }
  });

  it("gives people without a matching claim the default role, or refuses them with BATON_OIDC_DEFAULT_ROLE=none", async () => {
    const viewer = await flow(login(), "frank", "frank-pw");
    // Choosing "admin" as a name at the provider gets you nothing.
    expect(viewer.user).toMatchObject({ role: "viewer", username: "oidc:admin", participantId: "oidc:sub-frank" });
    await expect(flow(login({ BATON_OIDC_DEFAULT_ROLE: "none" }), "frank", "frank-pw")).rejects.toMatchObject({
      userMessage: "Your account at the identity provider has no access to Baton. Ask an admin to add you.",
    });
  });

  it("never links by an unverified email", async () => {
    const r = await flow(login(), "mallory", "mallory-pw");
    expect(r.linked).toBe(false);
    expect(r.user).toMatchObject({ role: "viewer", participantId: "oidc:sub-mallory" });
  });

  it("refuses disabled users-file accounts", async () => {
    await expect(flow(login(), "dan", "dan-pw")).rejects.toMatchObject({
      userMessage: "This account is disabled. Ask an admin to enable it.",
    });
  });

  it("rejects a callback replayed, tampered with, or without its state cookie", async () => {
    const oidc = login();
    const begin = await oidc.beginLogin();
    const callback = await op.signIn(begin.redirectUrl, { username: "erin", password: "erin-pw" });

    await expect(oidc.completeLogin(callback, undefined)).rejects.toMatchObject({
      userMessage: "Your sign-in took too long or was started in another browser. Please sign in again.",
    });
    // State from another sign-in attempt (CSRF / login fixation).
    const other = await oidc.beginLogin();
    await expect(oidc.completeLogin(callback, other.cookieState)).rejects.toBeInstanceOf(OidcLoginError);
    const bad = new URL(callback);
    bad.searchParams.set("state", "forged");
    await expect(oidc.completeLogin(bad, begin.cookieState)).rejects.toBeInstanceOf(OidcLoginError);

    // The untouched callback still works once...
    expect((await oidc.completeLogin(callback, begin.cookieState)).user.participantId).toBe("oidc:sub-erin");
    // ...and the code cannot be redeemed twice.
    await expect(oidc.completeLogin(callback, begin.cookieState)).rejects.toMatchObject({
      userMessage: "Sign-in with your identity provider failed. Please try again.",
    });
  });

  it("reports a sign-in cancelled at the provider", async () => {
    const oidc = login();
    const begin = await oidc.beginLogin();
    const callback = await op.signIn(begin.redirectUrl, { abort: true });
    expect(new URL(callback).searchParams.get("error")).toBe("access_denied");
    await expect(oidc.completeLogin(callback, begin.cookieState)).rejects.toMatchObject({
      userMessage: "Sign-in was cancelled or refused at your identity provider.",
    });
  });

  it("expires the sign-in state after ten minutes", async () => {
    let now = Date.now();
    const oidc = new OidcLogin({ settings: settings(), secret: SECRET, users: accounts.directory, now: () => now });
    const begin = await oidc.beginLogin();
    const callback = await op.signIn(begin.redirectUrl, { username: "erin", password: "erin-pw" });
    now += 10 * 60_000 + 1;
    await expect(oidc.completeLogin(callback, begin.cookieState)).rejects.toMatchObject({
      detail: "missing, expired or invalid state cookie",
    });
  });

  it("reports an unreachable provider and retries discovery later", async () => {
    const oidc = new OidcLogin({
      settings: settings({ BATON_OIDC_ISSUER: "http://127.0.0.1:9/" }),
      secret: SECRET,
      users: accounts.directory,
      timeoutSeconds: 2,
    });
    await expect(oidc.beginLogin()).rejects.toMatchObject({
      userMessage: "Sign-in with your identity provider is unavailable right now. Try again, or use a password.",
    });
    await expect(oidc.beginLogin()).rejects.toBeInstanceOf(OidcLoginError);
  });
});
