// `baton files …` in-process (the same main() the binary runs): exit codes
// (0 ok, 2 refused, 64 usage), plain messages, --json, HANDOFF_DIR and --dir,
// repeatable --context, and the write warnings. The binary itself, with an
// independent v0.1 agent, is in tests/integration/files-cli.test.ts.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HandoffWatcher, SqliteHistoryStore } from "@/lib/handoff-files";
import { EXIT, main } from "../main";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-files-cmd-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function baton(args: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env: { HANDOFF_DIR: dir, ...env },
    signal: new AbortController().signal,
  });
  return { code, stdout: out.join(""), stderr: err.join("") };
}

describe("baton files", () => {
  it("offers with repeatable --context (values may hold commas and =), prints the task_id, lists and shows it", async () => {
    const r = await baton([
      "files",
      "offer",
      "Renew",
      "the",
      "domain",
      "--from",
      "agent://a",
      "--context",
      "note=a,b=c",
      "--context",
      "ticket=OPS-7",
      "--id",
      "renew-1",
    ]);
    expect(r).toMatchObject({ code: EXIT.ok, stdout: "renew-1\n" });
    expect(r.stderr).toBe(`✓ offered to anyone: ${path.join(dir, "renew-1.json")}\n`);
    const file = JSON.parse(fs.readFileSync(path.join(dir, "renew-1.json"), "utf8"));
    expect(file).toMatchObject({ description: "Renew the domain", context: { note: "a,b=c", ticket: "OPS-7" }, to_agent: "" });

    const list = await baton(["files", "list"]);
    expect(list.stdout).toMatch(
      /^ID\s+STATUS\s+FROM\s+TO\s+UPDATED\s+DESCRIPTION\nrenew-1\s+offered\s+agent:\/\/a\s+anyone\s+\S+\s+Renew the domain\n$/,
    );
    const show = await baton(["--json", "files", "show", "ren"]);
    expect(JSON.parse(show.stdout)).toMatchObject({
      valid: true,
      read_only: false,
      handoff: { task_id: "renew-1", file: path.join(dir, "renew-1.json") },
    });
  });

  it("walks the state machine and refuses illegal steps with exit 2 and a plain sentence", async () => {
    await baton(["files", "offer", "x", "--from", "agent://a", "--to", "agent://b", "--id", "t1"]);
    expect(await baton(["files", "accept", "t1", "--agent", "agent://c"])).toMatchObject({
      code: EXIT.rejected,
      stderr: "error: it is offered to agent://b, not agent://c\n",
    });
    expect(await baton(["files", "complete", "t1"])).toMatchObject({
      code: EXIT.rejected,
      stderr:
        "error: cannot complete t1: it is offered and nobody has accepted it yet (from offered it can only go to accepted or rejected)\n",
    });
    expect(await baton(["files", "accept", "t1", "--agent", "agent://b"])).toMatchObject({
      code: EXIT.ok,
      stdout: "✓ t1 accepted by agent://b (was offered)\n",
    });
    const again = await baton(["--json", "files", "accept", "t1", "--agent", "agent://b"]);
    expect(again.code).toBe(EXIT.rejected);
    expect(JSON.parse(again.stdout)).toEqual({
      ok: false,
      error: { kind: "illegal-transition", message: expect.stringContaining("already accepted by agent://b") },
    });
    expect(await baton(["files", "fail", "t1", "--agent", "agent://b", "--context", "reason=disk full"])).toMatchObject({ code: EXIT.ok });
    expect(await baton(["files", "reoffer", "t1", "--agent", "agent://b"])).toMatchObject({
      code: EXIT.rejected,
      stderr: "error: only agent://a, who offered it, can re-offer it\n",
    });
    const reoffer = await baton(["--json", "files", "reoffer", "t1", "--to", "agent://c"]);
    expect(JSON.parse(reoffer.stdout)).toMatchObject({
      ok: true,
      status: "offered",
      previous_status: "failed",
      handoff: { to_agent: "agent://c", context: { reason: "disk full" } },
    });
    expect(await baton(["files", "reject", "t1", "--agent", "agent://c"])).toMatchObject({
      code: EXIT.ok,
      stdout: "✓ t1 rejected by agent://c (was offered)\n",
    });
    expect((await baton(["files", "reoffer", "t1"])).stderr).toBe(
      "error: cannot reoffer t1: it is already rejected by agent://c (rejected is final)\n",
    );
  });

  it("exits 64 for usage: ambiguous prefix, missing --agent or --from, bad --context or --status, no id; 0 for help", async () => {
    await baton(["files", "offer", "a", "--from", "x", "--id", "abc-1"]);
    await baton(["files", "offer", "b", "--from", "x", "--id", "abc-2"]);
    const amb = await baton(["files", "show", "abc"]);
    expect(amb.code).toBe(EXIT.usage);
    expect(amb.stderr).toBe(
      'baton: "abc" matches 2 handoffs (abc-1, abc-2); give more of the id\nRun `baton files show --help` for usage.\n',
    );
    for (const args of [
      ["files", "accept", "abc-1"],
      ["files", "offer", "x"],
      ["files", "offer", "--from", "x"],
      ["files", "offer", "x", "--from", "y", "--context", "novalue"],
      ["files", "list", "--status", "done"],
      ["files", "complete"],
      ["files", "show", "abc-1", "abc-2"],
      ["files", "offer", "x", "--from", "y", "--id", "../escape"],
    ]) {
      expect((await baton(args)).code, args.join(" ")).toBe(EXIT.usage);
    }
    expect((await baton(["files", "show", "zzz"])).code).toBe(EXIT.rejected); // not found
    const help = await baton(["files", "reject", "--help"]);
    expect(help.code).toBe(EXIT.ok);
    expect(help.stdout).toContain("Usage: baton [global options] files reject <id-prefix> --agent <agent>");
    expect((await baton(["files"])).stdout).toContain("files bridge");
  });

  it("uses --dir over HANDOFF_DIR, and .handoffs in the working directory without either", async () => {
    const other = path.join(dir, "other");
    await baton(["files", "offer", "x", "--from", "a", "--id", "in-other", "--dir", other]);
    const viaFlag = JSON.parse((await baton(["--json", "files", "list", "--dir", other])).stdout);
    expect(viaFlag).toMatchObject({ dir: other, exists: true, handoffs: [{ task_id: "in-other" }] });
    expect(JSON.parse((await baton(["--json", "files", "list"])).stdout).handoffs).toEqual([]);
    const dflt = JSON.parse((await baton(["--json", "files", "list"], { HANDOFF_DIR: "" })).stdout);
    expect(dflt.dir).toBe(path.resolve(".handoffs"));
  });

  it("refuses to act on any kind of invalid file and leaves each as it is", async () => {
    const valid = (id: string) =>
      JSON.stringify({
        task_id: id,
        from_agent: "x",
        status: "offered",
        description: "d",
        created_at: "2026-01-01T00:00:00Z",
        updated_at: "2026-01-01T00:00:00Z",
      });
    fs.writeFileSync(path.join(dir, "cut.json"), valid("cut").slice(0, 25));
    fs.writeFileSync(path.join(dir, "huge.json"), Buffer.alloc(2 * 1024 * 1024, 0x20));
    fs.writeFileSync(path.join(dir, "misnamed.json"), valid("someone-else"));
    fs.writeFileSync(path.join(os.tmpdir(), `${path.basename(dir)}-outside.json`), valid("outside"));
    fs.symlinkSync(path.join(os.tmpdir(), `${path.basename(dir)}-outside.json`), path.join(dir, "outside.json"));
    const before = fs.readdirSync(dir).map((n) => [n, fs.lstatSync(path.join(dir, n)).mtimeMs]);
    try {
      for (const id of ["cut", "huge", "misnamed", "outside"]) {
        const r = await baton(["files", "accept", id, "--agent", "bob"]);
        expect(r.code, id).toBe(EXIT.rejected);
        expect(r.stderr).toMatch(new RegExp(`^error: ${id}\\.json is not a valid v0.1 handoff, so Baton leaves it alone: `));
      }
      expect(fs.readdirSync(dir).map((n) => [n, fs.lstatSync(path.join(dir, n)).mtimeMs])).toEqual(before);
    } finally {
      fs.rmSync(path.join(os.tmpdir(), `${path.basename(dir)}-outside.json`), { force: true });
    }
  });

  it("refuses a handoff Baton's history recorded as an illegal step, and lists and shows it as invalid", async () => {
    const dataDir = path.join(dir, "data");
    const env = { BATON_DATA_DIR: dataDir };
    await baton(["files", "offer", "x", "--from", "a", "--id", "done-1"]);
    await baton(["files", "accept", "done-1", "--agent", "b"]);
    await baton(["files", "complete", "done-1"]);
    const store = new SqliteHistoryStore(path.join(dataDir, "handoff-files.sqlite"));
    const w = new HandoffWatcher({ dirs: [dir], mode: "poll", history: store });
    try {
      await w.start();
      // Another writer puts the completed handoff back on offer: completed is final.
      const file = path.join(dir, "done-1.json");
      fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace('"completed"', '"offered"'));
      await w.rescan();
    } finally {
      w.stop();
      store.close();
    }
    const act = await baton(["files", "accept", "done-1", "--agent", "b"], env);
    expect(act).toMatchObject({
      code: EXIT.rejected,
      stderr:
        "error: done-1.json is not a valid v0.1 handoff, so Baton leaves it alone: illegal transition completed → offered: completed is final\n",
    });
    expect(JSON.parse((await baton(["--json", "files", "list"], env)).stdout).invalid).toEqual([
      expect.objectContaining({ valid: false, reason: "illegal transition completed → offered: completed is final" }),
    ]);
    expect((await baton(["files", "show", "done-1"], env)).stdout).toMatch(
      /^INVALID \(recorded by Baton's history\): illegal transition completed → offered/,
    );
    // Without the history (another data folder) the file alone looks like a fresh offer.
    expect((await baton(["files", "accept", "done-1", "--agent", "b"], { BATON_DATA_DIR: path.join(dir, "elsewhere") })).code).toBe(
      EXIT.ok,
    );
  });

  it("shows an invalid file with its reason and refuses to act on it", async () => {
    fs.writeFileSync(path.join(dir, "bad.json"), '{"task_id": "bad"');
    const show = await baton(["files", "show", "bad"]);
    expect(show.code).toBe(EXIT.ok);
    expect(show.stdout).toMatch(/^file\s+\S+bad\.json\nvalid\s+no: not valid JSON/);
    const act = await baton(["files", "accept", "bad", "--agent", "x"]);
    expect(act.code).toBe(EXIT.rejected);
    expect(fs.readFileSync(path.join(dir, "bad.json"), "utf8")).toBe('{"task_id": "bad"');
  });
});
