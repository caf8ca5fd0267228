// `baton files …` as separate processes, with an independent v0.1 agent
// (tests/support/v01_agent.py: Python standard library only, no Baton code)
// on the other side of the directory: the agent offers by writing a file,
// Baton lists and accepts it, the agent sees the accept by polling and
// completes it under the shared lock, and `baton files watch` prints and
// records every step as it happens. Also the binary's exit codes and hostile
// files left untouched. (The commands' cases run in-process, in
// lib/cli/commands/files.test.ts.)
import { execFile, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteHistoryStore } from "@/lib/handoff-files";
import { tempDir, waitFor } from "./harness";

const ROOT = path.resolve(__dirname, "..", "..");
const BIN = path.join(ROOT, "bin", "baton.mjs");
const AGENT = path.join(ROOT, "tests", "support", "v01_agent.py");

let work: string;
let dir: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: work, env: { ...process.env, HANDOFF_DIR: "", ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}
const baton = (args: string[], env: Record<string, string> = {}) => run(process.execPath, [BIN, ...args], env);
const py = (args: string[]) => run("python3", [AGENT, ...args]);

beforeAll(() => {
  work = tempDir("baton-files-cli-");
  dir = path.join(work, "shared-handoffs");
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

describe("baton files with an independent v0.1 agent", () => {
  it("the agent offers, Baton accepts, the agent completes; watch prints and records each step", async () => {
    const historyFile = path.join(work, "data", "handoff-files.sqlite");
    fs.mkdirSync(dir, { recursive: true });
    const watch: ChildProcessWithoutNullStreams = spawn(
      process.execPath,
      [BIN, "--json", "files", "watch", "--dir", dir, "--history", historyFile],
      {
        cwd: work,
        env: { ...process.env },
      },
    );
    let lines = "";
    watch.stdout.on("data", (d: Buffer) => (lines += d.toString()));
    let watchErr = "";
    watch.stderr.on("data", (d: Buffer) => (watchErr += d.toString()));
    const events = () =>
      lines
        .split("\n")
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as { kind: string; task_id: string; step?: string; handoff?: Record<string, unknown> });
    try {
      await waitFor(() => watchErr.includes("Watching"), 60_000, "the watcher to start");

      const offered = await py(["offer", dir, "Rebuild the search index", "--from", "agent://py/indexer", "--context", "shard=7"]);
      expect(offered.code, offered.stderr).toBe(0);
      const id = offered.stdout.trim();
      await waitFor(() => events().some((e) => e.task_id === id && e.handoff?.status === "offered"), 15_000, "watch to print the offer");

      const list = await baton(["--json", "files", "list", "--status", "offered"], { HANDOFF_DIR: dir });
      expect(list.code, list.stderr).toBe(0);
      const listed = JSON.parse(list.stdout) as { handoffs: Record<string, unknown>[]; invalid: unknown[] };
      expect(listed.invalid).toEqual([]);
      expect(listed.handoffs).toHaveLength(1);
      expect(listed.handoffs[0]).toMatchObject({
        task_id: id,
        from_agent: "agent://py/indexer",
        to_agent: null,
        agent_version: "v01_agent.py/1",
      });

      const accept = await baton(["files", "accept", id.slice(0, 8), "--agent", "human:alice", "--dir", dir]);
      expect(accept.code, accept.stderr).toBe(0);
      expect(accept.stdout).toBe(`✓ ${id} accepted by human:alice (was offered)\n`);

      const seen = await py(["wait", dir, id, "--status", "accepted", "--timeout", "5"]);
      expect(seen.code, seen.stderr).toBe(0);
      const asSeen = JSON.parse(seen.stdout);
      expect(asSeen).toMatchObject({ to_agent: "human:alice", agent_version: "v01_agent.py/1", context: { shard: "7" } });
      expect(Object.keys(asSeen).slice(0, 3)).toEqual(["task_id", "description", "status"]); // the agent's own key order, kept

      const done = await py(["complete", dir, id, "--context", "documents=1200000"]);
      expect(done.code, done.stderr).toBe(0);
      await waitFor(
        () => events().some((e) => e.task_id === id && e.handoff?.status === "completed"),
        15_000,
        "watch to print the completion",
      );

      const show = await baton(["--json", "files", "show", id.slice(0, 6), "--dir", dir]);
      expect(JSON.parse(show.stdout)).toMatchObject({
        valid: true,
        handoff: { status: "completed", to_agent: "human:alice", context: { shard: "7", documents: "1200000" } },
      });

      const mine = events().filter((e) => e.task_id === id);
      expect(mine.map((e) => [e.kind, e.handoff?.status, e.step])).toEqual([
        ["added", "offered", "first"],
        ["changed", "accepted", "legal"],
        ["changed", "completed", "legal"],
      ]);
      // The file keeps no history; Baton's store has the whole timeline.
      const store = new SqliteHistoryStore(historyFile);
      try {
        const h = store.find(fs.realpathSync(dir), `${id}.json`) ?? store.find(dir, `${id}.json`);
        expect(h).toMatchObject({ status: "completed", toAgent: "human:alice", valid: true });
        expect(store.history(h?.id ?? -1).items.map((e) => e.status)).toEqual(["offered", "accepted", "completed"]);
      } finally {
        store.close();
      }
    } finally {
      if (watch.exitCode === null) {
        const exited = new Promise((r) => watch.once("exit", r));
        watch.kill("SIGINT");
        await exited;
      }
    }
  }, 120_000);

  it("the binary exits 2 for a refused step and 64 for usage (every case in lib/cli/commands/files.test.ts)", async () => {
    const local = path.join(work, "exit-codes");
    const offered = await baton([
      "files",
      "offer",
      "Renew the domain",
      "--from",
      "agent://a",
      "--to",
      "agent://b",
      "--id",
      "renew-1",
      "--dir",
      local,
    ]);
    expect(offered).toMatchObject({ code: 0, stdout: "renew-1\n" });
    const notYours = await baton(["files", "accept", "renew-1", "--agent", "agent://c"], { HANDOFF_DIR: local });
    expect(notYours).toMatchObject({ code: 2, stderr: "error: it is offered to agent://b, not agent://c\n" });
    expect((await baton(["files", "accept", "renew-1", "--dir", local])).code).toBe(64); // --agent is required
  }, 120_000);

  it("lists hostile files as invalid with the reason, refuses to act on them, and changes nothing", async () => {
    const hostile = path.join(work, "hostile");
    fs.mkdirSync(hostile);
    const valid = (id: string, status = "offered") =>
      JSON.stringify({
        task_id: id,
        from_agent: "x",
        status,
        description: "d",
        created_at: "2026-01-01T00:00:00Z",
        updated_at: "2026-01-01T00:00:00Z",
      });
    fs.writeFileSync(path.join(hostile, "cut.json"), valid("cut").slice(0, 25));
    const big = Buffer.alloc(10 * 1024 * 1024, 0x20);
    big.write(valid("huge"));
    fs.writeFileSync(path.join(hostile, "huge.json"), big);
    fs.writeFileSync(path.join(work, "elsewhere.json"), valid("outside"));
    fs.symlinkSync(path.join(work, "elsewhere.json"), path.join(hostile, "outside.json"));
    fs.writeFileSync(path.join(hostile, "misnamed.json"), valid("someone-else"));
    const before = fs
      .readdirSync(hostile)
      .map((n) => [n, fs.lstatSync(path.join(hostile, n)).mtimeMs, fs.lstatSync(path.join(hostile, n)).size]);

    const list = await baton(["files", "list", "--dir", hostile]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("4 invalid files (left as they are):");
    expect(list.stdout).toContain("cut.json: not valid JSON");
    expect(list.stdout).toContain("huge.json: 10485760 bytes is over the 1048576-byte limit");
    expect(list.stdout).toContain("outside.json: a symbolic link to");
    expect(list.stdout).toContain('misnamed.json: the file name misnamed.json does not match its task_id "someone-else"');
    // One refusal through the binary; every kind is refused in-process in lib/cli/commands/files.test.ts.
    const r = await baton(["files", "accept", "outside", "--agent", "bob", "--dir", hostile]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is not a valid v0.1 handoff, so Baton leaves it alone/);
    expect(
      fs.readdirSync(hostile).map((n) => [n, fs.lstatSync(path.join(hostile, n)).mtimeMs, fs.lstatSync(path.join(hostile, n)).size]),
    ).toEqual(before);
  }, 120_000);
});
