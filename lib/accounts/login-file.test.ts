import { mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Accounts, createAccountsFromEnv } from "@/lib/accounts/accounts";
import { TEST_SCRYPT, hashPassword } from "@/lib/accounts/password";
import { LoginFile, loginsFilePath, type Scheduler, type LoginFileLogger } from "@/lib/accounts/login-file";
import { parseStoredLogin, secretFingerprint } from "@/lib/accounts/login-file-format";
import { loginKey } from "@/lib/accounts/login-cookie";
import { LoginStore, type Principal } from "@/lib/accounts/logins";
import { updateUsersFile, writeUsersFile } from "@/lib/accounts/users-file";

const SECRET = Buffer.from("0123456789abcdef0123456789abcdef-test-secret");
const alice: Principal = {
  username: "alice",
  displayName: "Alice",
  role: "operator",
  participantId: "human:alice",
  authMethod: "password",
  ephemeral: false,
};
const zoe: Principal = {
  username: "oidc:zoe",
  displayName: "Zoe",
  role: "viewer",
  participantId: "oidc:sub-zoe",
  authMethod: "oidc",
  oidcSubject: "sub-zoe",
  ephemeral: true,
};

let dir: string;
let file: string;
let now: number;
let warnings: Array<{ obj: Record<string, unknown>; msg: string }>;
const logger: LoginFileLogger = { info: () => undefined, warn: (obj, msg) => warnings.push({ obj, msg }) };

/** Timers that fire only when the test says so. */
function manualScheduler() {
  const timers: Array<{ fn: () => void; ms: number; live: boolean }> = [];
  const scheduler: Scheduler = (fn, ms) => {
    const t = { fn, ms, live: true };
    timers.push(t);
    return () => {
      t.live = false;
    };
  };
  return {
    scheduler,
    pending: () => timers.filter((t) => t.live).map((t) => t.ms),
    fire() {
      for (const t of timers.filter((x) => x.live)) {
        t.live = false;
        t.fn();
      }
    },
  };
}

function newStore(options: { idleMs?: number; absoluteMs?: number; maxPerUser?: number } = {}): LoginStore {
  return new LoginStore({ secret: SECRET, now: () => now, ...options });
}

