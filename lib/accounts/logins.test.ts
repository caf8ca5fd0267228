import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LoginLimiter, SlidingWindow } from "@/lib/accounts/rate-limit";
import { allowedOriginsFor, checkCsrf, checkOrigin } from "@/lib/accounts/csrf";
import {
  clearLoginCookies,
  loadLoginSecret,
  loginCookie,
  readLoginCookie,
  signLoginId,
  verifyLoginCookieValue,
} from "@/lib/accounts/login-cookie";
import { LoginStore, type Principal } from "@/lib/accounts/logins";
import { isSecureRequest, readCookie } from "@/lib/accounts/request";

const SECRET = Buffer.from("0123456789abcdef0123456789abcdef-test-secret");
const alice: Principal = {
  username: "alice",
  displayName: "Alice",
  role: "operator",
  participantId: "human:alice",
  authMethod: "password",
  ephemeral: false,
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-sessions-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("session secret", () => {
  it("uses BATON_SESSION_SECRET when set, and refuses short ones", async () => {
    const s = "x".repeat(40);
    expect((await loadLoginSecret({ env: { BATON_SESSION_SECRET: s }, file: path.join(dir, "s") })).toString()).toBe(s);
    await expect(loadLoginSecret({ env: { BATON_SESSION_SECRET: "short" } })).rejects.toThrow(/at least 32 characters/);
  });

  it("generates one secret, persisted with mode 0600, and reuses it", async () => {
    const file = path.join(dir, "data", "session-secret");
    const [a, b] = await Promise.all([loadLoginSecret({ env: {}, file }), loadLoginSecret({ env: {}, file })]);
    expect(a.length).toBeGreaterThanOrEqual(32);
    expect(a.equals(b as Buffer)).toBe(true);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await loadLoginSecret({ env: {}, file })).equals(a)).toBe(true);
    expect((await readFile(file, "utf8")).trim()).toBe(a.toString());
  });
});

describe("signed cookie values", () => {
  it("round-trips and rejects tampering", () => {
    const sid = "A".repeat(43);
    const v = signLoginId(SECRET, sid);
    expect(verifyLoginCookieValue(SECRET, v)).toBe(sid);
    expect(verifyLoginCookieValue(Buffer.from("another secret that is long enough!!"), v)).toBeNull();
    expect(verifyLoginCookieValue(SECRET, `B${v.slice(1)}`)).toBeNull();
    expect(verifyLoginCookieValue(SECRET, v.slice(0, -1))).toBeNull();
    expect(verifyLoginCookieValue(SECRET, sid)).toBeNull();
    expect(verifyLoginCookieValue(SECRET, "")).toBeNull();
  });

  it("accepts only the encoding it issued: other spellings of the same MAC bytes are refused", () => {
    const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    for (let i = 0; i < 64; i++) {
      const sid = String.fromCharCode(65 + (i % 26)).repeat(43);
      const v = signLoginId(SECRET, `${sid.slice(0, 40)}${i.toString().padStart(3, "0")}`);
      const last = v.at(-1) as string;
      // The last of 43 base64url characters carries 4 bits and 2 unused ones: its 3 siblings decode to the same bytes.
      const group = Math.floor(B64.indexOf(last) / 4) * 4;
      for (const sibling of B64.slice(group, group + 4)) {
        if (sibling === last) continue;
        const spelled = `${v.slice(0, -1)}${sibling}`;
        expect(Buffer.from(spelled.split(".")[1] as string, "base64url")).toEqual(Buffer.from(v.split(".")[1] as string, "base64url"));
        expect(verifyLoginCookieValue(SECRET, spelled), spelled).toBeNull();
      }
      expect(verifyLoginCookieValue(SECRET, v)).not.toBeNull();
    }
  });
});

