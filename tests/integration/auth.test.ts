// Sign-in over HTTP on the real console server: password sign-in (JSON and
// forms), whoami, sign-out, password change and the one-time-password gate,
// the bootstrap admin notice, the switch that puts ConsoleService reads
// behind sign-in, and OIDC against a real local provider.
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TEST_SCRYPT } from "@/lib/accounts/password";
import { loginErrorMessage } from "@/lib/views/sign-in-forms";
import { SessionKind } from "@/lib/gen/baton/v1/actions_pb";
import { bootstrapNotice, setupAccounts } from "@/lib/server/accounts-setup";
import { startOidcProvider, type TestOidcProvider } from "@/tests/support/oidc-provider";
import { Browser, PASSWORD, quiet, signedIn, startTestConsole, uuid, type TestConsole, type WhoAmIJson } from "./actions-harness";

let tc: TestConsole;

beforeAll(async () => {
  tc = await startTestConsole([
    { username: "alice", role: "operator", name: "Alice Ng" },
    { username: "victor", role: "viewer", name: "Victor Viewer" },
  ]);
});

afterAll(async () => {
  await tc?.close();
});

async function refusal(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("expected the call to be refused");
}

function post(b: Browser, pathname: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${tc.url}${pathname}`, {
    method: "POST",
    headers: b.headers({ "content-type": "application/json", ...headers }),
    body: JSON.stringify(body),
    redirect: "manual",
  });
}

describe("password sign-in", () => {
  it("whoami is 401 until sign-in; sign-in sets an HttpOnly SameSite cookie and returns the user and CSRF token", async () => {
    const b = new Browser(tc.url);
    const before = await b.whoami();
    expect(before.status).toBe(401);
    expect(before.headers.get("cache-control")).toBe("no-store");

    const res = await post(b, "/auth/login", { username: "Alice", password: PASSWORD });
    expect(res.status).toBe(200);
    const cookie = res.headers.getSetCookie()[0] ?? "";
    expect(cookie).toMatch(/^baton_session=[\w-]+\.[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    const me = (await res.json()) as WhoAmIJson;
    expect(me).toMatchObject({
      username: "alice",
      displayName: "Alice Ng",
      role: "operator",
      participantId: "human:alice",
      authMethod: "password",
      mustChangePassword: false,
    });
    expect(me.csrfToken).toMatch(/^[\w-]{43}$/);
    expect(JSON.stringify(me)).not.toContain("runtimeToken");
    b.keepCookies(res);

    const again = await b.whoami();
    expect(again.status).toBe(200);
    expect(((await again.json()) as WhoAmIJson).csrfToken).toBe(me.csrfToken);
  });

  it("refuses wrong passwords, unknown users and other sites", async () => {
    const b = new Browser(tc.url);
    for (const body of [
      { username: "alice", password: "wrong password!!" },
      { username: "nobody", password: PASSWORD },
    ]) {
      const res = await post(b, "/auth/login", body);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "Incorrect username or password." });
    }
    b.origin = "https://evil.example";
    const cross = await post(b, "/auth/login", { username: "alice", password: PASSWORD });
    expect(cross.status).toBe(403);
    expect(cross.headers.getSetCookie()).toEqual([]);
    const get = await fetch(`${tc.url}/auth/login`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });

  it("works as a plain form post with redirects", async () => {
    const form = (fields: Record<string, string>) =>
      fetch(`${tc.url}/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: tc.url },
        body: new URLSearchParams(fields).toString(),
        redirect: "manual",
      });
    const good = await form({ username: "alice", password: PASSWORD, returnTo: "/sessions?mine=1" });
    expect(good.status).toBe(303);
    expect(good.headers.get("location")).toBe("/sessions?mine=1");
    expect(good.headers.getSetCookie()[0]).toMatch(/^baton_session=/);
    const bad = await form({ username: "alice", password: "nope nope nope", returnTo: "https://evil.example/" });
    expect(bad.status).toBe(303);
    expect(bad.headers.get("location")).toBe("/login?error=invalid");
  });

  it("returns only to a normalised path on the console, whatever returnTo says (issue 10, item 1)", async () => {
    const form = (returnTo: string) =>
      fetch(`${tc.url}/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: tc.url },
        body: new URLSearchParams({ username: "alice", password: PASSWORD, returnTo }).toString(),
        redirect: "manual",
      });
    const hostile = [
      "/.//evil.example/x",
      "/..//evil.example/x",
      "/%2e//evil.example/x",
      "//evil.example",
      "/\\evil.example",
      "/\t/evil.example",
      "https://evil.example/",
      "javascript:alert(1)",
    ];
    for (const returnTo of hostile) {
      const res = await form(returnTo);
      expect(res.status, returnTo).toBe(303);
      expect(res.headers.get("location"), returnTo).toBe("/");
    }
    const fine = await form("/./sessions/abc?tab=1");
    expect(fine.headers.get("location")).toBe("/sessions/abc?tab=1");
    // A failed sign-in keeps only a safe returnTo in the /login link.
    const failed = await fetch(`${tc.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: tc.url },
      body: new URLSearchParams({ username: "alice", password: "not the password", returnTo: "/.//evil.example/x" }).toString(),
      redirect: "manual",
    });
    expect(failed.headers.get("location")).toBe("/login?error=invalid");
  });

  it("signs out with the CSRF token only", async () => {
    const b = await signedIn(tc, "alice");
    const noToken = await post(b, "/auth/logout", {});
    expect(noToken.status).toBe(403);
    expect((await b.whoami()).status).toBe(200);
    const out = await post(b, "/auth/logout", {}, { "x-baton-csrf": b.csrf });
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie()[0]).toMatch(/^baton_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0/);
    expect((await b.whoami()).status).toBe(401);
    // The old cookie is dead on the server too.
    expect((await refusal(b.actions().listDirectory({}))).code).toBe(Code.Unauthenticated);
  });
});