async function open(store: LoginStore, extra: { secret?: Buffer; scheduler?: Scheduler } = {}) {
  const sf = new LoginFile({
    file,
    secret: extra.secret ?? SECRET,
    logger,
    now: () => now,
    ...(extra.scheduler ? { scheduler: extra.scheduler } : {}),
  });
  const load = await sf.attach(store);
  return { sf, load };
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-session-file-"));
  file = path.join(dir, "console-sessions.json");
  now = 1_700_000_000_000;
  warnings = [];
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("loginsFilePath", () => {
  it("defaults to console-sessions.json next to the session secret, and BATON_SESSIONS_FILE=off turns it off", () => {
    expect(loginsFilePath({})).toBe(path.resolve("data", "console-sessions.json"));
    expect(loginsFilePath({ BATON_SESSION_SECRET_FILE: "/srv/baton/secret" })).toBe("/srv/baton/console-sessions.json");
    expect(loginsFilePath({ BATON_SESSIONS_FILE: "/var/lib/baton/s.json" })).toBe("/var/lib/baton/s.json");
    expect(loginsFilePath({ BATON_SESSIONS_FILE: "off" })).toBeNull();
    expect(loginsFilePath({ BATON_SESSIONS_FILE: " OFF " })).toBeNull();
  });

  it("reads BATON_LOGINS_FILE first, and BATON_SESSIONS_FILE (its older name) when it is unset or empty", () => {
    expect(loginsFilePath({ BATON_LOGINS_FILE: "/var/lib/baton/l.json" })).toBe("/var/lib/baton/l.json");
    expect(loginsFilePath({ BATON_LOGINS_FILE: "/var/lib/baton/l.json", BATON_SESSIONS_FILE: "/var/lib/baton/s.json" })).toBe(
      "/var/lib/baton/l.json",
    );
    expect(loginsFilePath({ BATON_LOGINS_FILE: "off", BATON_SESSIONS_FILE: "/var/lib/baton/s.json" })).toBeNull();
    expect(loginsFilePath({ BATON_LOGINS_FILE: " ", BATON_SESSIONS_FILE: "/var/lib/baton/s.json" })).toBe("/var/lib/baton/s.json");
    expect(loginsFilePath({ BATON_LOGINS_FILE: "", BATON_SESSIONS_FILE: "off" })).toBeNull();
  });
});

describe("LoginFile", () => {
  it("round-trips: a new store from the same file accepts the same cookie, with the same CSRF token and principal", async () => {
    const a = newStore();
    const { sf } = await open(a);
    const made = a.create(alice, { ip: "10.0.0.1", userAgent: "Firefox", credentialTag: "A".repeat(22) });
    const sso = a.create(zoe, { ip: "10.0.0.2" });
    await sf.flush();

    now += 60_000;
    const b = newStore();
    const { load } = await open(b);
    expect(load).toEqual({ restored: 2, dropped: 0 });
    const back = b.get(made.cookieValue);
    expect(back).toMatchObject({
      id: made.login.id,
      key: made.login.key,
      principal: alice,
      csrfToken: made.login.csrfToken,
      createdAt: made.login.createdAt,
      expiresAt: made.login.expiresAt,
      lastSeenAt: now,
      ip: "10.0.0.1",
      userAgent: "Firefox",
      credentialTag: "A".repeat(22),
    });
    expect(b.get(sso.cookieValue)?.principal).toEqual(zoe);
    // A forged cookie for a restored session is still refused.
    expect(b.get(`${made.login.id}.${"A".repeat(43)}`)).toBeUndefined();
    // Ending a restored session by record works (it is keyed by the id's hash).
    b.destroyForUser("alice", undefined);
    expect(b.get(made.cookieValue)).toBeUndefined();
  });

  it("writes no raw session id or cookie, with mode 0600 and a version", async () => {
    const store = newStore();
    const { sf } = await open(store);
    const made = [store.create(alice), store.create(alice), store.create(zoe)];
    await sf.flush();
    const text = await readFile(file, "utf8");
    for (const m of made) {
      expect(text).not.toContain(m.login.id);
      expect(text).not.toContain(m.cookieValue.split(".")[1]);
      expect(text).toContain(loginKey(m.login.id));
      expect(text).toContain(m.login.csrfToken);
    }
    expect(text).not.toContain(SECRET.toString());
    const data = JSON.parse(text) as { version: number; secretFingerprint: string; sessions: Record<string, unknown> };
    expect(data.version).toBe(1);
    expect(data.secretFingerprint).toBe(secretFingerprint(SECRET));
    expect(Object.keys(data.sessions)).toHaveLength(3);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    // No temporary files left behind.
    expect(await readdir(dir)).toEqual(["console-sessions.json"]);
  });

  it("persists sign-out, destroyForUser and principal changes", async () => {
    const a = newStore();
    const { sf } = await open(a);
    const s1 = a.create(alice);
    const s2 = a.create({ ...alice, username: "bob", participantId: "human:bob" });
    const s3 = a.create({ ...alice, username: "carol", participantId: "human:carol" });
    const s4 = a.create({ ...alice, username: "carol", participantId: "human:carol" });
    await sf.flush();
    a.destroy(s1.login);
    expect(a.destroyForUser("carol", s4.login.id)).toBe(1);
    a.update(s2.login, { principal: { ...s2.login.principal, role: "admin" } });
    await sf.flush();

    const b = newStore();
    expect((await open(b)).load.restored).toBe(2);
    expect(b.get(s1.cookieValue)).toBeUndefined();
    expect(b.get(s3.cookieValue)).toBeUndefined();
    expect(b.get(s2.cookieValue)?.principal.role).toBe("admin");
    expect(b.get(s4.cookieValue)).toBeDefined();
  });

  it("drops sessions that expired while the console was down (idle and absolute, with the new store's settings)", async () => {
    const hour = 3_600_000;
    const a = newStore({ idleMs: 8 * hour, absoluteMs: 24 * hour });
    const { sf } = await open(a);
    const old = a.create(alice); // created at t0, used until t0+11h
    now += 7 * hour;
    a.get(old.cookieValue);
    now += 3 * hour;
    const idle = a.create({ ...alice, username: "bob" }); // created at t0+10h, never used again
    now += 1 * hour;
    a.get(old.cookieValue);
    const active = a.create({ ...alice, username: "carol" });
    const shortLived = a.create({ ...alice, username: "dave" });
    await sf.flush();

    // Restart at t0+18h30: bob idle for 8.5 h; alice idle for 7.5 h, within her 24 h.
    now += 7.5 * hour;
    await sf.flush();
    const b = newStore({ idleMs: 8 * hour, absoluteMs: 24 * hour });
    expect((await open(b)).load).toEqual({ restored: 3, dropped: 1 });
    expect(b.get(idle.cookieValue)).toBeUndefined();
    expect(b.get(old.cookieValue)).toBeDefined();

    // A shorter BATON_SESSION_MAX_HOURS applies to restored sessions too, and never lengthens one.
    const c = newStore({ idleMs: 8 * hour, absoluteMs: 12 * hour });
    const { sf: cf, load } = await open(c);
    expect(load.restored).toBe(2);
    expect(c.get(old.cookieValue)).toBeUndefined();
    expect(c.get(active.cookieValue)?.expiresAt).toBe(active.login.createdAt + 12 * hour);
    expect(c.get(shortLived.cookieValue)).toBeDefined();
    await cf.flush();
    const d = newStore({ idleMs: 8 * hour, absoluteMs: 48 * hour });
    await open(d);
    expect(d.get(active.cookieValue)?.expiresAt).toBe(active.login.createdAt + 12 * hour);

    // Past everyone's absolute limit: nothing comes back.
    now += 48 * hour;
    const e = newStore({ idleMs: 100 * hour, absoluteMs: 100 * hour });
    expect((await open(e)).load.restored).toBe(0);
  });

  it("keeps the per-user bound when restoring", async () => {
    const a = newStore({ maxPerUser: 5 });
    const { sf } = await open(a);
    const made = Array.from({ length: 5 }, () => {
      now += 1;
      return a.create(alice);
    });
    await sf.flush();
    const b = newStore({ maxPerUser: 2 });
    expect((await open(b)).load).toEqual({ restored: 2, dropped: 3 });
    expect(made.map((m) => b.get(m.cookieValue) !== undefined)).toEqual([false, false, false, true, true]);
  });

  it("drops malformed records one by one and keeps the rest", async () => {
    const a = newStore();
    const { sf } = await open(a);
    const good = a.create(alice);
    await sf.flush();
    const data = JSON.parse(await readFile(file, "utf8")) as { sessions: Record<string, Record<string, unknown>> };
    const record = data.sessions[good.login.key] ?? {};
    data.sessions["B".repeat(43)] = { ...record, principal: { ...alice, role: "owner" } };
    data.sessions["C".repeat(43)] = { ...record, createdAt: "yesterday" };
    data.sessions["D".repeat(43)] = { ...record, passwordHash: "scrypt$…" };
    data.sessions["not-a-hash"] = record;
    await writeFile(file, JSON.stringify(data));

    const b = newStore();
    expect((await open(b)).load).toEqual({ restored: 1, dropped: 4 });
    expect(b.get(good.cookieValue)?.csrfToken).toBe(good.login.csrfToken);
    expect(warnings.map((w) => w.msg)).toEqual(["sessions file: dropped malformed sessions"]);
    expect(parseStoredLogin("E".repeat(43), { ...record, principal: { ...zoe, oidcSubject: undefined } })).toMatch(/ephemeral/);
  });

  it("moves a corrupt file aside with a warning and starts with no sessions", async () => {
    await writeFile(file, '{"version":1,"sessions":', { mode: 0o600 });
    const store = newStore();
    const { sf, load } = await open(store);
    expect(store.size).toBe(0);
    expect(load.restored).toBe(0);
    expect(load.movedTo).toBe(`${file}.corrupt-2023-11-14T22-13-20-000Z`);
    expect(await readFile(load.movedTo ?? "", "utf8")).toBe('{"version":1,"sessions":');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toContain("moved aside");
    expect(warnings[0]?.obj.problem).toMatch(/not JSON/);

    // New sign-ins go to a fresh file.
    const made = store.create(alice);
    await sf.flush();
    const again = newStore();
    await open(again);
    expect(again.get(made.cookieValue)).toBeDefined();
  });

  it("moves aside a file of another format version", async () => {
    await writeFile(file, JSON.stringify({ version: 2, secretFingerprint: secretFingerprint(SECRET), sessions: {} }));
    const { load } = await open(newStore());
    expect(load.movedTo).toMatch(/\.corrupt-/);
    expect(warnings[0]?.obj.problem).toMatch(/unsupported version 2/);
  });

  it("ignores sessions written under another session secret", async () => {
    const a = newStore();
    const { sf } = await open(a);
    const made = a.create(alice);
    await sf.flush();
    const other = Buffer.from("another-session-secret-that-is-long-enough!!");
    const b = new LoginStore({ secret: other, now: () => now });
    const { sf: bf, load } = await open(b, { secret: other });
    expect(load).toEqual({ restored: 0, dropped: 1 });
    await bf.flush();
    expect(JSON.parse(await readFile(file, "utf8"))).toMatchObject({ secretFingerprint: secretFingerprint(other), sessions: {} });
    expect(made.login.key in (JSON.parse(await readFile(file, "utf8")) as { sessions: object }).sessions).toBe(false);
  });

  it("coalesces writes: many changes, one write; activity alone waits for the slow timer", async () => {
    const timers = manualScheduler();
    const store = newStore();
    const { sf } = await open(store, { scheduler: timers.scheduler });
    expect(timers.pending()).toEqual([]);
    const made = Array.from({ length: 50 }, () => store.create(alice, { ip: "10.0.0.1" }));
    store.destroy(made[49]?.login ?? "");
    expect(timers.pending()).toEqual([250]);
    expect(sf.writes).toBe(0);
    timers.fire();
    await sf.flush();
    expect(sf.writes).toBe(1);

    // Requests only refresh idle timers: one write per 30 s at most.
    for (let i = 0; i < 20; i++) store.get(made[48]?.cookieValue);
    expect(timers.pending()).toEqual([30_000]);
    // A sign-in meanwhile brings the write forward.
    store.create(zoe);
    expect(timers.pending()).toEqual([250]);
    timers.fire();
    await sf.flush();
    expect(sf.writes).toBe(2);
    expect(timers.pending()).toEqual([]);

    // flush() writes a pending refresh at once (shutdown) and cancels the timer.
    now += 5_000;
    store.get(made[48]?.cookieValue);
    await sf.flush();
    expect(sf.writes).toBe(3);
    expect(timers.pending()).toEqual([]);
    const data = JSON.parse(await readFile(file, "utf8")) as { sessions: Record<string, { lastSeenAt: number }> };
    expect(data.sessions[made[48]?.login.key ?? ""]?.lastSeenAt).toBe(now);
    // Nothing pending: flush does not write.
    await sf.flush();
    expect(sf.writes).toBe(3);

    await sf.close();
    store.create(alice);
    expect(timers.pending()).toEqual([]);
  });

  it("keeps changes made during a write for the next one", async () => {
    const store = newStore();
    const { sf } = await open(store);
    const first = store.create(alice);
    const flushing = sf.flush();
    const second = store.create({ ...alice, username: "bob" });
    await flushing;
    await sf.flush();
    const b = newStore();
    await open(b);
    expect(b.get(first.cookieValue)).toBeDefined();
    expect(b.get(second.cookieValue)).toBeDefined();
  });
});

describe("Accounts with a sessions file", () => {
  const PASSWORD = "alice's long password";
  let usersFile: string;

  beforeEach(async () => {
    usersFile = path.join(dir, "users.json");
    await writeUsersFile(usersFile, {
      version: 1,
      users: [
        {
          username: "alice",
          displayName: "Alice Ng",
          role: "operator",
          participantId: "human:alice",
          passwordHash: await hashPassword(PASSWORD, TEST_SCRYPT),
        },
      ],
    });
  });

  const make = async () => {
    const acc = new Accounts({ usersFile, loginSecret: SECRET, scrypt: TEST_SCRYPT, loginsFile: file, now: () => now });
    await acc.restoreLogins();
    return acc;
  };
  const cookie = (v: string) => ({ cookie: `baton_session=${v}` });

  it("keeps the session that changed its password, and ends the others, across a restart", async () => {
    const first = await make();
    const a = await first.login({ username: "alice", password: PASSWORD, ip: "10.0.0.1" });
    const b = await first.login({ username: "alice", password: PASSWORD, ip: "10.0.0.2" });
    if (!a.ok || !b.ok) throw new Error("sign-in failed");
    const auth = await first.authenticate(cookie(a.cookieValue));
    expect(await first.changePassword(auth!, PASSWORD, "a brand new long password", "10.0.0.1")).toEqual({ ok: true });
    await first.flushLogins();

    const second = await make();
    const again = await second.authenticate(cookie(a.cookieValue));
    expect(again?.user.username).toBe("alice");
    expect(second.whoami(again!).csrfToken).toBe(a.login.csrfToken);
    expect(await second.authenticate(cookie(b.cookieValue))).toBeNull();
  });

  it("still applies the users file to restored sessions (disabled users are signed out)", async () => {
    const first = await make();
    const a = await first.login({ username: "alice", password: PASSWORD, ip: "10.0.0.1" });
    if (!a.ok) throw new Error("sign-in failed");
    await first.flushLogins();
    await updateUsersFile(usersFile, (data) => {
      const u = data.users[0];
      if (u) u.disabled = true;
    });
    const second = await make();
    expect(await second.authenticate(cookie(a.cookieValue))).toBeNull();
    await second.flushLogins();
    const third = await make();
    expect(third.logins.size).toBe(0);
  });

  it("BATON_SESSIONS_FILE=off keeps sign-ins in memory only", async () => {
    const acc = await createAccountsFromEnv(
      { BATON_USERS_FILE: usersFile, BATON_SESSION_SECRET_FILE: path.join(dir, "session-secret"), BATON_SESSIONS_FILE: "off" },
      { scrypt: TEST_SCRYPT },
    );
    expect(acc.loginsFile).toBeNull();
    expect((await acc.login({ username: "alice", password: PASSWORD, ip: "10.0.0.1" })).ok).toBe(true);
    await acc.flushLogins();
    expect((await readdir(dir)).sort()).toEqual(["session-secret", "users.json"]);

    const on = await createAccountsFromEnv(
      { BATON_USERS_FILE: usersFile, BATON_SESSION_SECRET_FILE: path.join(dir, "session-secret") },
      { scrypt: TEST_SCRYPT },
    );
    expect(on.loginsFile).toBe(file);
    expect((await on.login({ username: "alice", password: PASSWORD, ip: "10.0.0.1" })).ok).toBe(true);
    await on.flushLogins();
    expect((await readdir(dir)).sort()).toEqual(["console-sessions.json", "session-secret", "users.json"]);
  });
});