describe("LoginStore", () => {
  it("creates fresh sessions and finds them by cookie", () => {
    const store = new LoginStore({ secret: SECRET });
    const a = store.create(alice);
    const b = store.create(alice);
    expect(a.login.id).not.toBe(b.login.id);
    expect(a.login.csrfToken).not.toBe(b.login.csrfToken);
    expect(store.get(a.cookieValue)?.principal.username).toBe("alice");
    expect(store.get(`${a.login.id}.${"A".repeat(43)}`)).toBeUndefined();
    expect(store.get(undefined)).toBeUndefined();
    store.destroy(a.login);
    expect(store.get(a.cookieValue)).toBeUndefined();
    expect(store.get(b.cookieValue)).toBeDefined();
  });

  it("expires on idle and on the absolute limit", () => {
    let now = 0;
    const store = new LoginStore({ secret: SECRET, idleMs: 1000, absoluteMs: 5000, now: () => now });
    const { cookieValue, login } = store.create(alice);
    expect(store.endsAt(login)).toBe(1000);
    for (now = 900; now < 4900; now += 900) expect(store.get(cookieValue)).toBeDefined();
    now = 5000;
    expect(store.get(cookieValue)).toBeUndefined();

    now = 0;
    const idle = store.create(alice);
    now = 1000;
    expect(store.get(idle.cookieValue)).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it("bounds sessions per user and overall, and ends a user's sessions", () => {
    const store = new LoginStore({ secret: SECRET, maxPerUser: 2, maxLogins: 3 });
    const a1 = store.create(alice);
    const a2 = store.create(alice);
    const a3 = store.create(alice);
    expect(store.get(a1.cookieValue)).toBeUndefined();
    expect(store.get(a2.cookieValue)).toBeDefined();
    const bob = store.create({ ...alice, username: "bob" });
    const carol = store.create({ ...alice, username: "carol" });
    expect(store.size).toBe(3);
    expect(store.get(carol.cookieValue)).toBeDefined();
    // The global bound dropped the oldest session (a2).
    expect(store.get(a2.cookieValue)).toBeUndefined();
    expect(store.destroyForUser("alice", a3.login.id)).toBe(0);
    expect(store.get(a3.cookieValue)).toBeDefined();
    expect(store.destroyForUser("alice")).toBe(1);
    expect(store.get(a3.cookieValue)).toBeUndefined();
    expect(store.get(bob.cookieValue)).toBeDefined();
  });

  it("never groups OIDC-only users with users-file names", () => {
    const store = new LoginStore({ secret: SECRET });
    const local = store.create(alice);
    const sso = store.create({ ...alice, ephemeral: true, authMethod: "oidc", oidcSubject: "sub-1" });
    expect(store.destroyForUser("alice")).toBe(1);
    expect(store.get(local.cookieValue)).toBeUndefined();
    expect(store.get(sso.cookieValue)).toBeDefined();
  });
});

describe("cookies", () => {
  it("sets HttpOnly, SameSite=Lax, Path=/ and Secure with the __Host- name on https", () => {
    expect(loginCookie("v.s", { secure: false, maxAgeSeconds: 60 })).toBe("baton_session=v.s; Path=/; HttpOnly; SameSite=Lax; Max-Age=60");
    expect(loginCookie("v.s", { secure: true, maxAgeSeconds: 60 })).toBe(
      "__Host-baton_session=v.s; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Secure",
    );
    expect(clearLoginCookies({ secure: true })).toEqual([
      "baton_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure",
      "__Host-baton_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure",
    ]);
  });

  it("reads cookies from Node and fetch headers", () => {
    expect(readCookie("a=1; baton_session=x.y; b=2", "baton_session")).toBe("x.y");
    expect(readCookie("baton_session_x=1", "baton_session")).toBeUndefined();
    expect(readCookie("a=%E0%A4%A", "a")).toBeUndefined();
    expect(readLoginCookie({ cookie: "__Host-baton_session=h.s; baton_session=p.s" })).toBe("h.s");
    expect(readLoginCookie(new Headers({ cookie: "baton_session=p.s" }))).toBe("p.s");
  });

  it("decides Secure from TLS, configuration or a trusted proxy", () => {
    expect(isSecureRequest({ headers: {} }, {})).toBe(false);
    expect(isSecureRequest({ headers: {}, encrypted: true }, {})).toBe(true);
    expect(isSecureRequest({ headers: {} }, { BATON_COOKIE_SECURE: "1" })).toBe(true);
    expect(isSecureRequest({ headers: { "x-forwarded-proto": "https" } }, {})).toBe(false);
    expect(isSecureRequest({ headers: { "x-forwarded-proto": "https, http" } }, { BATON_TRUST_PROXY: "1" })).toBe(true);
    expect(isSecureRequest({ headers: new Headers(), url: "https://baton.example/x" }, {})).toBe(true);
  });
});

describe("CSRF", () => {
  const origins = ["http://localhost:3000"];
  const session = { csrfToken: "tok-123" };
  const post = (headers: Record<string, string>) => ({ method: "POST", headers });

  it("accepts same-origin requests carrying the session token", () => {
    expect(
      checkCsrf(post({ origin: "http://localhost:3000", "sec-fetch-site": "same-origin", "x-baton-csrf": "tok-123" }), session, {
        allowedOrigins: origins,
      }),
    ).toEqual({ ok: true });
    // Non-browser clients send neither Origin nor Sec-Fetch-Site: the token alone decides.
    expect(checkCsrf(post({ "x-baton-csrf": "tok-123" }), session, { allowedOrigins: origins })).toEqual({ ok: true });
    expect(checkCsrf({ method: "GET", headers: {} }, undefined, { allowedOrigins: origins })).toEqual({ ok: true });
  });

  it("refuses with a reason", () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ "x-baton-csrf": "tok-123", "sec-fetch-site": "cross-site" }, "cross-site request refused (Sec-Fetch-Site: cross-site)"],
      [{ "x-baton-csrf": "tok-123", "sec-fetch-site": "same-site" }, "cross-site request refused (Sec-Fetch-Site: same-site)"],
      [{ "x-baton-csrf": "tok-123", origin: "https://evil.example" }, "request refused: origin https://evil.example is not this console"],
      [{ "x-baton-csrf": "tok-123", origin: "null" }, "request refused: its Origin header is opaque or malformed"],
      [{ origin: "http://localhost:3000" }, "missing x-baton-csrf header"],
      [{ "x-baton-csrf": "tok-124" }, "wrong x-baton-csrf token (sign in again if this persists)"],
      [{ "x-baton-csrf": "tok" }, "wrong x-baton-csrf token (sign in again if this persists)"],
    ];
    for (const [headers, reason] of cases) {
      expect(checkCsrf(post(headers), session, { allowedOrigins: origins })).toEqual({ ok: false, reason });
    }
    expect(checkCsrf(post({ "x-baton-csrf": "tok-123" }), undefined, { allowedOrigins: origins })).toEqual({
      ok: false,
      reason: "not signed in",
    });
  });

  it("checks the origin alone for sign-in and derives allowed origins", () => {
    expect(checkOrigin(new Headers({ origin: "http://LOCALHOST:3000" }), origins)).toEqual({ ok: true });
    expect(checkOrigin({ origin: "http://localhost:3001" }, origins).ok).toBe(false);
    expect(allowedOriginsFor({ headers: { host: "baton.local:3000" } }, {})).toEqual(["http://baton.local:3000"]);
    expect(allowedOriginsFor({ headers: { host: "baton.local" }, encrypted: true }, {})).toEqual(["https://baton.local"]);
    expect(allowedOriginsFor({ headers: { host: "evil" } }, { BATON_PUBLIC_ORIGIN: "https://baton.example, https://b.example" })).toEqual([
      "https://baton.example",
      "https://b.example",
    ]);
  });
});

