// The SQLite history store: each observed change stored once (also when two
// processes record the same directory), steps classified against the last
// valid snapshot, timelines bounded, lists and inboxes paged.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteHistoryStore } from "./history-sqlite";
import { checkDocument, type HandoffStatus } from "./record";
import type { InvalidSnapshot, ValidSnapshot } from "./snapshot";

let root: string;
let file: string;
const stores: SqliteHistoryStore[] = [];
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "baton-hist-"));
  file = path.join(root, "data", "handoff-files.sqlite");
});
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  fs.rmSync(root, { recursive: true, force: true });
});
const open = (opts?: ConstructorParameters<typeof SqliteHistoryStore>[1]) => {
  const s = new SqliteHistoryStore(file, opts);
  stores.push(s);
  return s;
};

const DIR = "/srv/handoffs";
let ctime = 1_000;
function snap(id: string, status: HandoffStatus, to = "", extra: Record<string, unknown> = {}): ValidSnapshot {
  const doc = {
    task_id: id,
    from_agent: "planner",
    to_agent: to,
    status,
    description: `work ${id}`,
    context: {},
    created_at: "2026-11-20T10:00:00Z",
    updated_at: "2026-11-20T10:00:00Z",
    ...extra,
  };
  const c = checkDocument(doc);
  if (!c.ok) throw new Error("bad fixture");
  return {
    valid: true,
    name: `${id}.json`,
    path: `${DIR}/${id}.json`,
    record: c.record,
    document: c.document,
    hash: `${id}:${status}:${to}:${JSON.stringify(extra)}`,
    size: 200,
    mtimeMs: ctime,
    ctimeMs: ctime++,
    viaSymlink: false,
  };
}
function broken(id: string): InvalidSnapshot {
  return {
    valid: false,
    name: `${id}.json`,
    path: `${DIR}/${id}.json`,
    problems: [{ code: "not-json", message: "not valid JSON" }],
    reason: "not valid JSON",
    hash: `broken:${ctime}`,
    ctimeMs: ctime++,
    viaSymlink: false,
  };
}
let t = 0;
const obs = (snapshot: ValidSnapshot | InvalidSnapshot | undefined, name = snapshot?.name ?? "") => ({
  dir: DIR,
  name,
  observedAtMs: ++t,
  source: "watch" as const,
  ...(snapshot ? { snapshot } : {}),
});

