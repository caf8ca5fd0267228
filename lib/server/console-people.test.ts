import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Accounts } from "@/lib/accounts/accounts";
import { TEST_SCRYPT } from "@/lib/accounts/password";
import { updateUsersFile, writeUsersFile } from "@/lib/accounts/users-file";
import { silentLogger } from "@/lib/gateway/logger";
import { ConsolePeople } from "./console-people";

const SECRET = Buffer.from("a-test-session-secret-that-is-long-enough");
let dir: string;
let usersFile: string;
let accounts: Accounts;
let people: ConsolePeople;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-people-"));
  usersFile = path.join(dir, "users.json");
  await writeUsersFile(usersFile, {
    version: 1,
    users: [{ username: "alice", displayName: "Alice", role: "operator", participantId: "human:alice", email: "alice@example.com" }],
  });
  accounts = new Accounts({ usersFile, loginSecret: SECRET, scrypt: TEST_SCRYPT, usersPollMs: 20 });
  people = new ConsolePeople(accounts, silentLogger);
  await people.start();
});

afterEach(async () => {
  people.close();
  await rm(dir, { recursive: true, force: true });
});

describe("ConsolePeople", () => {
  it("reserves the users file's participant ids and every oidc: id, nothing else", () => {
    expect(people.isReserved("human:alice")).toBe(true);
    expect(people.isReserved("oidc:abc")).toBe(true);
    expect(people.isReserved("human:bob")).toBe(false);
    expect(people.isReserved("agent://alice")).toBe(false);
  });

  it("makes delegate credentials that only this console (this boot) accepts", () => {
    const c = people.credentialFor("human:alice");
    expect(c).toMatch(/^baton-person\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(people.delegated(c)).toBe("human:alice");
    expect(people.delegated(people.credentialFor("human:zoë/ü"))).toBe("human:zoë/ü");
    // Another boot (another secret) cannot be replayed here.
    const other = new ConsolePeople(accounts, silentLogger);
    expect(people.delegated(other.credentialFor("human:alice"))).toBeNull();
    // Tampering with the id or the signature fails.
    const [prefix, id, sig] = c.split(".");
    expect(people.delegated(`${prefix}.${Buffer.from("human:bob").toString("base64url")}.${sig}`)).toBeNull();
    expect(people.delegated(`${prefix}.${id}.${"A".repeat(43)}`)).toBeNull();
    for (const bad of ["human:alice", "baton-person.", "baton-person..x", `baton-person.${id}`, `${c}x`, "Bearer x"])
      expect(people.delegated(bad)).toBeNull();
  });

  it("reserves people added to the users file while it runs", async () => {
    await updateUsersFile(usersFile, (d) => {
      d.users.push({ username: "bob", displayName: "Bob", role: "viewer", participantId: "human:bob", email: "bob@example.com" });
    });
    const until = Date.now() + 3_000;
    while (!people.isReserved("human:bob") && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(people.isReserved("human:bob")).toBe(true);
  });
});
