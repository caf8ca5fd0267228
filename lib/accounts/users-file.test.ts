import { mkdtemp, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TEST_SCRYPT, hashPassword, verifyPassword } from "@/lib/accounts/password";
import { UserDirectory } from "@/lib/accounts/directory";
import {
  UsersFileError,
  bootstrapMessage,
  createUsersFileExclusive,
  ensureBootstrapAdmin,
  readUsersFile,
  updateUsersFile,
  usersFilePath,
  usersFilePermissionWarning,
  validateUsersFile,
  writeUsersFile,
  type UsersFile,
} from "@/lib/accounts/users-file";

let dir: string;
let file: string;
let hash: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-users-"));
  file = path.join(dir, "data", "users.json");
  hash ??= await hashPassword("a good password", TEST_SCRYPT);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const alice = () => ({ username: "alice", displayName: "Alice", role: "operator", participantId: "human:alice", passwordHash: hash });

function problemsOf(raw: unknown): string[] {
  try {
    validateUsersFile(raw, "/etc/users.json");
  } catch (e) {
    expect(e).toBeInstanceOf(UsersFileError);
    return [...(e as UsersFileError).problems];
  }
  return [];
}

describe("users file validation", () => {
  it("accepts the documented format", () => {
    const data = validateUsersFile(
      {
        version: 1,
        users: [
          alice(),
          {
            username: "carol.lee",
            displayName: "Carol Lee",
            role: "approver",
            participantId: "human:carol",
            passwordHash: hash,
            runtimeToken: "tok-123",
            disabled: false,
            mustChangePassword: true,
            oidcSubject: "00u-carol",
            email: "carol@example.com",
          },
          { username: "sso-only", displayName: "SSO", role: "viewer", participantId: "human:sso", oidcSubject: "abc" },
        ],
      },
      "f",
    );
    expect(data.users).toHaveLength(3);
    expect(data.users[1]?.runtimeToken).toBe("tok-123");
  });

  it("names the file and every bad field", () => {
    let err: unknown;
    try {
      validateUsersFile({ version: 1, users: [{ ...alice(), role: "owner" }] }, "/srv/baton/users.json");
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).toBe(
      '/srv/baton/users.json: users[0].role: must be one of viewer, operator, approver, admin (got "owner")',
    );

    expect(problemsOf({ version: 2, users: {} })).toEqual(["version: must be 1 (got 2)", "users: must be a list"]);
    expect(problemsOf([])).toEqual(['the top level must be an object like {"version": 1, "users": []}']);
    expect(
      problemsOf({
        version: 1,
        users: [
          {
            username: "Alice",
            displayName: "",
            role: "operator",
            participantId: "human alice",
            passwordHash: "md5$abc",
            disabled: "no",
            extra: 1,
          },
          "bob",
        ],
      }),
    ).toEqual([
      "users[0].extra: unknown field",
      "users[0].username: must be 1–64 characters: lowercase letters, digits, '.', '_' or '-', starting with a letter or digit (got \"Alice\")",
      "users[0].displayName: must be 1–100 characters without control characters",
      'users[0].participantId: must be 1–512 characters without spaces or control characters, and not "_runtime" (got "human alice")',
      'users[0].passwordHash: not a valid scrypt hash: must look like "scrypt$N$r$p$salt$hash"',
      'users[0].disabled: must be true or false (got "no")',
      "users[1]: must be an object",
    ]);
  });

  it("requires unique usernames, participant ids, subjects and emails", () => {
    const p = problemsOf({
      version: 1,
      users: [
        { ...alice(), oidcSubject: "s1", email: "A@x.io" },
        { ...alice(), oidcSubject: "s1", email: "a@X.io" },
        { ...alice(), username: "alice2" },
      ],
    });
    expect(p).toEqual([
      'users[1].username: "alice" is already used by users[0]',
      'users[1].participantId: "human:alice" is already used by users[0]',
      'users[1].oidcSubject: "s1" is already used by users[0]',
      'users[1].email: "a@X.io" is already used by users[0]',
      'users[2].participantId: "human:alice" is already used by users[0]',
    ]);
  });

  it("refuses accounts nobody can sign in to, and plaintext passwords", () => {
    const { passwordHash: _unused, ...noHash } = alice();
    expect(problemsOf({ version: 1, users: [noHash] })).toEqual([
      'users[0]: needs a passwordHash, an oidcSubject or an email, or nobody can sign in as "alice"',
    ]);
    expect(problemsOf({ version: 1, users: [{ ...alice(), password: "hunter2" }] })).toEqual(["users[0].password: unknown field"]);
    // The hash is never echoed in errors.
    expect(problemsOf({ version: 1, users: [{ ...alice(), passwordHash: "scrypt$1024$8$1$c2VjcmV0$c2VjcmV0" }] })[0]).not.toContain(
      "c2VjcmV0",
    );
  });

  it("reports invalid JSON with the path", async () => {
    await writeUsersFile(file, { version: 1, users: [] });
    await writeFile(file, "{ nope");
    await expect(readUsersFile(file)).rejects.toThrow(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: is not valid JSON`));
  });

  it("defaults to ./data/users.json and honours BATON_USERS_FILE", () => {
    expect(usersFilePath({})).toBe(path.resolve("data/users.json"));
    expect(usersFilePath({ BATON_USERS_FILE: "/x/u.json" })).toBe("/x/u.json");
  });
});

describe("users file writes", () => {
  it("writes atomically with mode 0600 and leaves no temp files", async () => {
    const data = validateUsersFile({ version: 1, users: [alice()] }, file);
    await writeUsersFile(file, data);
    const st = await stat(file);
    expect(st.mode & 0o777).toBe(0o600);
    expect(await readdir(path.dirname(file))).toEqual(["users.json"]);
    expect(await readUsersFile(file)).toEqual(data);
    expect(await usersFilePermissionWarning(file)).toBeNull();
  });

  it("refuses to write invalid data", async () => {
    const bad = { version: 1, users: [{ ...alice(), role: "root" }] } as unknown as UsersFile;
    await expect(writeUsersFile(file, bad)).rejects.toBeInstanceOf(UsersFileError);
    expect(await readUsersFile(file)).toBeNull();
  });

  it("serializes concurrent read-modify-write cycles", async () => {
    await writeUsersFile(file, { version: 1, users: [] });
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        updateUsersFile(file, (d) => {
          d.users.push({ username: `u${i}`, displayName: `U${i}`, role: "viewer", participantId: `human:u${i}`, passwordHash: hash });
        }),
      ),
    );
    const data = await readUsersFile(file);
    expect(data?.users.map((u) => u.username).sort()).toEqual(["u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7"]);
    expect((await readdir(path.dirname(file))).sort()).toEqual(["users.json"]);
  });

  it("creates exclusively", async () => {
    expect(await createUsersFileExclusive(file, { version: 1, users: [] })).toBe(true);
    expect(await createUsersFileExclusive(file, { version: 1, users: [] })).toBe(false);
    expect((await readdir(path.dirname(file))).sort()).toEqual(["users.json"]);
  });
});

describe("bootstrap admin", () => {
  it("creates a one-time admin on a fresh install, once", async () => {
    const first = await ensureBootstrapAdmin(file, { scrypt: TEST_SCRYPT });
    expect(first.created).toBe(true);
    expect(first.username).toBe("admin");
    expect(first.password).toMatch(/^[A-Za-z0-9]{20}$/);
    const data = await readUsersFile(file);
    const admin = data?.users[0];
    expect(admin).toMatchObject({ username: "admin", role: "admin", participantId: "human:admin", mustChangePassword: true });
    expect(await verifyPassword(first.password ?? "", admin?.passwordHash ?? "")).toBe(true);
    expect(JSON.stringify(data)).not.toContain(first.password);

    const again = await ensureBootstrapAdmin(file, { scrypt: TEST_SCRYPT });
    expect(again).toEqual({ created: false, username: "admin" });
    const msg = bootstrapMessage(first, "http://localhost:3000/", file) ?? "";
    expect(msg).toContain("http://localhost:3000/login");
    expect(msg).toContain(first.password);
    expect(bootstrapMessage(again, "http://localhost:3000", file)).toBeNull();
  });

  it("never creates two admins when started twice at once", async () => {
    const results = await Promise.all([1, 2, 3].map(() => ensureBootstrapAdmin(file, { scrypt: TEST_SCRYPT })));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    const data = await readUsersFile(file);
    expect(data?.users).toHaveLength(1);
  });

  it("validates an existing file and points out a missing admin", async () => {
    await writeUsersFile(file, { version: 1, users: [alice() as UsersFile["users"][number]] });
    const r = await ensureBootstrapAdmin(file, { scrypt: TEST_SCRYPT });
    expect(r).toEqual({ created: false, username: "" });
    expect(bootstrapMessage(r, "http://x", file)).toContain("No enabled admin");
    await writeFile(file, JSON.stringify({ version: 1, users: [{ username: "x" }] }));
    await expect(ensureBootstrapAdmin(file, { scrypt: TEST_SCRYPT })).rejects.toThrow(/users\[0\]\.displayName: required/);
  });
});

describe("UserDirectory", () => {
  it("sees changes made by another writer and fails closed on a broken file", async () => {
    await writeUsersFile(file, { version: 1, users: [alice() as UsersFile["users"][number]] });
    const d = new UserDirectory(file);
    expect((await d.find("alice"))?.role).toBe("operator");
    await updateUsersFile(file, (data) => {
      const u = data.users[0];
      if (u) u.role = "approver";
    });
    expect((await d.find("alice"))?.role).toBe("approver");
    expect((await d.findByParticipantId("human:alice"))?.username).toBe("alice");
    await writeFile(file, JSON.stringify({ version: 1, users: [{ ...alice(), role: "boss" }] }));
    await expect(d.find("alice")).rejects.toBeInstanceOf(UsersFileError);
    const raw = await readFile(file, "utf8");
    expect(raw).toContain("boss");
  });

  it("treats a missing file as no users", async () => {
    const d = new UserDirectory(path.join(dir, "missing.json"));
    expect(await d.users()).toEqual([]);
  });
});
