import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ParticipantActivitySchema, SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { EventSequencer, fresherMetadata, historyCount, lifecycleChanged, SessionFold, toSummary } from "./sequencer";
import { emptySessionView, reduceSession, type SessionView } from "@/lib/macp/projections/session";
import { handoffScript, OWNER, TARGET } from "./testing/scenario";

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

describe("historyCount", () => {
  it("is the SessionStart plus every accepted non-start message", () => {
    expect(historyCount(meta(SessionState.OPEN))).toBe(1);
    expect(historyCount(meta(SessionState.OPEN, [2, 3]))).toBe(6);
  });
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

describe("SessionFold and toSummary", () => {
  it("folds with the shared reducer, ignores duplicates and fills the row", () => {
    const s = handoffScript();
    const fold = new SessionFold(s.sessionId);
    const envs = [s.start("pager rota"), s.offer("h1", "pager"), s.accept()];
    for (const e of envs) expect(fold.add(e)).toBe(true);
    expect(fold.add(envs[1]!)).toBe(false);
    expect(fold.count).toBe(3);
    const row = toSummary(meta(SessionState.OPEN, [1, 1]), fold.view, fold.count);
    expect(row.phase).toBe("Accepted");
    expect(row.intent).toBe("pager rota");
    expect(row.currentOwner).toBe(OWNER);
    expect(row.currentTarget).toBe(TARGET);
    expect(row.scope).toBe("pager");
    expect(row.eventCount).toBe(3n);
    expect(row.outcome).toBe("");

    fold.add(s.commit());
    const done = toSummary(meta(SessionState.RESOLVED, [1, 2]), fold.view, fold.count);
    expect(done.phase).toBe("Committed");
    expect(done.outcome).toBe("positive");
    expect(done.currentOwner).toBe(TARGET);
  });

  it("never changes a view it handed out, and equals folding one by one", () => {
    const s = handoffScript();
    const envs = [s.start(), s.offer()];
    for (let i = 0; i < 6; i++) envs.push(s.context("h1", `note ${i}`));
    envs.push(s.accept(), s.context("h1", "late"), s.commit());
    const fold = new SessionFold(s.sessionId);
    const handedOut: [SessionView, SessionView][] = [];
    envs.forEach((e, i) => {
      fold.add(e);
      if (i % 3 === 1) {
        const v = fold.view;
        handedOut.push([v, structuredClone(v)]);
      }
    });
    for (const [v, snapshot] of handedOut) expect(v).toStrictEqual(snapshot);
    const oneByOne = envs.reduce((v, envelope, i) => reduceSession(v, { envelope, sequence: i + 1 }), emptySessionView(s.sessionId));
    expect(fold.view).toStrictEqual(oneByOne);
    expect(fold.view.handoff?.offers[0]?.contexts).toHaveLength(7);
  });

  it("shows metadata only when the history could not be read", () => {
    const row = toSummary(meta(SessionState.OPEN, [1]), undefined, 0);
    expect(row.phase).toBe("");
    expect(row.currentOwner).toBe(OWNER);
    expect(row.lastActivityUnixMs).toBe(20n);
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
