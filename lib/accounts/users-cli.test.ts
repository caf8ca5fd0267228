import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TEST_SCRYPT, verifyPassword } from "@/lib/accounts/password";
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, runUsersCli } from "@/lib/accounts/users-cli";
import { readUsersFile } from "@/lib/accounts/users-file";

let dir: string;
let file: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-cli-"));
  file = path.join(dir, "data", "users.json");
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(args: string[], stdinPassword = "") {
  let out = "";
  let err = "";
  const code = await runUsersCli(
    args,
    {
      out: (t) => (out += t),
      err: (t) => (err += t),
      readPassword: async () => stdinPassword,
      env: { BATON_USERS_FILE: file },
    },
    { scrypt: TEST_SCRYPT },
  );
  return { code, out, err };
}

async function user(name: string) {
  return (await readUsersFile(file))?.users.find((u) => u.username === name);
}

describe("users CLI", () => {
  it("adds a user with a generated one-time password", async () => {
    const r = await run(["add", "Alice", "--role", "operator", "--name", "Alice Ng"]);
    expect(r.code).toBe(EXIT_OK);
    const password = /One-time password: (\S+)/.exec(r.out)?.[1] ?? "";
    expect(password).toHaveLength(20);
    const u = await user("alice");
    expect(u).toMatchObject({
      username: "alice",
      displayName: "Alice Ng",
      role: "operator",
      participantId: "human:alice",
      mustChangePassword: true,
    });
    expect(await verifyPassword(password, u?.passwordHash ?? "")).toBe(true);
  });

  it("adds a user with a password from stdin, a custom participant and OIDC links", async () => {
    const r = await run(
      [
        "add",
        "carol",
        "--role=approver",
        "--participant",
        "human:carol.lee",
        "--email",
        "carol@example.com",
        "--oidc-subject",
        "00u1",
        "--password-stdin",
      ],
      "carol's chosen password",
    );
    expect(r).toMatchObject({ code: EXIT_OK, err: "" });
    expect(r.out).not.toContain("One-time password");
    const u = await user("carol");
    expect(u).toMatchObject({ participantId: "human:carol.lee", email: "carol@example.com", oidcSubject: "00u1", role: "approver" });
    expect(u?.mustChangePassword).toBeUndefined();
    expect(await verifyPassword("carol's chosen password", u?.passwordHash ?? "")).toBe(true);
  });

  it("refuses duplicates and weak passwords with exit code 1", async () => {
    await run(["add", "alice", "--role", "operator"]);
    expect(await run(["add", "alice", "--role", "viewer"])).toMatchObject({
      code: EXIT_FAILURE,
      err: 'error: user "alice" already exists\n',
    });
    expect(await run(["add", "bob", "--role", "viewer", "--participant", "human:alice"])).toMatchObject({
      code: EXIT_FAILURE,
      err: 'error: participant id "human:alice" is already used by "alice"\n',
    });
    expect(await run(["add", "bob", "--role", "viewer", "--password-stdin"], "short")).toMatchObject({
      code: EXIT_FAILURE,
      err: "error: Passwords need at least 10 characters.\n",
    });
    expect(await user("bob")).toBeUndefined();
  });

  it("reports usage errors with exit code 2", async () => {
    const cases: Array<[string[], string]> = [
      [["add", "bob"], "missing role"],
      [["add", "bob", "--role", "owner"], 'unknown role "owner"'],
      [["add", "bad name!", "--role", "viewer"], 'username "bad name!" must be'],
      [["add", "bob", "--role", "viewer", "--participant", "has space"], 'participant id "has space"'],
      [["add", "bob", "--role"], "--role needs a value"],
      [["add", "bob", "--role", "viewer", "--colour", "red"], "unknown option --colour"],
      [["set-role", "bob"], "missing role"],
      [["disable"], "missing <username>"],
      [["list", "--role", "admin"], "--role does not apply to this command"],
      [["frobnicate"], 'unknown command "frobnicate"'],
    ];
    for (const [args, message] of cases) {
      const r = await run(args);
      expect(r.code, args.join(" ")).toBe(EXIT_USAGE);
      expect(r.err).toContain(message);
    }
    expect((await run([])).code).toBe(EXIT_USAGE);
    const help = await run(["help"]);
    expect(help.code).toBe(EXIT_OK);
    expect(help.out).toContain("Usage: npm run users");
  });

  it("changes passwords, roles and the disabled flag", async () => {
    await run(["add", "root", "--role", "admin"]);
    await run(["add", "alice", "--role", "operator", "--password-stdin"], "first password!");
    const before = (await user("alice"))?.passwordHash;

    const p = await run(["passwd", "alice", "--password-stdin"], "second password!");
    expect(p.code).toBe(EXIT_OK);
    const after = await user("alice");
    expect(after?.passwordHash).not.toBe(before);
    expect(await verifyPassword("second password!", after?.passwordHash ?? "")).toBe(true);
    const gen = await run(["passwd", "alice"]);
    expect(gen.out).toMatch(/One-time password: \S{20}/);
    expect((await user("alice"))?.mustChangePassword).toBe(true);
    expect(await run(["passwd", "nobody"])).toMatchObject({
      code: EXIT_FAILURE,
      err: 'error: no user named "nobody" (see: npm run users -- list)\n',
    });

    expect(await run(["set-role", "alice", "approver"])).toMatchObject({ code: EXIT_OK, out: "alice: operator → approver.\n" });
    expect((await user("alice"))?.role).toBe("approver");
    expect(await run(["disable", "alice"])).toMatchObject({ code: EXIT_OK });
    expect((await user("alice"))?.disabled).toBe(true);
    expect(await run(["enable", "alice"])).toMatchObject({ code: EXIT_OK, out: "alice is enabled.\n" });
    expect((await user("alice"))?.disabled).toBeUndefined();
  });

  it("protects the last enabled admin", async () => {
    await run(["add", "root", "--role", "admin"]);
    expect((await run(["disable", "root"])).code).toBe(EXIT_FAILURE);
    expect((await run(["set-role", "root", "viewer"])).code).toBe(EXIT_FAILURE);
    await run(["add", "second", "--role", "admin"]);
    expect((await run(["set-role", "root", "viewer"])).code).toBe(EXIT_OK);
  });

  it("lists users without hashes or tokens", async () => {
    expect((await run(["list"])).out).toBe(`No users in ${file}.\n`);
    await run(["add", "alice", "--role", "operator", "--name", "Alice Ng", "--email", "a@example.com"]);
    await run(["add", "vic", "--role", "viewer", "--password-stdin"], "vic's password!");
    await run(["disable", "vic"]);
    const r = await run(["list"]);
    expect(r.code).toBe(EXIT_OK);
    expect(r.out.split("\n")).toEqual([
      "USERNAME  NAME      ROLE      PARTICIPANT  SIGN-IN        RUNTIME TOKEN  STATUS",
      "alice     Alice Ng  operator  human:alice  password+oidc  no             active, must change password",
      "vic       vic       viewer    human:vic    password       no             disabled",
      "",
    ]);
    const raw = await readFile(file, "utf8");
    const hash = /"passwordHash": "([^"]+)"/.exec(raw)?.[1] ?? "";
    expect(hash).not.toBe("");
    expect(r.out).not.toContain(hash);
    expect(r.out).not.toContain("scrypt");
  });

  it("reports a broken users file with its path and field", async () => {
    const { mkdir, writeFile } = await import("node:fs/promises");
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(
      file,
      JSON.stringify({
        version: 1,
        users: [{ username: "x", displayName: "X", role: "god", participantId: "human:x", passwordHash: "nope" }],
      }),
    );
    const r = await run(["list"]);
    expect(r.code).toBe(EXIT_FAILURE);
    expect(r.err).toContain(`${file} has 2 problems:`);
    expect(r.err).toContain('users[0].role: must be one of viewer, operator, approver, admin (got "god")');
  });
});
