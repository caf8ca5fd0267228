import { describe, expect, it } from "vitest";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import {
  applySubscribeBatch,
  beginConnection,
  eventCount,
  initialSessionStreamState,
  isWindowed,
  type SessionStreamState,
} from "@/lib/views/session-stream-state";
import { adoptFullHistory, decodeHandover, encodeHandover, windowForHandover } from "@/lib/views/session-handover";
import { SID, accept, caughtUpMsg, context, decline, eventMsg, metadataMsg, offer, start, taskEnv } from "@/lib/views/test/fixtures";

/** start, offer h1, 20 contexts on h1, decline, offer h2, 10 contexts on h2 (34 events). */
function handoffHistory(): Envelope[] {
  const out = [start(), offer("h1", "bob")];
  for (let i = 0; i < 20; i++) out.push(context("h1", `# Runbook ${i}`));
  out.push(decline("h1", "bob"), offer("h2", "carol"));
  for (let i = 0; i < 10; i++) out.push(context("h2", `note ${i}`));
  return out;
}

/** The server's fold: the whole history from 0, caught up. */
function fold(envelopes: readonly Envelope[], from = 1, base = initialSessionStreamState(SID)): SessionStreamState {
  const msgs = [
    metadataMsg(SessionState.OPEN),
    ...envelopes.map((e, i) => eventMsg(from + i, e, 1_700_000_000_000 + i)),
    caughtUpMsg(from + envelopes.length - 1),
  ];
  return applySubscribeBatch(beginConnection(base), msgs).state;
}

describe("windowForHandover", () => {
  it("keeps the last events and the view's records of them, with counts of the rest", () => {
    const full = fold(handoffHistory());
    const w = windowForHandover(full, { events: 8 });
    expect(w.events.map((e) => e.sequence)).toEqual([27, 28, 29, 30, 31, 32, 33, 34]);
    expect(w.heldFrom).toBe(27);
    expect(w.lastSequence).toBe(34);
    expect(isWindowed(w)).toBe(true);
    expect(eventCount(w)).toBe(34);
    // h1's 20 contexts are all before the window; 2 of h2's 10 are too.
    const [h1, h2] = w.view.handoff?.offers ?? [];
    expect(h1?.contexts).toHaveLength(0);
    expect(h2?.contexts.map((c) => c.sequence)).toEqual([27, 28, 29, 30, 31, 32, 33, 34]);
    expect(w.omitted).toEqual({ contexts: { h1: { count: 20, late: 0 }, h2: { count: 2, late: 0 } }, updates: 0 });
    // The folded phase and statuses are the whole history's.
    expect(w.view.phase).toBe(full.view.phase);
    expect(h1?.status).toBe("declined");
    // Offers outside the window keep a link to their event.
    expect(w.linkedSequences).toEqual({
      [full.view.handoff?.offers[0]?.offerMessageId ?? ""]: 2,
      [full.view.handoff?.offers[1]?.offerMessageId ?? ""]: 24,
    });
    // The full state is not touched.
    expect(full.events).toHaveLength(34);
    expect(full.view.handoff?.offers[0]?.contexts).toHaveLength(20);
  });

  it("hands a short history over whole", () => {
    const full = fold(handoffHistory().slice(0, 5));
    expect(windowForHandover(full, { events: 100 })).toBe(full);
  });

  it("holds fewer events when their payloads exceed the byte bound", () => {
    const full = fold(handoffHistory());
    const size = full.events.at(-1)?.envelope.payload.byteLength ?? 0;
    const w = windowForHandover(full, { events: 100, payloadBytes: size * 3 });
    expect(w.events.length).toBeLessThanOrEqual(3);
    expect(w.events.at(-1)?.sequence).toBe(34);
    expect(eventCount(w)).toBe(34);
  });

  it("drops task updates before the window and counts them", () => {
    const envs = [start(["alice", "bob"], "macp.mode.task.v1"), taskEnv.request(), taskEnv.accept()];
    for (let i = 1; i <= 9; i++) envs.push(taskEnv.update(i / 10));
    const full = fold(envs);
    const w = windowForHandover(full, { events: 4 });
    expect(w.view.task?.task?.updates).toHaveLength(4);
    expect(w.omitted?.updates).toBe(5);
    expect(w.view.task?.task?.latestProgress).toBe(full.view.task?.task?.latestProgress);
  });
});

