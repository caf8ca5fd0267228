// Sequence numbering and deduplication for envelopes coming from a
// runtime passive subscription. Pure: no I/O, no clocks except where passed in.
//
// A passive subscribe (PROTOCOL.md §8.1) replays the session log after
// `after_sequence`, then goes live. The runtime sends no sequence numbers, so
// the gateway numbers events itself: after_sequence+1, +2, … Around the
// replay/live boundary the reference runtime may deliver an envelope twice,
// and runtime annotations can shift positions, so every envelope is
// deduplicated by message_id before it gets a number.
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { historyCount, isTerminalState } from "@/lib/macp/projections/summary";

/** Whether two metadata snapshots differ in what a lifecycle change shows. */
export function lifecycleChanged(before: SessionMetadata | undefined, after: SessionMetadata): boolean {
  return !before || before.state !== after.state || before.expiresAtUnixMs !== after.expiresAtUnixMs;
}

export interface Sequenced {
  sequence: number;
  /** True for the event that reaches the head of history known at start. */
  caughtUpNow: boolean;
}

/**
 * Numbers the envelopes of one browser subscription. `afterSequence` is how
 * many events the browser already holds; `headSequence` how many the history
 * held when the subscription started (from GetSession metadata).
 */
export class EventSequencer {
  private readonly seen = new Set<string>();
  private lastSequence: number;
  private caught: boolean;

  constructor(
    readonly afterSequence: number,
    readonly headSequence: number,
  ) {
    if (!Number.isSafeInteger(afterSequence) || afterSequence < 0) throw new RangeError("afterSequence must be a non-negative integer");
    this.lastSequence = afterSequence;
    this.caught = headSequence <= afterSequence;
  }

  /** Sequence of the newest event handed out (after_sequence before any). */
  get last(): number {
    return this.lastSequence;
  }

  /** Whether history up to `headSequence` has been delivered. */
  get caughtUp(): boolean {
    return this.caught;
  }

  /** Number the envelope, or return null when its message_id was seen already. */
  accept(envelope: Envelope): Sequenced | null {
    const id = envelope.messageId;
    if (id !== "") {
      if (this.seen.has(id)) return null;
      this.seen.add(id);
    }
    this.lastSequence += 1;
    let caughtUpNow = false;
    if (!this.caught && this.lastSequence >= this.headSequence) {
      this.caught = true;
      caughtUpNow = true;
    }
    return { sequence: this.lastSequence, caughtUpNow };
  }
}

/**
 * Pick the fresher of two metadata snapshots of one session from different
 * sources (GetSession, ListSessions, WatchSessions events), which can arrive
 * out of order. Terminal states are final and history only grows, so those
 * decide; otherwise the incoming snapshot wins.
 */
export function fresherMetadata(current: SessionMetadata | undefined, incoming: SessionMetadata): SessionMetadata {
  if (!current) return incoming;
  const curTerminal = isTerminalState(current.state);
  const inTerminal = isTerminalState(incoming.state);
  if (curTerminal && !inTerminal) return current;
  if (inTerminal && !curTerminal) return incoming;
  const a = historyCount(current);
  const b = historyCount(incoming);
  if (a !== b) return a > b ? current : incoming;
  return incoming;
}
