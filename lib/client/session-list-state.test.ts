import { describe, expect, it } from "vitest";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import {
  applyListBatch,
  beginListConnection,
  initialSessionListState,
  isStaleSummary,
} from "./session-list-state";
import { listHeartbeat, snapshotMsg, summary, upsertMsg } from "./test/fixtures";

describe("applyListBatch", () => {
  it("assembles a chunked snapshot and only then shows it", () => {
    let s = beginListConnection(initialSessionListState());
    s = applyListBatch(s, [snapshotMsg([summary("a"), summary("b")], false)]);
    expect(s.loaded).toBe(false);
    expect(s.rows.size).toBe(0);
    s = applyListBatch(s, [snapshotMsg([summary("c")], true)]);
    expect(s.loaded).toBe(true);
    expect([...s.rows.keys()].sort()).toEqual(["a", "b", "c"]);
    expect(s.pending).toBeUndefined();
  });

  it("applies upserts by session id, idempotently", () => {
    let s = applyListBatch(beginListConnection(initialSessionListState()), [snapshotMsg([summary("a")], true)]);
    const up = upsertMsg(summary("a", { phase: "Accepted", eventCount: 4 }));
    s = applyListBatch(s, [up]);
    const once = s.rows;
    s = applyListBatch(s, [up]);
    expect(s.rows.size).toBe(1);
    expect(s.rows.get("a")?.phase).toBe("Accepted");
    expect([...s.rows.values()]).toEqual([...once.values()]);
    s = applyListBatch(s, [upsertMsg(summary("new", { eventCount: 1 }))]);
    expect(s.rows.size).toBe(2);
  });

  it("ignores stale upserts", () => {
    let s = applyListBatch(beginListConnection(initialSessionListState()), [
      snapshotMsg([summary("a", { eventCount: 5, state: SessionState.RESOLVED, phase: "Committed" })], true),
    ]);
    s = applyListBatch(s, [upsertMsg(summary("a", { eventCount: 4, phase: "Accepted" }))]);
    expect(s.rows.get("a")?.phase).toBe("Committed");
    s = applyListBatch(s, [upsertMsg(summary("a", { eventCount: 5, state: SessionState.OPEN }))]);
    expect(s.rows.get("a")?.metadata?.state).toBe(SessionState.RESOLVED);
  });

  it("keeps rows on screen during a reconnect snapshot, then replaces them", () => {
    let s = applyListBatch(beginListConnection(initialSessionListState()), [snapshotMsg([summary("a"), summary("gone")], true)]);
    s = beginListConnection(s);
    s = applyListBatch(s, [snapshotMsg([summary("a", { eventCount: 3 })], false)]);
    expect(s.rows.has("gone")).toBe(true);
    // An upsert mid-snapshot lands in the new snapshot.
    s = applyListBatch(s, [upsertMsg(summary("b", { eventCount: 1 })), snapshotMsg([], true)]);
    expect([...s.rows.keys()].sort()).toEqual(["a", "b"]);
    expect(s.loaded).toBe(true);
  });

  it("does not mutate the previous state's maps", () => {
    const s0 = beginListConnection(initialSessionListState());
    const s1 = applyListBatch(s0, [snapshotMsg([summary("a")], false)]);
    const s2 = applyListBatch(s1, [snapshotMsg([summary("b")], false)]);
    expect(s1.pending?.size).toBe(1);
    expect(s2.pending?.size).toBe(2);
    const s3 = applyListBatch(s2, [snapshotMsg([], true)]);
    const s4 = applyListBatch(s3, [upsertMsg(summary("c"))]);
    expect(s3.rows.size).toBe(2);
    expect(s4.rows.size).toBe(3);
  });

  it("returns the same state for heartbeats", () => {
    const s = applyListBatch(beginListConnection(initialSessionListState()), [snapshotMsg([summary("a")], true)]);
    expect(applyListBatch(s, [listHeartbeat()])).toBe(s);
  });
});

describe("isStaleSummary", () => {
  it("treats equal or newer summaries as fresh", () => {
    expect(isStaleSummary(undefined, summary("a"))).toBe(false);
    expect(isStaleSummary(summary("a", { eventCount: 2 }), summary("a", { eventCount: 2 }))).toBe(false);
    expect(isStaleSummary(summary("a", { eventCount: 2 }), summary("a", { eventCount: 3 }))).toBe(false);
    expect(isStaleSummary(summary("a", { eventCount: 3 }), summary("a", { eventCount: 2 }))).toBe(true);
  });
});