describe("encodeHandover / decodeHandover", () => {
  it("round-trips the windowed state: view, bytes, metadata, events and where to resume", () => {
    const w = windowForHandover(fold(handoffHistory()), { events: 8 });
    const back = decodeHandover(encodeHandover(w), SID);
    expect(back.lastSequence).toBe(34);
    expect(back.heldFrom).toBe(27);
    expect(back.view).toEqual(w.view);
    expect(back.view.handoff?.offers[1]?.contexts[0]?.context).toBeInstanceOf(Uint8Array);
    expect(back.events.map((e) => [e.sequence, e.envelope.messageId, e.receivedAtMs])).toEqual(
      w.events.map((e) => [e.sequence, e.envelope.messageId, e.receivedAtMs]),
    );
    expect(back.events[0]?.envelope).toEqual(w.events[0]?.envelope);
    expect(back.metadata?.state).toBe(SessionState.OPEN);
    expect(back.omitted).toEqual(w.omitted);
    expect(back.linkedSequences).toEqual(w.linkedSequences);
    // In place at once (the server's fold had caught up), resuming on its own stream.
    expect(back.everCaughtUp).toBe(true);
    expect(back.caughtUp).toBe(false);
  });

  it("round-trips a whole short history as not windowed", () => {
    const full = fold(handoffHistory().slice(0, 5));
    const back = decodeHandover(encodeHandover(windowForHandover(full)), SID);
    expect(isWindowed(back)).toBe(false);
    expect(back.events).toHaveLength(5);
    expect(back.view).toEqual(full.view);
  });

  it("refuses another session's state, a gap or a window that does not end at lastSequence", () => {
    const w = windowForHandover(fold(handoffHistory()), { events: 8 });
    const text = encodeHandover(w);
    expect(() => decodeHandover(text, "01JOTHERSESSION00000000001")).toThrow(/another session/);
    const gap = JSON.parse(text) as { events: { s: number }[]; lastSequence: number };
    gap.events.splice(3, 1);
    expect(() => decodeHandover(JSON.stringify(gap), SID)).toThrow(/contiguous/);
    const short = JSON.parse(text) as { lastSequence: number };
    short.lastSequence = 35;
    expect(() => decodeHandover(JSON.stringify(short), SID)).toThrow(/last sequence/);
    expect(() => decodeHandover("{}", SID)).toThrow(/version/);
  });
});

describe("the seam between the first view and the live stream", () => {
  it("resumes after lastSequence: an event accepted after the render is folded once, a replayed one is dropped", () => {
    const envs = handoffHistory();
    const late = [context("h2", "late note"), accept("h2", "carol")];
    const handed = decodeHandover(encodeHandover(windowForHandover(fold(envs), { events: 8 })), SID);
    // What the live stream delivers when asked for after_sequence = 34 (a
    // server may repeat the last event it holds: it must not count twice).
    const r = applySubscribeBatch(beginConnection(handed), [
      metadataMsg(SessionState.OPEN),
      eventMsg(34, envs[33] as Envelope),
      eventMsg(35, late[0] as Envelope),
      eventMsg(36, late[1] as Envelope),
      caughtUpMsg(36),
    ]);
    expect(r.directive).toBe("continue");
    const s = r.state;
    expect(s.lastSequence).toBe(36);
    expect(s.duplicatesDropped).toBe(1);
    expect(s.events.map((e) => e.sequence)).toEqual([27, 28, 29, 30, 31, 32, 33, 34, 35, 36]);
    expect(eventCount(s)).toBe(36);
    // The same result as folding everything from the start, except the lists the window left out.
    const whole = fold([...envs, ...late]);
    expect(s.view.phase).toBe(whole.view.phase);
    expect(s.view.events).toBe(whole.view.events);
    expect(s.view.handoff?.offers.map((o) => o.status)).toEqual(whole.view.handoff?.offers.map((o) => o.status));
    const h2 = s.view.handoff?.offers[1];
    expect((h2?.contexts.length ?? 0) + (s.omitted?.contexts.h2?.count ?? 0)).toBe(whole.view.handoff?.offers[1]?.contexts.length);
  });

  it("asks to resync when the stream skips past lastSequence", () => {
    const handed = decodeHandover(encodeHandover(windowForHandover(fold(handoffHistory()), { events: 8 })), SID);
    const r = applySubscribeBatch(beginConnection(handed), [eventMsg(36, context("h2"))]);
    expect(r.directive).toBe("resync");
    expect(r.state.lastSequence).toBe(34);
  });
});

describe("adoptFullHistory", () => {
  const envs = handoffHistory();
  const live = [context("h2", "live 1"), context("h2", "live 2"), accept("h2", "carol")];
  const handed = () => {
    const d = decodeHandover(encodeHandover(windowForHandover(fold(envs), { events: 8 })), SID);
    return applySubscribeBatch(
      beginConnection(d),
      live.map((e, i) => eventMsg(35 + i, e)),
    ).state;
  };

  it("completes the window with a history read that ends before the live events", () => {
    const current = handed();
    const merged = adoptFullHistory(current, fold(envs));
    const whole = fold([...envs, ...live]);
    expect(merged.events.map((e) => e.sequence)).toEqual(whole.events.map((e) => e.sequence));
    expect(merged.lastSequence).toBe(37);
    expect(merged.view).toEqual(whole.view);
    expect(isWindowed(merged)).toBe(false);
    expect(merged.omitted).toBeUndefined();
    expect(merged.connections).toBe(current.connections);
  });

  it("keeps a history read that went further than the live stream; those events then arrive as duplicates", () => {
    const current = handed();
    const further = [...envs, ...live, context("h2", "after")];
    const merged = adoptFullHistory(current, fold(further));
    expect(merged.lastSequence).toBe(38);
    expect(merged.events).toHaveLength(38);
    const next = applySubscribeBatch(merged, [eventMsg(38, further[37] as Envelope)]).state;
    expect(next.duplicatesDropped).toBe(merged.duplicatesDropped + 1);
    expect(next.events).toHaveLength(38);
  });

  it("refuses a history read that does not reach the window", () => {
    expect(() => adoptFullHistory(handed(), fold(envs.slice(0, 10)))).toThrow(/before the window/);
  });
});
