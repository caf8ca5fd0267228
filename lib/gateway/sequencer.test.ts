import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ParticipantActivitySchema, SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { EventSequencer, fresherMetadata, lifecycleChanged } from "./sequencer";
import { handoffScript, OWNER } from "./testing/scenario";

const meta = (state: SessionState, counts: number[] = [], expires = 100n) =>
  create(SessionMetadataSchema, {
    sessionId: "s",
    state,
    startedAtUnixMs: 10n,
    expiresAtUnixMs: expires,
    initiator: OWNER,
    participantActivity: counts.map((messageCount, i) =>
      create(ParticipantActivitySchema, { participantId: `p${i}`, messageCount, lastMessageAtUnixMs: BigInt(20 + i) }),
    ),
  });

describe("EventSequencer", () => {
  const s = handoffScript();
  const history = [s.start(), s.offer(), s.context(), s.accept(), s.commit()];

  it("numbers events after_sequence+1, +2, … and reports the catch-up point", () => {
    const seq = new EventSequencer(2, 4);
    expect(seq.caughtUp).toBe(false);
    expect(seq.accept(history[2]!)).toEqual({ sequence: 3, caughtUpNow: false });
    expect(seq.accept(history[3]!)).toEqual({ sequence: 4, caughtUpNow: true });
    expect(seq.caughtUp).toBe(true);
    expect(seq.accept(history[4]!)).toEqual({ sequence: 5, caughtUpNow: false });
    expect(seq.last).toBe(5);
  });

  it("drops envelopes whose message_id it has already numbered", () => {
    const seq = new EventSequencer(0, 2);
    expect(seq.accept(history[0]!)?.sequence).toBe(1);
    expect(seq.accept(history[1]!)?.sequence).toBe(2);
    expect(seq.accept(history[1]!)).toBeNull();
    expect(seq.accept(history[0]!)).toBeNull();
    expect(seq.accept(history[2]!)?.sequence).toBe(3);
    expect(seq.last).toBe(3);
  });

  it("is caught up from the start when the browser already holds the head", () => {
    const seq = new EventSequencer(5, 5);
    expect(seq.caughtUp).toBe(true);
    expect(seq.accept(history[4]!)).toEqual({ sequence: 6, caughtUpNow: false });
  });

  it("refuses a negative or fractional after_sequence", () => {
    expect(() => new EventSequencer(-1, 0)).toThrow(RangeError);
    expect(() => new EventSequencer(1.5, 0)).toThrow(RangeError);
  });
});

describe("metadata merging", () => {
  it("never lets a stale snapshot undo a terminal state or shrink history", () => {
    const open = meta(SessionState.OPEN, [1]);
    const resolved = meta(SessionState.RESOLVED, [2]);
    expect(fresherMetadata(resolved, open)).toBe(resolved);
    expect(fresherMetadata(open, resolved)).toBe(resolved);
    const longer = meta(SessionState.OPEN, [3]);
    expect(fresherMetadata(longer, open)).toBe(longer);
    const suspended = meta(SessionState.SUSPENDED, [1]);
    expect(fresherMetadata(open, suspended)).toBe(suspended);
    expect(fresherMetadata(undefined, open)).toBe(open);
  });

  it("detects lifecycle changes by state and deadline", () => {
    expect(lifecycleChanged(undefined, meta(SessionState.OPEN))).toBe(true);
    expect(lifecycleChanged(meta(SessionState.OPEN, [1]), meta(SessionState.OPEN, [2]))).toBe(false);
    expect(lifecycleChanged(meta(SessionState.OPEN), meta(SessionState.SUSPENDED))).toBe(true);
    expect(lifecycleChanged(meta(SessionState.OPEN), meta(SessionState.OPEN, [], 200n))).toBe(true);
  });
});
