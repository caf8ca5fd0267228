import { describe, expect, it } from "vitest";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import {
  MAX_GAP_RETRIES,
  applySubscribeBatch,
  beginConnection,
  indexOfSequence,
  initialSessionStreamState,
  isFinished,
  resumeAfterSequence,
  type SessionStreamState,
} from "@/lib/views/session-stream-state";
import {
  SID,
  accept,
  caughtUpMsg,
  commitment,
  context,
  decline,
  eventMsg,
  heartbeatMsg,
  metadataMsg,
  offer,
  start,
} from "@/lib/views/test/fixtures";

const history = [start(), offer("h1", "bob"), context("h1"), decline("h1", "bob"), offer("h2", "carol"), accept("h2", "carol")];

function connect(state = initialSessionStreamState(SID)): SessionStreamState {
  return beginConnection(state);
}

describe("applySubscribeBatch", () => {
  it("folds metadata, history and caught_up with the shared reducer", () => {
    const r = applySubscribeBatch(connect(), [
      metadataMsg(SessionState.OPEN),
      ...history.map((e, i) => eventMsg(i + 1, e)),
      caughtUpMsg(6),
    ]);
    expect(r.directive).toBe("continue");
    expect(r.state.lastSequence).toBe(6);
    expect(r.state.events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(r.state.view.phase).toBe("Accepted");
    expect(r.state.view.handoff?.offers.map((o) => o.status)).toEqual(["declined", "accepted"]);
    expect(r.state.caughtUp).toBe(true);
    expect(r.state.headSequence).toBe(6);
    // History replay is not announced.
    expect(r.announcement).toBeUndefined();
  });

  it("drops events with sequence ≤ lastSequence (duplicates across a reconnect)", () => {
    const first = applySubscribeBatch(
      connect(),
      history.slice(0, 3).map((e, i) => eventMsg(i + 1, e)),
    ).state;
    const again = applySubscribeBatch(connect(first), [eventMsg(2, history[1]!), eventMsg(3, history[2]!), eventMsg(4, history[3]!)]);
    expect(again.state.events.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
    expect(again.state.duplicatesDropped).toBe(2);
    expect(again.state.view.phase).toBe("Declined");
  });

  it("resumes after the last folded sequence", () => {
    const s = applySubscribeBatch(
      connect(),
      history.slice(0, 4).map((e, i) => eventMsg(i + 1, e)),
    ).state;
    expect(resumeAfterSequence(s)).toBe(4n);
    expect(resumeAfterSequence(initialSessionStreamState(SID))).toBe(0n);
  });

  it("asks for a resync on a gap and folds nothing past it", () => {
    const s = applySubscribeBatch(connect(), [eventMsg(1, history[0]!), eventMsg(2, history[1]!)]).state;
    const r = applySubscribeBatch(s, [eventMsg(4, history[3]!), eventMsg(5, history[4]!)]);
    expect(r.directive).toBe("resync");
    expect(r.state.lastSequence).toBe(2);
    expect(r.state.events).toHaveLength(2);
    // After the resync the missing event arrives and everything folds.
    const after = applySubscribeBatch(connect(r.state), [eventMsg(3, history[2]!), eventMsg(4, history[3]!)]);
    expect(after.directive).toBe("continue");
    expect(after.state.lastSequence).toBe(4);
    expect(after.state.gapRetry).toBeUndefined();
  });

  it("accepts a persistent gap after bounded retries instead of livelocking", () => {
    let s = applySubscribeBatch(connect(), [eventMsg(1, history[0]!)]).state;
    for (let i = 0; i < MAX_GAP_RETRIES; i += 1) {
      const r = applySubscribeBatch(connect(s), [eventMsg(3, history[2]!)]);
      expect(r.directive).toBe("resync");
      s = r.state;
    }
    const r = applySubscribeBatch(connect(s), [eventMsg(3, history[2]!)]);
    expect(r.directive).toBe("continue");
    expect(r.state.lastSequence).toBe(3);
    expect(r.state.gapsAccepted).toBe(1);
  });

  it("is idempotent: replaying the same batch changes nothing", () => {
    const batch = history.map((e, i) => eventMsg(i + 1, e));
    const once = applySubscribeBatch(connect(), batch).state;
    const twice = applySubscribeBatch(once, batch).state;
    expect(twice.events).toBe(once.events);
    expect(twice.view).toBe(once.view);
    expect(twice.duplicatesDropped).toBe(history.length);
  });

  it("announces phase changes once live", () => {
    const live = applySubscribeBatch(connect(), [eventMsg(1, history[0]!), eventMsg(2, history[1]!), caughtUpMsg(2)]).state;
    const r = applySubscribeBatch(live, [eventMsg(3, history[2]!)]);
    expect(r.announcement).toBe("Context shared with bob");
    const r2 = applySubscribeBatch(r.state, [heartbeatMsg()]);
    expect(r2.announcement).toBeUndefined();
    expect(r2.state).toBe(r.state);
  });

  it("ends when history is complete for a terminal session", () => {
    const r = applySubscribeBatch(connect(), [
      metadataMsg(SessionState.RESOLVED),
      eventMsg(1, history[0]!),
      eventMsg(2, history[1]!),
      eventMsg(3, accept("h1", "bob")),
      eventMsg(4, commitment()),
      caughtUpMsg(4),
    ]);
    expect(r.directive).toBe("end");
    expect(isFinished(r.state)).toBe(true);
    expect(r.state.view.phase).toBe("Committed");
  });

  it("drains briefly when the session turns terminal while live", () => {
    const live = applySubscribeBatch(connect(), [metadataMsg(SessionState.OPEN), eventMsg(1, history[0]!), caughtUpMsg(1)]).state;
    const r = applySubscribeBatch(live, [metadataMsg(SessionState.EXPIRED)]);
    expect(r.directive).toBe("end-soon");
    // A repeated terminal metadata does not re-arm the drain.
    expect(applySubscribeBatch(r.state, [metadataMsg(SessionState.EXPIRED)]).directive).toBe("continue");
  });

  it("ignores malformed events", () => {
    const bad = eventMsg(1, history[0]!);
    if (bad.item.case === "event") delete (bad.item.value as { envelope?: unknown }).envelope;
    const zero = eventMsg(0, history[0]!);
    const r = applySubscribeBatch(connect(), [bad, zero]);
    expect(r.state.ignoredMessages).toBe(2);
    expect(r.state.events).toHaveLength(0);
  });

  it("keeps the observed time as receivedAtMs", () => {
    const r = applySubscribeBatch(connect(), [eventMsg(1, history[0]!, 1_700_000_999_000)]);
    expect(r.state.events[0]?.receivedAtMs).toBe(1_700_000_999_000);
  });
});

describe("indexOfSequence", () => {
  it("finds events by sequence", () => {
    const s = applySubscribeBatch(
      connect(),
      history.map((e, i) => eventMsg(i + 1, e)),
    ).state;
    expect(indexOfSequence(s.events, 1)).toBe(0);
    expect(indexOfSequence(s.events, 6)).toBe(5);
    expect(indexOfSequence(s.events, 7)).toBe(-1);
  });
});
