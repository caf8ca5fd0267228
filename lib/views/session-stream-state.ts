// Pure fold of a SubscribeSession stream into what the session page shows:
// the ordered, de-duplicated events, the SessionView (via the shared
// reduceSession reducer), metadata, and where to resume after a drop.
//
// Resume/dedupe rules:
//  - `lastSequence` is the highest sequence folded; a reconnect asks for
//    `after_sequence = lastSequence`, so nothing is lost.
//  - An event with sequence ≤ lastSequence is a duplicate and is dropped.
//  - An event with sequence > lastSequence + 1 means something was skipped:
//    nothing past the gap is folded and the caller resubscribes from
//    lastSequence. If the same gap persists after MAX_GAP_RETRIES resyncs,
//    the event is folded anyway so a misbehaving server cannot livelock us.
//  - Messages without a usable sequence or envelope are ignored and counted.

import type { SubscribeSessionResponse } from "@/lib/gen/baton/v1/console_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { Draft } from "@/lib/macp/projections/draft";
import { describePhaseChange, emptySessionView, reduceSessionDraft, type SessionView } from "@/lib/macp/projections/session";
import type { SessionEvent } from "@/lib/macp/projections/types";

export const MAX_GAP_RETRIES = 2;

export interface SessionStreamState {
  sessionId: string;
  /** Folded events, ascending and unique by sequence. */
  events: readonly SessionEvent[];
  view: SessionView;
  /** Highest folded sequence; 0 before any event. */
  lastSequence: number;
  metadata?: SessionMetadata;
  /** The current connection has delivered `caught_up`. */
  caughtUp: boolean;
  /** Some connection has delivered `caught_up` (history was replayed at least once). */
  everCaughtUp: boolean;
  /** head_sequence of the latest caught_up. */
  headSequence: number;
  duplicatesDropped: number;
  ignoredMessages: number;
  gapsAccepted: number;
  gapRetry?: { at: number; count: number };
  /** Number of connections opened (1 for the first). */
  connections: number;
  /**
   * Set when the state was handed over by the server's first view as a window
   * (lib/views/session-handover.ts): the sequence of the first event held in
   * `events`; the events before it were folded into `view` on the server but
   * are not held here. Absent: `events` holds the history from its start.
   */
  heldFrom?: number;
  /** What the window left out of the view's lists (their counts stay true): contexts per handoff id, task updates. */
  omitted?: OmittedRecords;
  /** Sequences of the events the summaries link to (offers, commitment) that are outside the window, by message id. */
  linkedSequences?: Readonly<Record<string, number>>;
}

/** Records the handed-over window dropped from the view's per-event lists. */
export interface OmittedRecords {
  /** Per handoff id: contexts dropped, and how many of them were late. */
  contexts: Readonly<Record<string, { count: number; late: number }>>;
  /** Task updates dropped. */
  updates: number;
}

/** Events in the session so far, held or not (the window's earlier ones count too). */
export function eventCount(state: SessionStreamState): number {
  return state.events.length + Math.max(0, (state.heldFrom ?? 1) - 1);
}

/** Whether events before `events[0]` are left on the server (a handed-over window). */
export function isWindowed(state: SessionStreamState): boolean {
  return state.heldFrom !== undefined && state.heldFrom > 1;
}

/**
 * What the stream runner should do after a batch:
 *  - continue: keep reading;
 *  - resync: close this connection and resubscribe from lastSequence now;
 *  - end: the session is terminal and history is complete; close for good;
 *  - end-soon: the session just became terminal while live; allow a short
 *    drain for events racing the lifecycle change, then close.
 */
export type StreamDirective = "continue" | "resync" | "end" | "end-soon";

export interface BatchResult {
  state: SessionStreamState;
  directive: StreamDirective;
  /** One sentence for the aria-live announcer when the phase changed while live. */
  announcement?: string;
}

export function initialSessionStreamState(sessionId: string): SessionStreamState {
  return {
    sessionId,
    events: [],
    view: emptySessionView(sessionId),
    lastSequence: 0,
    caughtUp: false,
    everCaughtUp: false,
    headSequence: 0,
    duplicatesDropped: 0,
    ignoredMessages: 0,
    gapsAccepted: 0,
    connections: 0,
  };
}

