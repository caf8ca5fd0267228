// A handoff directory on the real file system: offers, prefix matching,
// compare-and-swap writes (conflicts, writers that ignore the lock), and the
// files Baton must leave alone (invalid, too large, links, pipes).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HandoffDirectory } from "./directory";
import { HandoffError } from "./errors";
import { lockPathFor } from "./lock";
import type { ValidSnapshot } from "./snapshot";

let root: string;
let dir: string;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "baton-hf-"));
  dir = path.join(root, ".handoffs");
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

async function refusal(p: Promise<unknown>): Promise<HandoffError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof HandoffError) return e;
    throw e;
  }
  throw new Error("expected a HandoffError");
}

function ids(...list: string[]): () => string {
  let i = 0;
  return () => list[i++] ?? globalThis.crypto.randomUUID();
}

/** Everything in the directory (names, bytes, mtimes), to prove nothing was touched. */
function fingerprint(d: string): string {
  return fs
    .readdirSync(d)
    .sort()
    .map((n) => {
      const st = fs.lstatSync(path.join(d, n));
      const body = st.isFile()
        ? fs.readFileSync(path.join(d, n)).toString("base64").slice(0, 64)
        : st.isSymbolicLink()
          ? fs.readlinkSync(path.join(d, n))
          : "";
      return `${n}:${st.size}:${st.mtimeMs}:${body}`;
    })
    .join("\n");
}

describe("offer, list, resolve", () => {
  it("creates the directory and a valid file named after the task_id, and never replaces one", async () => {
    const hd = new HandoffDirectory(dir, { newId: ids("aaaa-1", "aaaa-1") });
    const { snapshot } = await hd.offer({ description: "Rotate certs", from: "agent://planner", context: { ticket: "OPS-1" } });
    expect(snapshot.name).toBe("aaaa-1.json");
    expect(JSON.parse(fs.readFileSync(path.join(dir, "aaaa-1.json"), "utf8"))).toMatchObject({
      task_id: "aaaa-1",
      status: "offered",
      to_agent: "",
    });
    expect((await refusal(hd.offer({ description: "again", from: "x" }))).kind).toBe("exists");
    expect(fs.readdirSync(dir)).toEqual(["aaaa-1.json"]); // no temporary or lock files left
  });

  it("matches task ids by prefix: an exact id wins, several matches are ambiguous, none is not-found", async () => {
    const hd = new HandoffDirectory(dir, { newId: ids("abc", "abcd-1", "abcd-2", "xyz") });
    for (let i = 0; i < 4; i++) await hd.offer({ description: `d${i}`, from: "a" });
    expect((await hd.resolve("abc")).name).toBe("abc.json");
    expect((await hd.resolve("x")).name).toBe("xyz.json");
    const amb = await refusal(hd.resolve("abcd"));
    expect(amb.kind).toBe("ambiguous");
    expect(amb.message).toBe('"abcd" matches 2 handoffs (abcd-1, abcd-2); give more of the id');
    expect((await refusal(hd.resolve("nope"))).kind).toBe("not-found");
    expect((await refusal(hd.resolve("../x"))).kind).toBe("bad-input");
  });

  it("lists by status, valid ones by created_at, and invalid ones apart with their reason", async () => {
    let t = Date.UTC(2026, 0, 1);
    const hd = new HandoffDirectory(dir, { newId: ids("b", "a"), now: () => (t += 1000) });
    await hd.offer({ description: "first", from: "x" });
    await hd.offer({ description: "second", from: "x" });
    await hd.act("a", { kind: "accept", agent: "bob" });
    fs.writeFileSync(path.join(dir, "broken.json"), "{");
    const all = await hd.list();
    expect(all.handoffs.map((h) => h.record.task_id)).toEqual(["b", "a"]);
    expect(all.invalid.map((i) => [i.name, i.problems[0]?.code])).toEqual([["broken.json", "not-json"]]);
    expect((await hd.list({ status: "offered" })).handoffs.map((h) => h.record.task_id)).toEqual(["b"]);
  });

  it("stops listing at maxFiles and says so", async () => {
    fs.mkdirSync(dir);
    const hd = new HandoffDirectory(dir, { maxFiles: 3 });
    for (let i = 0; i < 5; i++) await hd.offer({ description: `d${i}`, from: "x" });
    const r = await hd.list();
    expect(r.handoffs).toHaveLength(3);
    expect(r.truncated).toBe(true);
  });
});

