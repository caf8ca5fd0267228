// applySubscribeBatch folds each batch in one draft (reduceSessionDraft).
// These tests check that, for any way of cutting a stream into batches, it
// produces the same views and the same announcements as folding and
// describing one event at a time, and never writes into the state it got.
import { describe, expect, it } from "vitest";
import type { SubscribeSessionResponse } from "@/lib/gen/baton/v1/console_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { describePhaseChange, emptySessionView, reduceSession, type SessionView } from "@/lib/macp/projections/session";
import {
  cut,
  deepFreeze,
  handoffScenarios,
  prng,
  randomHandoffEvents,
  randomTaskEvents,
  splits,
  taskScenarios,
} from "@/lib/macp/projections/testing/fold-scenarios";
import type { SessionEvent } from "@/lib/macp/projections/types";
import { applySubscribeBatch, beginConnection, initialSessionStreamState } from "@/lib/views/session-stream-state";
import { SID, caughtUpMsg, eventMsg, heartbeatMsg, metadataMsg } from "@/lib/views/test/fixtures";

/** The stream for `events`: metadata, the events (one repeated), heartbeats, and caught_up after `head` events. */
function streamOf(events: readonly SessionEvent[], head: number, rand: () => number): SubscribeSessionResponse[] {
  const out: SubscribeSessionResponse[] = [metadataMsg(SessionState.OPEN)];
  events.forEach((e, i) => {
    if (i === head) out.push(caughtUpMsg(head));
    out.push(eventMsg(e.sequence!, e.envelope, e.receivedAtMs ?? 0));
    if (rand() < 0.1) out.push(heartbeatMsg());
    if (i > 0 && rand() < 0.05) out.push(eventMsg(e.sequence! - 1, events[i - 1]!.envelope)); // a duplicate
  });
  if (head >= events.length) out.push(caughtUpMsg(head));
  return out;
}

/**
 * What the batches should say, from one-event-at-a-time folds: for each
 * batch, the last phase-change sentence of the events it folds after the
 * first caught_up, and the view after it.
 */
function expectedPerBatch(events: readonly SessionEvent[], batches: SubscribeSessionResponse[][]) {
  const views: SessionView[] = [emptySessionView(SID)];
  for (const e of events) views.push(reduceSession(views.at(-1)!, e));
  let live = false;
  let folded = 0;
  return batches.map((batch) => {
    let announcement: string | undefined;
    for (const msg of batch) {
      if (msg.item.case === "caughtUp") live = true;
      if (msg.item.case !== "event") continue;
      const seq = Number(msg.item.value.sequence);
      if (seq <= folded) continue;
      folded = seq;
      if (live) announcement = describePhaseChange(views[seq - 1], views[seq]!) ?? announcement;
    }
    return { announcement, view: views[folded]! };
  });
}

function check(events: readonly SessionEvent[], rand: () => number, splitCount: number): void {
  const head = Math.floor(rand() * (events.length + 1));
  const messages = streamOf(events, head, rand);
  for (const sizes of splits(messages.length, rand, splitCount)) {
    const batches = cut(messages, sizes);
    const expected = expectedPerBatch(events, batches);
    let state = beginConnection(initialSessionStreamState(SID));
    batches.forEach((batch, i) => {
      const snapshot = structuredClone(state.view);
      const input = deepFreeze(state);
      const r = applySubscribeBatch(input, batch);
      const where = `caught up at ${head}, batches ${sizes.join(",")}, batch ${i}`;
      expect(r.announcement, where).toBe(expected[i]!.announcement);
      expect(r.state.view, where).toStrictEqual(expected[i]!.view);
      expect(input.view, where).toStrictEqual(snapshot);
      state = r.state;
    });
    expect(state.events.map((e) => e.sequence)).toEqual(events.map((e) => e.sequence));
  }
}

describe("applySubscribeBatch in batches", () => {
  it.each([...Object.entries(handoffScenarios()), ...Object.entries(taskScenarios())])(
    "%s: same views and announcements as one event at a time",
    (_name, events) => {
      const rand = prng(events.length * 7);
      for (let round = 0; round < 6; round++) check(events, rand, 6);
    },
  );

  it("holds for seeded random interleavings", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rand = prng(1000 + seed);
      const events = seed % 2 === 1 ? randomHandoffEvents(rand, 20 + (seed % 30)) : randomTaskEvents(rand, 20 + (seed % 30));
      check(events, rand, 4);
    }
  });
});