describe("recording", () => {
  it("builds a timeline with steps: first, legal, gap, and illegal ones marked invalid", () => {
    const h = open();
    expect(h.record(obs(snap("a", "offered")))?.step).toBe("first");
    expect(h.record(obs(snap("a", "offered")))).toBeUndefined(); // same bytes: nothing new
    expect(h.record(obs(broken("a")))).toMatchObject({ valid: false, problem: "not valid JSON" }); // a torn write…
    expect(h.record(obs(snap("a", "accepted", "bob")))).toMatchObject({ step: "legal", valid: true }); // …compared with the last valid one
    expect(h.record(obs(snap("a", "completed", "bob")))?.step).toBe("legal");
    const illegal = h.record(obs(snap("a", "offered", "", { again: 1 })));
    expect(illegal).toMatchObject({ step: "illegal", valid: false, problem: "illegal transition completed → offered: completed is final" });
    expect(h.find(DIR, "a.json")).toMatchObject({
      valid: false,
      status: "offered",
      problem: "illegal transition completed → offered: completed is final",
      snapshots: 5,
    });

    expect(h.record(obs(snap("b", "offered")))?.step).toBe("first");
    expect(h.record(obs(snap("b", "completed", "bob")))).toMatchObject({
      step: "gap",
      valid: true,
      problem: "went from offered to completed without the states in between being observed",
    });

    const timeline = h.history(h.find(DIR, "a.json")?.id ?? -1).items;
    expect(timeline.map((e) => [e.seq, e.status ?? "-", e.step ?? "-"])).toEqual([
      [1, "offered", "first"],
      [2, "-", "-"],
      [3, "accepted", "legal"],
      [4, "completed", "legal"],
      [5, "offered", "illegal"],
    ]);
    expect(timeline[2]?.document).toMatchObject({ status: "accepted", to_agent: "bob" });
  });

  it("records removal once, and a file that reappears starts a new first step", () => {
    const h = open();
    h.record(obs(snap("c", "completed", "bob")));
    expect(h.record(obs(undefined, "c.json"))).toMatchObject({ kind: "removed" });
    expect(h.record(obs(undefined, "c.json"))).toBeUndefined();
    expect(h.find(DIR, "c.json")?.present).toBe(false);
    expect(h.record(obs(snap("c", "offered")))?.step).toBe("first");
    expect(h.record(obs(undefined, "never-seen.json"))).toBeUndefined();
  });

  it("stores each change once when two processes record the same directory, and ignores a lagging older read", () => {
    const a = open();
    const b = open();
    const offered = snap("d", "offered");
    const accepted = snap("d", "accepted", "bob");
    expect(a.record(obs(offered))).toBeDefined();
    expect(a.record(obs(accepted))).toBeDefined();
    expect(b.record(obs(accepted))).toBeUndefined(); // the same change seen by the other process
    expect(b.record(obs(offered))).toBeUndefined(); // an older read (earlier ctime) arriving late
    expect(a.find(DIR, "d.json")).toMatchObject({ status: "accepted", snapshots: 2 });
  });

  it("keeps at most maxSnapshotsPerHandoff entries per handoff, counting what it dropped", () => {
    const h = open({ maxSnapshotsPerHandoff: 5 });
    for (let i = 0; i < 12; i++) h.record(obs(snap("e", "offered", "", { n: i })));
    const s = h.find(DIR, "e.json");
    expect(s).toMatchObject({ snapshots: 12, pruned: 7 });
    expect(h.history(s?.id ?? -1).items.map((e) => e.seq)).toEqual([8, 9, 10, 11, 12]);
  });
  it("keeps a timeline's stored documents within maxContentBytesPerHandoff, dropping the oldest", () => {
    const h = open({ maxContentBytesPerHandoff: 64 * 1024 });
    const pad = "x".repeat(20_000);
    for (let i = 0; i < 10; i++) h.record(obs(snap("f", "offered", "", { pad, n: i })));
    const s = h.find(DIR, "f.json");
    const kept = h.history(s?.id ?? -1).items;
    expect(kept.map((e) => e.seq)).toEqual([8, 9, 10]); // three ~20 KB documents fit in 64 KiB
    expect(s).toMatchObject({ snapshots: 10, pruned: 7 });
  });
});

describe("reading", () => {
  it("pages the list newest first and filters an inbox by status and to_agent (empty means anyone)", () => {
    const h = open();
    h.record(obs(snap("p1", "offered", "human:alice")));
    h.record(obs(snap("p2", "offered", "")));
    h.record(obs(snap("p3", "offered", "human:bob")));
    h.record(obs(snap("p4", "accepted", "human:alice")));
    h.record(obs(broken("p5")));
    const first = h.list({ limit: 2 });
    expect(first.items.map((s) => s.taskId)).toEqual(["p5", "p4"]);
    const second = h.list({ limit: 2, ...(first.next ? { cursor: first.next } : {}) });
    expect(second.items.map((s) => s.taskId)).toEqual(["p3", "p2"]);
    const third = h.list({ limit: 2, ...(second.next ? { cursor: second.next } : {}) });
    expect(third.items.map((s) => s.taskId)).toEqual(["p1"]);
    expect(third.next).toBeUndefined();
    const inbox = h.list({ statuses: ["offered"], toAgentIn: ["human:alice", ""] });
    expect(inbox.items.map((s) => s.taskId)).toEqual(["p2", "p1"]);
    expect(h.findByTaskId("p4").map((s) => s.name)).toEqual(["p4.json"]);
    expect([...h.presentNames(DIR)].sort()).toEqual(["p1.json", "p2.json", "p3.json", "p4.json", "p5.json"]);
    expect(() => h.list({ cursor: "nope" })).toThrow(RangeError);
  });

  it("pages a timeline oldest first", () => {
    const h = open();
    for (let i = 0; i < 7; i++) h.record(obs(snap("q", "offered", "", { n: i })));
    const id = h.find(DIR, "q.json")?.id ?? -1;
    const p1 = h.history(id, { limit: 3 });
    const p2 = h.history(id, { limit: 3, ...(p1.next ? { cursor: p1.next } : {}) });
    const p3 = h.history(id, { limit: 3, ...(p2.next ? { cursor: p2.next } : {}) });
    expect([p1, p2, p3].map((p) => p.items.map((e) => e.seq))).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    expect(p3.next).toBeUndefined();
  });
});