describe("compare-and-swap writes", () => {
  it("keeps unknown fields, field order and the file's permission bits", async () => {
    fs.mkdirSync(dir);
    const doc = {
      priority: "p1",
      task_id: "t1",
      status: "offered",
      from_agent: "py-agent",
      description: "from another writer",
      created_at: "2026-11-20T10:00:00.123456",
      updated_at: "2026-11-20T10:00:00.123456",
      x_trace: { id: 7 },
    };
    const file = path.join(dir, "t1.json");
    fs.writeFileSync(file, JSON.stringify(doc));
    fs.chmodSync(file, 0o664);
    const hd = new HandoffDirectory(dir);
    await hd.act("t1", { kind: "accept", agent: "bob" });
    const after = JSON.parse(fs.readFileSync(file, "utf8"));
    expect(Object.keys(after)).toEqual([...Object.keys(doc), "to_agent", "context"]);
    expect(after).toMatchObject({ priority: "p1", x_trace: { id: 7 }, status: "accepted", to_agent: "bob", created_at: doc.created_at });
    expect(fs.statSync(file).mode & 0o777).toBe(0o664);
  });

  it("refuses a write when the file changed since it was read (conflict), naming the new state", async () => {
    const hd = new HandoffDirectory(dir, { newId: ids("t2") });
    const { snapshot } = await hd.offer({ description: "d", from: "x" });
    await hd.act("t2", { kind: "accept", agent: "bob" });
    const err = await refusal(hd.act(snapshot, { kind: "accept", agent: "carol" }));
    expect(err.kind).toBe("conflict");
    expect(err.message).toBe("t2 changed since it was read: it is accepted (bob) now, not offered");
    expect(JSON.parse(fs.readFileSync(path.join(dir, "t2.json"), "utf8")).to_agent).toBe("bob");
  });

  it("acts only on the bytes the caller saw when given expectHash", async () => {
    const hd = new HandoffDirectory(dir, { newId: ids("t6") });
    const { snapshot } = await hd.offer({ description: "d", from: "x" });
    fs.writeFileSync(snapshot.path, fs.readFileSync(snapshot.path, "utf8").replace('"d"', '"edited"'));
    const err = await refusal(hd.act("t6", { kind: "accept", agent: "bob" }, { expectHash: snapshot.hash }));
    expect(err).toMatchObject({ kind: "conflict", message: "t6 changed since you saw it: it is offered now" });
    const now = await hd.resolve("t6");
    await hd.act("t6", { kind: "accept", agent: "bob" }, { expectHash: now.hash });
  });

  it("detects a writer that ignores the lock while Baton holds it, and keeps that writer's bytes", async () => {
    const foreign = async (file: string) => fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace('"offered"', '"rejected"'));
    const hd = new HandoffDirectory(dir, { newId: ids("t3"), hooks: { beforeCommit: foreign } });
    await hd.offer({ description: "d", from: "x" });
    const err = await refusal(hd.act("t3", { kind: "accept", agent: "bob" }));
    expect(err.kind).toBe("foreign-writer");
    expect(err.message).toContain("a writer that ignores t3.json.lock wrote it");
    expect(JSON.parse(fs.readFileSync(path.join(dir, "t3.json"), "utf8")).status).toBe("rejected");
    expect(fs.readdirSync(dir)).toEqual(["t3.json"]);
  });

  it("reports when a writer that ignores the lock replaces Baton's write right after it", async () => {
    const clobber = async (file: string) => fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace('"accepted"', '"offered"'));
    const hd = new HandoffDirectory(dir, { newId: ids("t4"), hooks: { afterRename: clobber } });
    await hd.offer({ description: "d", from: "x" });
    const r = await hd.act("t4", { kind: "accept", agent: "bob" });
    expect(r.snapshot.record.status).toBe("accepted");
    expect(r.replacedBy && r.replacedBy.valid && r.replacedBy.record.status).toBe("offered");
  });

  it("waits for a busy lock, then gives up with lock-busy; breaks a stale one", async () => {
    const hd = new HandoffDirectory(dir, { newId: ids("t5"), lockWaitMs: 150, lockStaleMs: 60_000 });
    await hd.offer({ description: "d", from: "x" });
    const lock = lockPathFor(path.join(dir, "t5.json"));
    fs.writeFileSync(lock, ""); // a plain v0.1 tool's empty lock, fresh
    expect((await refusal(hd.act("t5", { kind: "accept", agent: "bob" }))).kind).toBe("lock-busy");
    const old = new Date(Date.now() - 120_000);
    fs.utimesSync(lock, old, old);
    await hd.act("t5", { kind: "accept", agent: "bob" });
    expect(fs.existsSync(lock)).toBe(false);
  });
});