describe("rate limiting", () => {
  it("slides the window", () => {
    let now = 0;
    const w = new SlidingWindow({ limit: 3, windowMs: 1000, now: () => now });
    w.hit("k");
    now = 100;
    w.hit("k");
    now = 200;
    w.hit("k");
    expect(w.check("k")).toEqual({ allowed: false, retryAfterMs: 800 });
    now = 1000;
    expect(w.check("k")).toEqual({ allowed: true, retryAfterMs: 0 });
    now = 1050;
    w.hit("k"); // the hits at 100 and 200 still count
    expect(w.check("k")).toEqual({ allowed: false, retryAfterMs: 50 });
    w.reset("k");
    expect(w.check("k").allowed).toBe(true);
  });

  it("forgets the least recently used keys beyond its bound", () => {
    const w = new SlidingWindow({ limit: 1, windowMs: 1000, maxKeys: 2 });
    w.hit("a");
    w.hit("b");
    w.hit("c");
    expect(w.size).toBe(2);
    expect(w.check("a").allowed).toBe(true);
    expect(w.check("c").allowed).toBe(false);
  });

  it("limits per username+address and per address", () => {
    let now = 0;
    const l = new LoginLimiter({ perUserAndIp: { limit: 2, windowMs: 60_000 }, perIp: { limit: 3, windowMs: 60_000 }, now: () => now });
    l.failed("alice", "1.1.1.1");
    l.failed("alice", "1.1.1.1");
    expect(l.check("alice", "1.1.1.1")).toEqual({ allowed: false, retryAfterMs: 60_000 });
    expect(l.check("alice", "2.2.2.2").allowed).toBe(true);
    expect(l.check("bob", "1.1.1.1").allowed).toBe(true);
    l.failed("bob", "1.1.1.1");
    expect(l.check("carol", "1.1.1.1").allowed).toBe(false);
    now = 60_001;
    expect(l.check("alice", "1.1.1.1").allowed).toBe(true);
    l.failed("dave", "3.3.3.3");
    l.succeeded("dave", "3.3.3.3");
    l.failed("dave", "3.3.3.3");
    expect(l.check("dave", "3.3.3.3").allowed).toBe(true);
  });
});

