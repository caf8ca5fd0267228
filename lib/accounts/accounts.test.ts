import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Accounts, createAccountsFromEnv, type AccountsLogger } from "@/lib/accounts/accounts";
import { TEST_SCRYPT, hashPassword } from "@/lib/accounts/password";
import { checkCsrf } from "@/lib/accounts/csrf";
import type { Principal } from "@/lib/accounts/logins";
import { ensureBootstrapAdmin, readUsersFile, updateUsersFile, writeUsersFile } from "@/lib/accounts/users-file";

const SECRET = Buffer.from("a-test-session-secret-that-is-long-enough");
const PASSWORD = "alice's long password";

let dir: string;
let file: string;
let now: number;
let logs: Array<{ level: string; obj: Record<string, unknown>; msg: string }>;
let accounts: Accounts;

const logger: AccountsLogger = {
  info: (obj, msg) => logs.push({ level: "info", obj, msg }),
  warn: (obj, msg) => logs.push({ level: "warn", obj, msg }),
};

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-accounts-"));
  file = path.join(dir, "users.json");
  now = 1_000_000;
  logs = [];
  await writeUsersFile(file, {
    version: 1,
    users: [
      {
        username: "alice",
        displayName: "Alice Ng",
        role: "operator",
        participantId: "human:alice",
        passwordHash: await hashPassword(PASSWORD, TEST_SCRYPT),
        runtimeToken: "rt-alice",
      },
      {
        username: "bob",
        displayName: "Bob",
        role: "viewer",
        participantId: "human:bob",
        passwordHash: await hashPassword("bob's long password", TEST_SCRYPT),
        disabled: true,
      },
      { username: "sso", displayName: "SSO only", role: "viewer", participantId: "human:sso", oidcSubject: "sub-sso" },
    ],
  });
  accounts = new Accounts({ usersFile: file, loginSecret: SECRET, scrypt: TEST_SCRYPT, logger, now: () => now });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const cookieHeader = (cookieValue: string) => ({ cookie: `baton_session=${cookieValue}` });

async function signIn(username = "alice", password = PASSWORD, ip = "10.0.0.1") {
  const r = await accounts.login({ username, password, ip });
  if (!r.ok) throw new Error(r.reason);
  return r;
}

