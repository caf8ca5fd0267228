import { describe, expect, it } from "vitest";
import type { UserRecord } from "@/lib/accounts/users-file";
import { oidcSettingsFromEnv, parseRoleMap } from "@/lib/oidc/config";
import { claimAt, mapOidcUser, participantIdForSubject, roleFromClaims } from "@/lib/oidc/map-user";
import { clearOidcStateCookie, oidcStateCookie, safeReturnTo, sealLoginState, unsealLoginState, type LoginState } from "@/lib/oidc/state";

const ORIGIN = "https://baton.example";

describe("oidcSettingsFromEnv", () => {
  it("is off without an issuer", () => {
    expect(oidcSettingsFromEnv({}, ORIGIN)).toBeNull();
  });

  it("reads the documented variables with defaults", () => {
    const s = oidcSettingsFromEnv({ BATON_OIDC_ISSUER: "https://id.example/realms/ops", BATON_OIDC_CLIENT_ID: "baton" }, `${ORIGIN}/`);
    expect(s).toMatchObject({ clientId: "baton", scopes: ["openid", "email", "profile"], defaultRole: "viewer", allowInsecure: false });
    expect(s?.redirectUrl.href).toBe("https://baton.example/auth/oidc/callback");
    expect(s?.clientSecret).toBeUndefined();
    expect(s?.roleClaim).toBeUndefined();

    const full = oidcSettingsFromEnv(
      {
        BATON_OIDC_ISSUER: "http://localhost:8080",
        BATON_OIDC_CLIENT_ID: "baton",
        BATON_OIDC_CLIENT_SECRET: "s3cret",
        BATON_OIDC_REDIRECT_URL: "http://localhost:3000/cb",
        BATON_OIDC_SCOPES: "groups offline_access groups",
        BATON_OIDC_ROLE_CLAIM: "realm_access.roles",
        BATON_OIDC_ROLE_MAP: "oncall-leads=approver, sre=operator",
        BATON_OIDC_DEFAULT_ROLE: "none",
      },
      ORIGIN,
    );
    expect(full).toMatchObject({
      clientSecret: "s3cret",
      scopes: ["openid", "email", "profile", "groups", "offline_access"],
      roleClaim: "realm_access.roles",
      roleMap: { "oncall-leads": "approver", sre: "operator" },
      defaultRole: null,
      allowInsecure: true,
    });
    expect(full?.redirectUrl.href).toBe("http://localhost:3000/cb");
  });

  it("explains bad configuration by variable", () => {
    const base = { BATON_OIDC_ISSUER: "https://id.example", BATON_OIDC_CLIENT_ID: "baton" };
    const cases: Array<[Record<string, string>, string]> = [
      [{ BATON_OIDC_ISSUER: "https://id.example" }, "BATON_OIDC_CLIENT_ID: required when BATON_OIDC_ISSUER is set"],
      [
        { ...base, BATON_OIDC_ISSUER: "http://id.example" },
        'BATON_OIDC_ISSUER: must use https (http is allowed only on localhost): "http://id.example"',
      ],
      [{ ...base, BATON_OIDC_ISSUER: "not a url" }, 'BATON_OIDC_ISSUER: not a URL: "not a url"'],
      [{ ...base, BATON_OIDC_REDIRECT_URL: "http://baton.example/cb" }, "BATON_OIDC_REDIRECT_URL: must use https"],
      [{ ...base, BATON_OIDC_DEFAULT_ROLE: "admin" }, 'BATON_OIDC_DEFAULT_ROLE: must be viewer, operator or none (got "admin")'],
      [{ ...base, BATON_OIDC_ROLE_MAP: "a=admin" }, "BATON_OIDC_ROLE_MAP: needs BATON_OIDC_ROLE_CLAIM"],
      [
        { ...base, BATON_OIDC_ROLE_CLAIM: "groups", BATON_OIDC_ROLE_MAP: "a=root" },
        'BATON_OIDC_ROLE_MAP: "a" maps to "root", which is not one of viewer, operator, approver, admin',
      ],
      [{ ...base, BATON_OIDC_SCOPES: 'bad"scope' }, 'BATON_OIDC_SCOPES: invalid scope "bad"scope"'],
    ];
    for (const [env, message] of cases) expect(() => oidcSettingsFromEnv(env, ORIGIN), message).toThrow(message);
  });

  it("parses role maps as pairs or JSON", () => {
    expect(parseRoleMap('{"cn=leads,ou=groups":"approver"}')).toEqual({ "cn=leads,ou=groups": "approver" });
    expect(parseRoleMap("x=admin,,y=viewer")).toEqual({ x: "admin", y: "viewer" });
    expect(() => parseRoleMap("novalue")).toThrow('"novalue" should look like value=role');
  });
});