describe("session events (open streams follow them)", () => {
  it("tell listeners about every session that ends or changes, however it happens, and peek never counts as activity", () => {
    let now = 1_000;
    const store = new LoginStore({ secret: SECRET, idleMs: 100, absoluteMs: 10_000, maxPerUser: 2, now: () => now });
    const events: string[] = [];
    const off = store.onLoginEvent((e) => events.push(`${e.kind}:${e.key.slice(0, 4)}`));
    const short = (k: string) => k.slice(0, 4);
    const a = store.create(alice).login;
    const b = store.create(alice).login;
    // A third sign-in evicts the oldest (maxPerUser 2).
    const c = store.create(alice).login;
    expect(events).toEqual([`ended:${short(a.key)}`]);
    store.update(b, { principal: { ...alice, role: "viewer" } });
    store.update(b, { principal: { ...alice, role: "viewer" } }); // no change, no event
    expect(events.at(-1)).toBe(`updated:${short(b.key)}`);
    expect(events).toHaveLength(2);
    store.destroy(b);
    expect(events.at(-1)).toBe(`ended:${short(b.key)}`);
    // Idle expiry, noticed by peek (which does not refresh the idle timer).
    now += 60;
    expect(store.peek(c.key)).toBe(c);
    expect(c.lastSeenAt).toBe(1_000);
    now += 60;
    expect(store.peek(c.key)).toBeUndefined();
    expect(events.at(-1)).toBe(`ended:${short(c.key)}`);
    // destroyForUser ends every remaining one.
    const d = store.create(alice).login;
    const e = store.create({ ...alice, username: "eve" }).login;
    store.destroyForUser("alice");
    expect(events.at(-1)).toBe(`ended:${short(d.key)}`);
    off();
    store.destroy(e);
    expect(events.at(-1)).toBe(`ended:${short(d.key)}`);
  });
});