describe("Accounts.login", () => {
  it("signs in with the right password (username is case-insensitive)", async () => {
    const r = await accounts.login({ username: "  Alice ", password: PASSWORD, ip: "10.0.0.1" });
    expect(r).toMatchObject({
      ok: true,
      mustChangePassword: false,
      user: { username: "alice", role: "operator", participantId: "human:alice", authMethod: "password" },
    });
    if (!r.ok) return;
    expect(accounts.cookieFor(r.cookieValue, { secure: false })).toMatch(
      /^baton_session=[\w-]+\.[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=86400$/,
    );
  });

  it("gives one message for unknown users, wrong passwords and password-less accounts", async () => {
    for (const [username, password] of [
      ["alice", "wrong password!"],
      ["nobody", PASSWORD],
      ["sso", "anything at all"],
      ["bad name!", PASSWORD],
    ]) {
      expect(await accounts.login({ username, password, ip: "10.0.0.9" })).toEqual({
        ok: false,
        status: 401,
        reason: "Incorrect username or password.",
      });
    }
  });

  it("tells a disabled user only once the password is right", async () => {
    expect(await accounts.login({ username: "bob", password: "nope nope nope", ip: "1" })).toMatchObject({ status: 401 });
    expect(await accounts.login({ username: "bob", password: "bob's long password", ip: "1" })).toEqual({
      ok: false,
      status: 403,
      reason: "This account is disabled. Ask an admin to enable it.",
    });
  });

  it("validates input shapes", async () => {
    expect(await accounts.login({ username: 1, password: "x", ip: "1" })).toMatchObject({ ok: false, status: 400 });
    expect(await accounts.login({ username: "alice", password: "", ip: "1" })).toMatchObject({ ok: false, status: 400 });
    expect(await accounts.login({ username: "alice", password: "x".repeat(5000), ip: "1" })).toMatchObject({ ok: false, status: 400 });
  });

  it("throttles repeated failures per username and address", async () => {
    for (let i = 0; i < 5; i++) await accounts.login({ username: "alice", password: "wrong password!", ip: "10.0.0.2" });
    const r = await accounts.login({ username: "alice", password: PASSWORD, ip: "10.0.0.2" });
    expect(r).toMatchObject({ ok: false, status: 429, reason: "Too many failed sign-ins. Try again in 15 minutes." });
    // Another address is not affected.
    expect((await accounts.login({ username: "alice", password: PASSWORD, ip: "10.0.0.3" })).ok).toBe(true);
    now += 15 * 60_000 + 1;
    expect((await accounts.login({ username: "alice", password: PASSWORD, ip: "10.0.0.2" })).ok).toBe(true);
  });

  it("one address guessing at many accounts does not lock out the others behind it; a higher per-address limit still stops spraying", async () => {
    const office = "198.51.100.20";
    // 50 failures from one address, spread over many accounts (a colleague
    // mistyping, or someone spraying a password).
    for (let i = 0; i < 50; i++) await accounts.login({ username: `user${i % 25}`, password: "wrong password!", ip: office });
    expect((await accounts.login({ username: "alice", password: PASSWORD, ip: office })).ok).toBe(true);
    // Up to the per-address limit, and beyond it everyone there waits.
    for (let i = 50; i < 250; i++) await accounts.login({ username: `spray${i}`, password: "wrong password!", ip: office });
    expect(await accounts.login({ username: "alice", password: PASSWORD, ip: office })).toMatchObject({ ok: false, status: 429 });
    expect((await accounts.login({ username: "alice", password: PASSWORD, ip: "198.51.100.21" })).ok).toBe(true);
  });

  it("never logs secrets", async () => {
    const r = await signIn();
    await accounts.login({ username: "alice", password: "wrong password!", ip: "1" });
    const text = JSON.stringify(logs);
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain("wrong password!");
    expect(text).not.toContain(r.cookieValue);
    expect(text).not.toContain(r.login.csrfToken);
    expect(text).not.toContain("scrypt$");
    expect(logs.map((l) => l.msg)).toEqual(["signed in", "sign-in failed"]);
  });

  it("reports an invalid users file without exposing it", async () => {
    const { writeFile } = await import("node:fs/promises");
    await writeFile(file, "{}");
    expect(await accounts.login({ username: "alice", password: PASSWORD, ip: "1" })).toMatchObject({ ok: false, status: 503 });
  });
});

describe("Accounts.authenticate / whoami / logout", () => {
  it("resolves the session to the current users-file entry", async () => {
    const r = await signIn();
    const auth = await accounts.authenticate(cookieHeader(r.cookieValue));
    expect(auth?.user.role).toBe("operator");
    expect(auth?.runtimeToken).toBe("rt-alice");
    const who = accounts.whoami(auth!);
    expect(who).toEqual({
      username: "alice",
      displayName: "Alice Ng",
      role: "operator",
      participantId: "human:alice",
      authMethod: "password",
      mustChangePassword: false,
      csrfToken: r.login.csrfToken,
      sessionEndsAt: now + 8 * 3_600_000,
    });
    expect(JSON.stringify(who)).not.toContain("rt-alice");
    // The whoami token satisfies the CSRF check for this session only.
    const headers = { origin: "http://localhost:3000", "x-baton-csrf": who.csrfToken };
    expect(checkCsrf({ method: "POST", headers }, auth!.login, { allowedOrigins: ["http://localhost:3000"] }).ok).toBe(true);
    const other = await signIn();
    expect(checkCsrf({ method: "POST", headers }, other.login, { allowedOrigins: ["http://localhost:3000"] }).ok).toBe(false);
  });

  it("applies role changes at once and drops disabled or deleted users", async () => {
    const r = await signIn();
    await updateUsersFile(file, (d) => {
      const u = d.users.find((x) => x.username === "alice");
      if (u) u.role = "approver";
    });
    expect((await accounts.authenticate(cookieHeader(r.cookieValue)))?.user.role).toBe("approver");
    await updateUsersFile(file, (d) => {
      const u = d.users.find((x) => x.username === "alice");
      if (u) u.disabled = true;
    });
    expect(await accounts.authenticate(cookieHeader(r.cookieValue))).toBeNull();
    await updateUsersFile(file, (d) => {
      const u = d.users.find((x) => x.username === "alice");
      if (u) delete u.disabled;
    });
    // The session was destroyed, not just hidden.
    expect(await accounts.authenticate(cookieHeader(r.cookieValue))).toBeNull();
  });

  it("ends sessions when the password is reset elsewhere (e.g. the CLI)", async () => {
    const r = await signIn();
    const newHash = await hashPassword("reset by an admin", TEST_SCRYPT);
    await updateUsersFile(file, (d) => {
      const u = d.users.find((x) => x.username === "alice");
      if (u) u.passwordHash = newHash;
    });
    expect(await accounts.authenticate(cookieHeader(r.cookieValue))).toBeNull();
    expect((await accounts.login({ username: "alice", password: "reset by an admin", ip: "1" })).ok).toBe(true);
  });

  it("rejects forged, unknown and expired cookies", async () => {
    const r = await signIn();
    expect(await accounts.authenticate({})).toBeNull();
    expect(await accounts.authenticate(cookieHeader(`${r.login.id}.AAAA`))).toBeNull();
    const other = new Accounts({
      usersFile: file,
      loginSecret: Buffer.from("another-secret-that-is-also-long-enough"),
      scrypt: TEST_SCRYPT,
    });
    expect(await other.authenticate(cookieHeader(r.cookieValue))).toBeNull();
    now += 8 * 3_600_000;
    expect(await accounts.authenticate(cookieHeader(r.cookieValue))).toBeNull();
  });

  it("sign-out destroys the session and clears the cookie", async () => {
    const r = await signIn();
    const cleared = accounts.logout(cookieHeader(r.cookieValue), { secure: false });
    expect(cleared).toEqual(["baton_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0"]);
    expect(await accounts.authenticate(cookieHeader(r.cookieValue))).toBeNull();
    expect(accounts.logout({}, { secure: true })).toHaveLength(2);
  });

  it("keeps OIDC-only users from the session, and lets the users file take over or disable them", async () => {
    const principal: Principal = {
      username: "erin",
      displayName: "Erin",
      role: "operator",
      participantId: "oidc:sub-erin",
      authMethod: "oidc",
      oidcSubject: "sub-erin",
      ephemeral: true,
    };
    const { cookieValue } = accounts.startLogin(principal, { ip: "1" });
    expect((await accounts.authenticate(cookieHeader(cookieValue)))?.user).toEqual(principal);
    const linked: Principal = {
      ...principal,
      username: "sso",
      participantId: "human:sso",
      role: "viewer",
      displayName: "SSO only",
      oidcSubject: "sub-sso",
      ephemeral: false,
    };
    const second = accounts.startLogin(linked);
    expect((await accounts.authenticate(cookieHeader(second.cookieValue)))?.user).toMatchObject({
      username: "sso",
      role: "viewer",
      authMethod: "oidc",
    });
    await updateUsersFile(file, (d) => {
      d.users.push({
        username: "erin",
        displayName: "Erin",
        role: "viewer",
        participantId: "human:erin",
        oidcSubject: "sub-erin",
        disabled: true,
      });
    });
    expect(await accounts.authenticate(cookieHeader(cookieValue))).toBeNull();
  });
});

describe("Accounts.changePassword and the bootstrap admin", () => {
  it("forces the one-time password to be replaced, then signs in with the new one", async () => {
    const bootFile = path.join(dir, "fresh", "users.json");
    const boot = await ensureBootstrapAdmin(bootFile, { scrypt: TEST_SCRYPT });
    const acc = new Accounts({ usersFile: bootFile, loginSecret: SECRET, scrypt: TEST_SCRYPT });
    const r = await acc.login({ username: "admin", password: boot.password ?? "", ip: "1" });
    expect(r).toMatchObject({ ok: true, mustChangePassword: true });
    if (!r.ok) return;
    const other = await acc.login({ username: "admin", password: boot.password ?? "", ip: "1" });
    const auth = await acc.authenticate(cookieHeader(r.cookieValue));
    expect(auth?.mustChangePassword).toBe(true);
    expect(acc.whoami(auth!).mustChangePassword).toBe(true);

    expect(await acc.changePassword(auth!, boot.password, "short", "1")).toMatchObject({ ok: false, status: 400 });
    expect(await acc.changePassword(auth!, "not the password", "a brand new password", "1")).toMatchObject({ ok: false, status: 401 });
    expect(await acc.changePassword(auth!, boot.password, boot.password, "1")).toMatchObject({ ok: false, status: 400 });
    expect(await acc.changePassword(auth!, boot.password, "a brand new password", "1")).toEqual({ ok: true });

    const data = await readUsersFile(bootFile);
    expect(data?.users[0]?.mustChangePassword).toBeUndefined();
    expect((await acc.authenticate(cookieHeader(r.cookieValue)))?.mustChangePassword).toBe(false);
    // Other sessions of the user are ended.
    if (other.ok) expect(await acc.authenticate(cookieHeader(other.cookieValue))).toBeNull();
    expect((await acc.login({ username: "admin", password: boot.password ?? "", ip: "2" })).ok).toBe(false);
    expect((await acc.login({ username: "admin", password: "a brand new password", ip: "2" })).ok).toBe(true);
  });

  it("refuses password changes for OIDC sign-ins", async () => {
    const { cookieValue } = accounts.startLogin({
      username: "sso",
      displayName: "S",
      role: "viewer",
      participantId: "human:sso",
      authMethod: "oidc",
      ephemeral: false,
    });
    const auth = await accounts.authenticate(cookieHeader(cookieValue));
    expect(await accounts.changePassword(auth!, "x", "a brand new password", "1")).toMatchObject({ ok: false, status: 403 });
  });
});

describe("createAccountsFromEnv", () => {
  it("reads the users file, secret and timeouts from the environment", async () => {
    const acc = await createAccountsFromEnv(
      {
        BATON_USERS_FILE: file,
        BATON_SESSION_SECRET: "s".repeat(40),
        BATON_SESSION_IDLE_MINUTES: "30",
        BATON_SESSION_MAX_HOURS: "2",
        BATON_SESSIONS_FILE: "off",
      },
      { scrypt: TEST_SCRYPT },
    );
    expect(acc.directory.file).toBe(file);
    expect(acc.logins.idleMs).toBe(30 * 60_000);
    expect(acc.logins.absoluteMs).toBe(2 * 3_600_000);
    expect(acc.loginsFile).toBeNull();
    await expect(
      createAccountsFromEnv({ BATON_USERS_FILE: file, BATON_SESSION_SECRET: "s".repeat(40), BATON_SESSION_IDLE_MINUTES: "soon" }),
    ).rejects.toThrow('BATON_SESSION_IDLE_MINUTES must be a positive number (got "soon")');
  });
});
