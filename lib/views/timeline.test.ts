import { describe, expect, it } from "vitest";
import { applySubscribeBatch, beginConnection, initialSessionStreamState } from "@/lib/views/session-stream-state";
import { buildTimeline, newestSequenceNotBy } from "@/lib/views/timeline";
import { SID, accept, commitment, context, decline, eventMsg, offer, start, taskEnv } from "@/lib/views/test/fixtures";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { makeEvent } from "@/lib/macp/test-utils";

function fold(envs: ReturnType<typeof start>[]) {
  return applySubscribeBatch(
    beginConnection(initialSessionStreamState(SID)),
    envs.map((e, i) => eventMsg(i + 1, e)),
  ).state;
}

describe("buildTimeline", () => {
  it("groups handoff events per handoff_id in offer order, late context inside its group", () => {
    const s = fold([
      start(),
      offer("h1", "bob"),
      context("h1"),
      decline("h1", "bob"),
      offer("h2", "carol"),
      context("h1", "late note"), // late: h1 already declined
      accept("h2", "carol"),
      commitment(),
    ]);
    const t = buildTimeline(s.view, s.events);
    const shape = t.rows.map((r) =>
      r.kind === "group"
        ? `G:${r.offer.handoffId}#${r.ordinal}/${r.total}`
        : r.kind === "refusal"
          ? `R:${r.refusal.id}`
          : `${r.sequence}${r.groupId ? `@${r.groupId}` : ""}${r.late ? "!late" : ""}${r.groupEnd ? "|" : ""}`,
    );
    expect(shape).toEqual(["1", "G:h1#1/2", "2@h1", "3@h1", "4@h1", "6@h1!late|", "G:h2#2/2", "5@h2", "7@h2|", "8"]);
    expect(t.newestSequence).toBe(8);
    expect(t.rowOfSequence.get(6)).toBe(5);
    expect(t.rowOfSequence.get(8)).toBe(9);
  });

  it("places refused attempts (local annotations) after the last event not later than the attempt, and keeps rowOfSequence right", () => {
    const s = fold([start(), offer("h1", "bob"), accept("h1", "bob")]);
    const times = s.events.map((e) => Number(e.envelope.timestampUnixMs));
    const refusal = (id: string, atMs: number) => ({
      id,
      sessionId: SID,
      atMs,
      actor: "agent://alice",
      attempt: "commit",
      code: "FORBIDDEN",
      explanation: "only the approver may commit",
      source: "demo" as const,
    });
    const t = buildTimeline(s.view, s.events, [
      refusal("late", (times[2] ?? 0) + 5),
      refusal("early", (times[0] ?? 0) - 1),
      refusal("mid", times[1] ?? 0),
    ]);
    const shape = t.rows.map((r) => (r.kind === "group" ? "G" : r.kind === "refusal" ? `R:${r.refusal.id}` : String(r.sequence)));
    expect(shape).toEqual(["R:early", "1", "G", "2", "R:mid", "3", "R:late"]);
    expect(t.rowOfSequence.get(1)).toBe(1);
    expect(t.rowOfSequence.get(3)).toBe(5);
    // Without refusals the rows are exactly the events' rows.
    expect(buildTimeline(s.view, s.events).rows.every((r) => r.kind !== "refusal")).toBe(true);
  });

  it("keeps events the projection ignored as standalone rows", () => {
    const s = fold([start(), offer("h1", "bob"), accept("nope", "bob")]);
    const t = buildTimeline(s.view, s.events);
    expect(t.rows.map((r) => r.kind)).toEqual(["event", "group", "event", "event"]);
    const last = t.rows[3];
    expect(last?.kind === "event" && last.groupId).toBeUndefined();
  });

  it("leaves task sessions in sequence order", () => {
    const s = fold([start(["alice", "bob"], TASK_MODE), taskEnv.request(), taskEnv.accept(), taskEnv.update(0.3), taskEnv.complete()]);
    const t = buildTimeline(s.view, s.events);
    expect(t.rows.map((r) => (r.kind === "event" ? r.sequence : 0))).toEqual([1, 2, 3, 4, 5]);
  });

  // Its speed is measured by the benchmarks (a timed assertion fails on a busy machine).
  it("builds 20,000 rows, one per event plus the offer's group header", () => {
    const envs = [start(), offer("h1", "bob"), ...Array.from({ length: 19_998 }, (_, i) => context("h1", `note ${i}`))];
    const s = fold(envs);
    const t = buildTimeline(s.view, s.events);
    expect(t.rows).toHaveLength(20_001);
  });
});

describe("newestSequenceNotBy", () => {
  it("finds the newest event someone else sent, the runtime included", () => {
    const evs = [
      makeEvent(HANDOFF_MODE, "HandoffOffer", { handoffId: "h1", targetParticipant: "bob" }, { sender: "alice", sequence: 2 }),
      makeEvent(HANDOFF_MODE, "HandoffAccept", { handoffId: "h1" }, { sender: "bob", sequence: 3 }),
      makeEvent(HANDOFF_MODE, "HandoffContext", { handoffId: "h1" }, { sender: "alice", sequence: 4 }),
    ];
    expect(newestSequenceNotBy(evs, "alice")).toBe(3);
    expect(newestSequenceNotBy(evs, "bob")).toBe(4);
    expect(newestSequenceNotBy(evs.slice(0, 1), "alice")).toBe(0);
    expect(newestSequenceNotBy([], "alice")).toBe(0);
  });
});