/** after_sequence for the next SubscribeSession call. */
export function resumeAfterSequence(state: SessionStreamState): bigint {
  return BigInt(state.lastSequence);
}

/** Mark the start of a new connection attempt. */
export function beginConnection(state: SessionStreamState): SessionStreamState {
  return { ...state, caughtUp: false, connections: state.connections + 1 };
}

export function isTerminalState(state: SessionState | undefined): boolean {
  return state === SessionState.RESOLVED || state === SessionState.EXPIRED || state === SessionState.CANCELLED;
}

/** Whether the stream may close for good: terminal metadata and history complete. */
export function isFinished(state: SessionStreamState): boolean {
  return state.caughtUp && isTerminalState(state.metadata?.state);
}

/** Fold a batch of messages from one connection. Pure; never throws on bad input. */
export function applySubscribeBatch(state: SessionStreamState, messages: readonly SubscribeSessionResponse[]): BatchResult {
  let s = state;
  let view = state.view;
  // The whole batch folds into one draft, so lists that grow per event (an
  // offer's contexts, a task's updates) are appended to rather than copied per
  // event; state.view itself is never written. Intermediate views are
  // therefore not kept: only the phase before each event is.
  const draft = new Draft();
  const added: SessionEvent[] = [];
  let directive: StreamDirective = "continue";
  let announcement: string | undefined;

  const commit = (): SessionStreamState =>
    added.length === 0 && view === s.view ? s : { ...s, events: added.length ? s.events.concat(added) : s.events, view };

  for (const msg of messages) {
    const item = msg.item;
    switch (item.case) {
      case "event": {
        const ev = item.value;
        const seq = Number(ev.sequence);
        if (!ev.envelope || !Number.isSafeInteger(seq) || seq <= 0) {
          s = { ...s, ignoredMessages: s.ignoredMessages + 1 };
          break;
        }
        if (seq <= s.lastSequence) {
          s = { ...s, duplicatesDropped: s.duplicatesDropped + 1 };
          break;
        }
        if (seq > s.lastSequence + 1) {
          const retry = s.gapRetry?.at === s.lastSequence ? s.gapRetry.count : 0;
          if (retry < MAX_GAP_RETRIES) {
            s = { ...s, gapRetry: { at: s.lastSequence, count: retry + 1 } };
            return { state: commit(), directive: "resync", ...(announcement ? { announcement } : {}) };
          }
          s = { ...s, gapsAccepted: s.gapsAccepted + 1 };
        }
        const event: SessionEvent = { envelope: ev.envelope, sequence: seq };
        const observed = Number(ev.observedAtUnixMs);
        if (Number.isFinite(observed) && observed > 0) event.receivedAtMs = observed;
        const before = { phase: view.phase };
        view = reduceSessionDraft(view, event, draft);
        added.push(event);
        s = s.gapRetry ? { ...s, lastSequence: seq, gapRetry: undefined } : { ...s, lastSequence: seq };
        if (s.everCaughtUp) {
          const sentence = describePhaseChange(before, view);
          if (sentence) announcement = sentence;
        }
        break;
      }
      case "metadata": {
        const wasTerminal = isTerminalState(s.metadata?.state);
        s = { ...s, metadata: item.value };
        if (!wasTerminal && isTerminalState(item.value.state) && s.caughtUp) directive = "end-soon";
        break;
      }
      case "caughtUp": {
        const head = Number(item.value.headSequence);
        s = { ...s, caughtUp: true, everCaughtUp: true, headSequence: Number.isSafeInteger(head) ? head : s.headSequence };
        if (isTerminalState(s.metadata?.state)) directive = "end";
        break;
      }
      case "heartbeat":
        break;
      default:
        s = { ...s, ignoredMessages: s.ignoredMessages + 1 };
        break;
    }
  }
  const result: BatchResult = { state: commit(), directive };
  if (announcement) result.announcement = announcement;
  return result;
}

/** Index of the event with this sequence in `events` (binary search), or -1. */
export function indexOfSequence(events: readonly SessionEvent[], sequence: number): number {
  let lo = 0;
  let hi = events.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = events[mid]?.sequence ?? 0;
    if (s === sequence) return mid;
    if (s < sequence) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