describe("files Baton leaves alone", () => {
  it("shows hostile files as invalid with the reason and never modifies, renames or deletes them", async () => {
    fs.mkdirSync(dir);
    const outside = path.join(root, "secret.json");
    fs.writeFileSync(
      outside,
      JSON.stringify({
        task_id: "leak",
        from_agent: "x",
        status: "offered",
        description: "",
        created_at: "2026-01-01T00:00:00Z",
        updated_at: "2026-01-01T00:00:00Z",
      }),
    );
    const valid = (id: string) => ({
      task_id: id,
      from_agent: "x",
      status: "offered",
      description: "d",
      created_at: "2026-01-01T00:00:00Z",
      updated_at: "2026-01-01T00:00:00Z",
    });
    fs.writeFileSync(path.join(dir, "truncated.json"), JSON.stringify(valid("truncated")).slice(0, 30));
    const big = Buffer.alloc(10 * 1024 * 1024, 0x20);
    big.write(JSON.stringify(valid("big")));
    fs.writeFileSync(path.join(dir, "big.json"), big);
    fs.symlinkSync(outside, path.join(dir, "leak.json"));
    fs.symlinkSync(path.join(root, "nowhere"), path.join(dir, "dangling.json"));
    fs.writeFileSync(path.join(dir, "wrong-name.json"), JSON.stringify(valid("another-id")));
    fs.writeFileSync(path.join(dir, "bad-status.json"), JSON.stringify({ ...valid("bad-status"), status: "done" }));
    execFileSync("mkfifo", [path.join(dir, "pipe.json")]);
    fs.mkdirSync(path.join(dir, "folder.json"));
    const before = fingerprint(dir);

    const hd = new HandoffDirectory(dir);
    const { handoffs, invalid } = await hd.list();
    expect(handoffs).toEqual([]);
    const reasons = Object.fromEntries(invalid.map((i) => [i.name, `${i.problems[0]?.code}: ${i.reason}`]));
    expect(reasons["truncated.json"]).toMatch(/^not-json: not valid JSON/);
    expect(reasons["big.json"]).toBe("too-large: 10485760 bytes is over the 1048576-byte limit");
    expect(reasons["leak.json"]).toBe(
      `symlink-outside: a symbolic link to ${fs.realpathSync(outside)}, outside the handoff directory; Baton does not follow it`,
    );
    expect(reasons["dangling.json"]).toBe("symlink-dangling: a symbolic link that points nowhere");
    expect(reasons["wrong-name.json"]).toMatch(/^name-mismatch: the file name wrong-name.json does not match its task_id "another-id"/);
    expect(reasons["bad-status.json"]).toMatch(/^schema: "status" must be one of/);
    expect(reasons["pipe.json"]).toBe("not-regular-file: a named pipe, not a handoff file");
    expect(reasons["folder.json"]).toBe("not-regular-file: a directory, not a handoff file");

    for (const name of ["truncated", "big", "leak", "wrong-name", "bad-status", "pipe"]) {
      const err = await refusal(hd.act(name, { kind: "accept", agent: "bob" }));
      expect(err.kind, name).toBe("invalid");
    }
    expect(fingerprint(dir)).toBe(before);
  });

  it("reads a link to a file inside the directory but never writes through it", async () => {
    const hd = new HandoffDirectory(dir, { newId: ids("real") });
    await hd.offer({ description: "d", from: "x" });
    fs.mkdirSync(path.join(dir, "archive"));
    fs.renameSync(path.join(dir, "real.json"), path.join(dir, "archive", "real.json"));
    fs.symlinkSync(path.join("archive", "real.json"), path.join(dir, "real.json"));
    const s = (await hd.resolve("real")) as ValidSnapshot;
    expect(s.valid && s.viaSymlink).toBe(true);
    expect((await refusal(hd.act(s, { kind: "accept", agent: "bob" }))).kind).toBe("read-only");
    expect(fs.lstatSync(path.join(dir, "real.json")).isSymbolicLink()).toBe(true);
  });
});
