// Sequence numbering, deduplication and summaries for envelopes coming from a
// runtime passive subscription. Pure: no I/O, no clocks except where passed in.
//
// A passive subscribe (PROTOCOL.md §8.1) replays the session log after
// `after_sequence`, then goes live. The runtime sends no sequence numbers, so
// the gateway numbers events itself: after_sequence+1, +2, … Around the
// replay/live boundary the reference runtime may deliver an envelope twice,
// and runtime annotations can shift positions, so every envelope is
// deduplicated by message_id before it gets a number.
import { create } from "@bufbuild/protobuf";
import { SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { Draft } from "@/lib/macp/projections/draft";
import { emptySessionView, reduceSessionDraft, type SessionView } from "@/lib/macp/projections/session";

/**
 * Number of client envelopes in the session's accepted history, from
 * metadata: the SessionStart plus every accepted non-start message (§3.8).
 */
export function historyCount(meta: SessionMetadata): number {
  let n = 1;
  for (const a of meta.participantActivity) n += a.messageCount;
  return n;
}

export function isTerminalState(state: SessionState): boolean {
  return state === SessionState.RESOLVED || state === SessionState.EXPIRED || state === SessionState.CANCELLED;
}

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
 * A session's projection as folded by the session index: the shared
 * SessionView reducer plus message_id deduplication across reconnects.
 * `count` is the number of distinct envelopes folded, which is also the
 * `after_sequence` to resume the upstream subscription from.
 */
export class SessionFold {
  private readonly seen = new Set<string>();
  private folded: SessionView;
  private n = 0;
  /**
   * Adds between two reads of `view` fold as one batch (see draft.ts), so a
   * history replay of n envelopes is linear rather than copying growing lists
   * per envelope. Reading `view` ends the batch: a view handed out is never
   * written again.
   */
  private draft: Draft | undefined;

  constructor(sessionId: string, mode = "") {
    this.folded = emptySessionView(sessionId, mode);
  }

  get view(): SessionView {
    this.draft = undefined;
    return this.folded;
  }

  get count(): number {
    return this.n;
  }

  /** Fold one envelope; false when it was a duplicate and changed nothing. */
  add(envelope: Envelope): boolean {
    const id = envelope.messageId;
    if (id !== "") {
      if (this.seen.has(id)) return false;
      this.seen.add(id);
    }
    this.n += 1;
    this.draft ??= new Draft();
    this.folded = reduceSessionDraft(this.folded, { envelope, sequence: this.n }, this.draft);
    return true;
  }
}

/** Latest server-side activity time in metadata (start or last message). */
function metadataActivityMs(meta: SessionMetadata): number {
  let t = Number(meta.startedAtUnixMs);
  for (const a of meta.participantActivity) t = Math.max(t, Number(a.lastMessageAtUnixMs));
  return t;
}

/**
 * The list row for a session: runtime metadata plus the projection fields.
 * `view` is undefined when the history could not be read (e.g. the console's
 * identity may not read the session); the row then carries metadata only.
 */
export function toSummary(meta: SessionMetadata, view: SessionView | undefined, eventCount: number): SessionSummary {
  // Envelope timestamps come from agents' clocks; never let one claim the future.
  const agentClaimed = Math.min(view?.lastActivityMs ?? 0, Date.now());
  const activity = Math.max(metadataActivityMs(meta), agentClaimed);
  const started = view?.started === true;
  return create(SessionSummarySchema, {
    metadata: meta,
    phase: started ? view.phase : "",
    intent: view?.intent ?? "",
    currentOwner: view?.currentOwner ?? (meta.initiator || ""),
    currentTarget: view?.currentTarget ?? "",
    scope: view?.scope ?? "",
    lastActivityUnixMs: BigInt(Math.trunc(activity)),
    eventCount: BigInt(eventCount),
    outcome: view?.commitment ? (view.commitment.outcomePositive ? "positive" : "negative") : "",
  });
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
