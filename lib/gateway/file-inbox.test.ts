import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteHistoryStore, type HandoffRecord } from "@/lib/handoff-files";
import type { ValidSnapshot } from "@/lib/handoff-files";
import { fileInboxPage } from "./file-inbox";

const ME = "human:bob";
const DIR = "/srv/handoffs";
let tmp: string;
let store: SqliteHistoryStore;
let t = 1_000;

function snap(rec: Partial<HandoffRecord> & { task_id: string }): ValidSnapshot {
  const record: HandoffRecord = {
    from_agent: "agent://planner",
    to_agent: "",
    status: "offered",
    description: "d",
    context: {},
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
    ...rec,
  };
  const text = JSON.stringify(record);
  return {
    valid: true,
    name: `${rec.task_id}.json`,
    path: path.join(DIR, `${rec.task_id}.json`),
    hash: `${rec.task_id}-${record.status}-${record.to_agent}`.padEnd(64, "0"),
    size: text.length,
    mtimeMs: t,
    ctimeMs: t,
    viaSymlink: false,
    record,
    document: JSON.parse(text),
  };
}

function put(rec: Partial<HandoffRecord> & { task_id: string }): void {
  t += 10;
  store.record({ dir: DIR, name: `${rec.task_id}.json`, observedAtMs: t, source: "watch", snapshot: snap(rec) });
}

beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "file-inbox-"));
  store = new SqliteHistoryStore(path.join(tmp, "h.sqlite"));
});
afterEach(async () => {
  store.close();
  await rm(tmp, { recursive: true, force: true });
});

describe("file inbox", () => {
  it("offers to me or to anyone (not my own), and what I accepted", () => {
    put({ task_id: "to-me", to_agent: ME });
    put({ task_id: "to-anyone" });
    put({ task_id: "mine-to-anyone", from_agent: ME });
    put({ task_id: "to-carol", to_agent: "human:carol" });
    put({ task_id: "accepted-by-me", status: "accepted", to_agent: ME });
    put({ task_id: "accepted-by-carol", status: "accepted", to_agent: "human:carol" });
    put({ task_id: "done", status: "completed", to_agent: ME });
    const page = fileInboxPage(store, { role: "operator", participantId: ME }, { limit: 50 });
    expect(page.items.map((s) => s.taskId).sort()).toEqual(["accepted-by-me", "to-anyone", "to-me"]);
    expect(page.next).toBe("");
    // Viewers act on nothing.
    expect(fileInboxPage(store, { role: "viewer", participantId: ME }, { limit: 50 }).items).toEqual([]);
  });

  it("pages newest first without repeating, skipping rows the person cannot act on", () => {
    for (let i = 0; i < 30; i++) put({ task_id: `t${String(i).padStart(2, "0")}`, ...(i % 3 === 0 ? { to_agent: "human:carol" } : {}) });
    const actor = { role: "operator" as const, participantId: ME };
    const seen: string[] = [];
    let cursor = "";
    for (let n = 0; n < 10; n++) {
      const page = fileInboxPage(store, actor, { limit: 7, ...(cursor ? { cursor } : {}) });
      seen.push(...page.items.map((s) => s.taskId));
      if (!page.next) break;
      cursor = page.next;
    }
    const expected = Array.from({ length: 30 }, (_, i) => i)
      .filter((i) => i % 3 !== 0)
      .reverse()
      .map((i) => `t${String(i).padStart(2, "0")}`);
    expect(seen).toEqual(expected);
  });

  it("bounded: scans at most maxScanned rows per page, and says where to go on", () => {
    put({ task_id: "old-mine", to_agent: ME });
    for (let i = 0; i < 20; i++) put({ task_id: `c${i}`, to_agent: "", from_agent: ME });
    // Newest first: 20 of bob's own offers (not his to take) come before the one offered to him.
    const actor = { role: "operator" as const, participantId: ME };
    const first = fileInboxPage(store, actor, { limit: 5, maxScanned: 10 });
    expect(first.items).toEqual([]);
    expect(first.next).not.toBe("");
    const second = fileInboxPage(store, actor, { limit: 5, maxScanned: 10, cursor: first.next });
    expect(second.items).toEqual([]);
    const third = fileInboxPage(store, actor, { limit: 5, maxScanned: 10, cursor: second.next });
    expect(third.items.map((s) => s.taskId)).toEqual(["old-mine"]);
    expect(third.next).toBe("");
  });
});