describe("role claims", () => {
  it("reads nested claims and picks the highest role", () => {
    const claims = { realm_access: { roles: ["viewer", "operator"] }, "https://x/roles": "approver", groups: "sre leads" };
    expect(claimAt(claims, "realm_access.roles")).toEqual(["viewer", "operator"]);
    expect(claimAt(claims, "https://x/roles")).toBe("approver");
    expect(roleFromClaims(claims, { roleClaim: "realm_access.roles" })).toBe("operator");
    expect(roleFromClaims(claims, { roleClaim: "https://x/roles" })).toBe("approver");
    expect(roleFromClaims(claims, { roleClaim: "groups", roleMap: { leads: "approver", sre: "operator" } })).toBe("approver");
    expect(roleFromClaims(claims, { roleClaim: "groups" })).toBeUndefined();
    expect(
      roleFromClaims({ groups: ["constructor", "__proto__", "toString"] }, { roleClaim: "groups", roleMap: { x: "admin" } }),
    ).toBeUndefined();
    expect(roleFromClaims(claims, {})).toBeUndefined();
  });
});

describe("mapOidcUser", () => {
  const users: UserRecord[] = [
    { username: "alice", displayName: "Alice", role: "admin", participantId: "human:alice", oidcSubject: "sub-a" },
    { username: "bob", displayName: "Bob", role: "operator", participantId: "human:bob", email: "bob@example.com" },
    {
      username: "carl",
      displayName: "Carl",
      role: "operator",
      participantId: "human:carl",
      email: "carl@example.com",
      oidcSubject: "sub-c",
    },
  ];
  const settings = { roleClaim: "groups", defaultRole: "viewer" as const };

  it("links by subject first, then by verified email", () => {
    expect(mapOidcUser({ sub: "sub-a", groups: ["viewer"] }, users, settings)).toMatchObject({
      ok: true,
      linked: true,
      user: { username: "alice", role: "admin" },
    });
    expect(mapOidcUser({ sub: "x", email: "BOB@example.com", email_verified: true }, users, settings)).toMatchObject({
      ok: true,
      user: { username: "bob", oidcSubject: "x" },
    });
    expect(mapOidcUser({ sub: "x", email: "bob@example.com", email_verified: "true" }, users, settings)).toMatchObject({
      ok: true,
      linked: false,
    });
    expect(mapOidcUser({ sub: "x", email: "carl@example.com", email_verified: true }, users, settings)).toEqual({
      ok: false,
      code: "linked_elsewhere",
      reason: "Your email belongs to a Baton account that is linked to a different sign-in. Ask an admin.",
    });
  });

  it("builds a session-only user for everyone else", () => {
    expect(mapOidcUser({ sub: "z 1", name: "Zed\u0007", groups: ["operator"] }, users, settings)).toEqual({
      ok: true,
      linked: false,
      user: {
        username: "oidc:z 1",
        displayName: "Zed",
        role: "operator",
        participantId: participantIdForSubject("z 1"),
        authMethod: "oidc",
        oidcSubject: "z 1",
        ephemeral: true,
      },
    });
    expect(participantIdForSubject("z 1")).toMatch(/^oidc:sha256-[0-9a-f]{32}$/);
    expect(participantIdForSubject("00u1ab")).toBe("oidc:00u1ab");
    expect(mapOidcUser({}, users, settings)).toMatchObject({ ok: false });
    expect(mapOidcUser({ sub: "q" }, users, { defaultRole: null })).toMatchObject({ ok: false });
  });
});

describe("login state", () => {
  const secret = Buffer.from("state-test-secret-that-is-long-enough!!");
  const state: LoginState = { state: "s", nonce: "n", codeVerifier: "v", returnTo: "/x", issuedAt: 1_000_000 };

  it("seals and unseals, refusing tampering, other secrets and age", () => {
    const sealed = sealLoginState(secret, state);
    expect(sealed).not.toContain("codeVerifier");
    expect(unsealLoginState(secret, sealed, 1_000_000 + 60_000)).toEqual(state);
    expect(unsealLoginState(Buffer.from("another-secret-that-is-long-enough!!!!!"), sealed, 1_000_000)).toBeNull();
    const flipped = Buffer.from(sealed, "base64url");
    flipped[14] = (flipped[14] as number) ^ 1;
    expect(unsealLoginState(secret, flipped.toString("base64url"), 1_000_000)).toBeNull();
    expect(unsealLoginState(secret, sealed, 1_000_000 + 10 * 60_000 + 1)).toBeNull();
    expect(unsealLoginState(secret, "%%%", 1_000_000)).toBeNull();
    expect(unsealLoginState(secret, "", 1_000_000)).toBeNull();
  });

  it("keeps return paths on the console", () => {
    expect(safeReturnTo("/sessions/01J?tab=1#e5")).toBe("/sessions/01J?tab=1#e5");
    for (const bad of [
      "//evil.example",
      "https://evil.example",
      "/\\evil.example",
      "evil",
      "",
      undefined,
      42,
      "/ok\u0000",
      `/${"a".repeat(3000)}`,
    ]) {
      expect(safeReturnTo(bad)).toBe("/");
    }
  });

  it("uses a short-lived HttpOnly Lax cookie", () => {
    expect(oidcStateCookie("abc", { secure: true })).toBe("baton_oidc=abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=600; Secure");
    expect(clearOidcStateCookie({ secure: false })).toBe("baton_oidc=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0");
  });
});