describe("sign-in limits behind a reverse proxy (issue 10, item 3)", () => {
  let proxied: TestConsole;
  beforeAll(async () => {
    proxied = await startTestConsole([{ username: "alice", role: "operator", name: "Alice Ng" }], { BATON_TRUST_PROXY: "1" });
  });
  afterAll(async () => {
    await proxied?.close();
  });

  const attempt = (password: string, xff: string) =>
    fetch(`${proxied.url}/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: proxied.url, "x-forwarded-for": xff },
      body: JSON.stringify({ username: "alice", password }),
    });

  it("takes the address the proxy wrote, so a client rotating the leftmost X-Forwarded-For entry is still throttled", async () => {
    for (let i = 0; i < 5; i++) expect((await attempt("wrong password!", `10.9.${i}.1, 203.0.113.50`)).status).toBe(401);
    const sixth = await attempt(PASSWORD, "10.9.99.1, 203.0.113.50");
    expect(sixth.status).toBe(429);
    expect(Number(sixth.headers.get("retry-after"))).toBeGreaterThan(0);
    // Someone else behind the same proxy signs in.
    expect((await attempt(PASSWORD, "203.0.113.51")).status).toBe(200);
  });

  it("refuses to start with a malformed hop count", async () => {
    await expect(startTestConsole([], { BATON_TRUST_PROXY: "1", BATON_TRUSTED_PROXY_HOPS: "zero" })).rejects.toThrow(
      /BATON_TRUSTED_PROXY_HOPS/,
    );
  });
});

describe("one-time passwords", () => {
  it("gates everything but whoami, sign-out and the password change until a new password is chosen", async () => {
    const admin = await signedIn(tc, "admin", tc.adminPassword);
    const me = (await (await admin.whoami()).json()) as WhoAmIJson;
    expect(me).toMatchObject({ username: "admin", role: "admin", mustChangePassword: true });
    const gated = await refusal(
      admin.actions().startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "x", participants: ["human:alice"] }),
    );
    expect(gated.code).toBe(Code.FailedPrecondition);
    expect(gated.rawMessage).toContain("one-time password");

    expect(
      (await post(admin, "/auth/password", { currentPassword: tc.adminPassword, newPassword: "admin's new long password" })).status,
    ).toBe(403);
    const weak = await post(
      admin,
      "/auth/password",
      { currentPassword: tc.adminPassword, newPassword: "short" },
      { "x-baton-csrf": admin.csrf },
    );
    expect(weak.status).toBe(400);
    const wrong = await post(
      admin,
      "/auth/password",
      { currentPassword: "not it at all", newPassword: "admin's new long password" },
      { "x-baton-csrf": admin.csrf },
    );
    expect(wrong.status).toBe(401);
    const changed = await post(
      admin,
      "/auth/password",
      { currentPassword: tc.adminPassword, newPassword: "admin's new long password" },
      { "x-baton-csrf": admin.csrf },
    );
    expect(changed.status).toBe(200);
    expect(((await changed.json()) as WhoAmIJson).mustChangePassword).toBe(false);
    expect((await admin.actions().listDirectory({})).users.length).toBeGreaterThan(0);
    // The old one-time password no longer signs in.
    const old = await post(new Browser(tc.url), "/auth/login", { username: "admin", password: tc.adminPassword });
    expect(old.status).toBe(401);
  });
});

describe("first start", () => {
  it("creates the bootstrap admin and prints its one-time password once", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "baton-bootstrap-"));
    try {
      const env = { BATON_USERS_FILE: path.join(dir, "users.json"), BATON_SESSION_SECRET_FILE: path.join(dir, "session-secret") };
      const first = await setupAccounts(env, quiet, { scrypt: TEST_SCRYPT });
      const notice = bootstrapNotice(first, "http://127.0.0.1:3000");
      expect(notice).toContain("Sign in at:  http://127.0.0.1:3000/login");
      expect(notice).toContain(`Password:    ${first.bootstrap.password ?? "?"}`);
      const login = await first.accounts.login({ username: "admin", password: first.bootstrap.password ?? "", ip: "127.0.0.1" });
      expect(login).toMatchObject({ ok: true, mustChangePassword: true });

      const second = await setupAccounts(env, quiet, { scrypt: TEST_SCRYPT });
      expect(second.bootstrap.created).toBe(false);
      expect(bootstrapNotice(second, "http://127.0.0.1:3000")).toBeNull();
      expect(second.secret.equals(first.secret)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("reads behind sign-in (BATON_REQUIRE_SIGN_IN)", () => {
  const extra: TestConsole[] = [];
  afterEach(async () => {
    while (extra.length) await extra.pop()?.close();
  });

  it("is on by default: BATON_REQUIRE_SIGN_IN=0 opens reads to anyone", async () => {
    const anonymous = new Browser(tc.url);
    expect((await refusal(anonymous.console().getGatewayStats({}))).code).toBe(Code.Unauthenticated);
    const open = await startTestConsole([], { BATON_REQUIRE_SIGN_IN: "0" });
    extra.push(open);
    expect((await new Browser(open.url).console().getGatewayStats({})).runtimeKind).toBe("embedded");
    expect(await (await fetch(`${open.url}/auth/methods`)).json()).toEqual({ password: true, oidc: false, signInRequired: false });
  });

  it("when on, needs a signed-in account (a viewer is enough) for every ConsoleService call", async () => {
    const locked = await startTestConsole([{ username: "victor", role: "viewer", name: "Victor" }], { BATON_REQUIRE_SIGN_IN: "1" });
    extra.push(locked);
    const anonymous = new Browser(locked.url);
    expect((await refusal(anonymous.console().getGatewayStats({}))).code).toBe(Code.Unauthenticated);
    const stream = anonymous.console().watchSessionChanges({});
    expect(
      (
        await refusal(
          (async () => {
            for await (const _ of stream) void _;
          })(),
        )
      ).code,
    ).toBe(Code.Unauthenticated);
    expect((await refusal(anonymous.console().getSessionSummary({ sessionId: uuid() }))).code).toBe(Code.Unauthenticated);
    expect((await refusal(anonymous.console().listSessionPage({}))).code).toBe(Code.Unauthenticated);
    const viewer = await signedIn(locked, "victor");
    expect((await viewer.console().getGatewayStats({})).runtimeKind).toBe("embedded");
  });
});

describe("OIDC sign-in through the console", () => {
  let op: TestOidcProvider;
  let oc: TestConsole;

  async function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
      const srv = net.createServer();
      srv.once("error", reject);
      srv.listen(0, "127.0.0.1", () => {
        const port = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(port));
      });
    });
  }

  beforeAll(async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    op = await startOidcProvider({
      redirectUris: [`${origin}/auth/oidc/callback`],
      accounts: [
        {
          sub: "sub-alice",
          username: "alice-idp",
          password: "alice-idp-pw",
          claims: { email: "alice@example.com", email_verified: true, name: "Alice (IdP)" },
        },
        { sub: "sub-zoe", username: "zoe", password: "zoe-pw", claims: { name: "Zoe", preferred_username: "zoe" } },
      ],
    });
    oc = await startTestConsole([{ username: "alice", role: "operator", name: "Alice Ng" }], {
      PORT: String(port),
      BATON_OIDC_ISSUER: op.issuer,
      BATON_OIDC_CLIENT_ID: op.clientId,
      BATON_OIDC_CLIENT_SECRET: op.clientSecret,
    });
    // Link alice's account by verified email.
    const { updateUsersFile } = await import("@/lib/accounts/users-file");
    await updateUsersFile(oc.usersFile, (data) => {
      const a = data.users.find((u) => u.username === "alice");
      if (a) a.email = "alice@example.com";
    });
  }, 30_000);

  afterAll(async () => {
    await oc?.close();
    await op?.close();
  });

  async function oidcSignIn(username: string, password: string, returnTo: string) {
    const start = await fetch(`${oc.url}/auth/oidc/login?returnTo=${encodeURIComponent(returnTo)}`, { redirect: "manual" });
    expect(start.status).toBe(302);
    const state = (start.headers.getSetCookie()[0] ?? "").split(";")[0] ?? "";
    expect(state).toMatch(/^baton_oidc=/);
    const callbackUrl = await op.signIn(start.headers.get("location") ?? "", { username, password });
    const back = new URL(callbackUrl);
    return fetch(`${oc.url}${back.pathname}${back.search}`, { headers: { cookie: state }, redirect: "manual" });
  }

  it("reports which sign-in methods are on", async () => {
    expect(await (await fetch(`${oc.url}/auth/methods`)).json()).toEqual({ password: true, oidc: true, signInRequired: true });
    expect(await (await fetch(`${tc.url}/auth/methods`)).json()).toEqual({ password: true, oidc: false, signInRequired: true });
    expect((await fetch(`${tc.url}/auth/oidc/login`, { redirect: "manual" })).status).toBe(404);
  });

  it("signs a linked person in as their users-file account and returns them where they were", async () => {
    const res = await oidcSignIn("alice-idp", "alice-idp-pw", "/sessions/abc?tab=timeline");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/sessions/abc?tab=timeline");
    const cookies = res.headers.getSetCookie();
    expect(cookies.some((c) => c.startsWith("baton_oidc=; "))).toBe(true);
    const b = new Browser(oc.url);
    b.keepCookies(res);
    const me = (await (await b.whoami()).json()) as WhoAmIJson;
    expect(me).toMatchObject({ username: "alice", role: "operator", participantId: "human:alice", authMethod: "oidc" });
  });

  it("returns to the console after an OIDC sign-in started with a hostile returnTo (issue 10, item 1)", async () => {
    for (const returnTo of ["/.//evil.example/login", "/%2e//evil.example", "//evil.example"]) {
      const res = await oidcSignIn("alice-idp", "alice-idp-pw", returnTo);
      expect(res.status, returnTo).toBe(302);
      expect(res.headers.get("location"), returnTo).toBe("/");
    }
  });

  it("sends a failed sign-in back to the login page with a message", async () => {
    const start = await fetch(`${oc.url}/auth/oidc/login`, { redirect: "manual" });
    const callbackUrl = await op.signIn(start.headers.get("location") ?? "", { username: "zoe", password: "zoe-pw" });
    const back = new URL(callbackUrl);
    // No state cookie: the sign-in was started elsewhere.
    const res = await fetch(`${oc.url}${back.pathname}${back.search}`, { redirect: "manual" });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location") ?? "", oc.url);
    expect(location.pathname).toBe("/login");
    expect(location.searchParams.get("error")).toBe("oidc");
    // A code, not a sentence: the page prints the fixed text for it (never text from its URL).
    expect(location.searchParams.get("reason")).toBe("state");
    expect(location.searchParams.has("message")).toBe(false);
    expect(loginErrorMessage("oidc", location.searchParams.get("reason"))).toContain("sign in again");
  });
});
