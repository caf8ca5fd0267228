// The session page's one fold: the server's first view hands its folded state
// to the browser's live view, which resumes its stream after that state's last
// sequence instead of replaying the history (TanStack Query's hydration
// pattern, done by hand: the state is the query's initial data).
//
// What is handed over is bounded whatever the history's length: the folded
// view (lib/macp/projections, the one fold shared by server and browser), the
// metadata, and a window of the last HANDOVER_EVENTS events (at most
// HANDOVER_PAYLOAD_BYTES of payloads). The view's per-event lists (an offer's
// contexts, a task's updates) keep only the window's records, with counts of
// what was left out; the events before the window stay on the server and are
// read on demand (loadFullHistory in use-session-stream.ts, adopted with
// adoptFullHistory below).
//
// Seam rules (tested in session-handover.test.ts): the handed state's
// lastSequence is the last event folded into its view; the live stream asks
// for after_sequence = lastSequence, so an event accepted after the server's
// render arrives on that stream (none lost) and applySubscribeBatch drops any
// sequence ≤ lastSequence (none doubled).

import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { base64Decode, base64Encode } from "@bufbuild/protobuf/wire";
import { SubscribeSessionResponseSchema, type SubscribeSessionResponse } from "@/lib/gen/baton/v1/console_pb";
import { SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { EnvelopeSchema } from "@/lib/gen/macp/v1/envelope_pb";
import type { SessionView } from "@/lib/macp/projections/session";
import type { SessionEvent } from "@/lib/macp/projections/types";
import {
  applySubscribeBatch,
  initialSessionStreamState,
  type OmittedRecords,
  type SessionStreamState,
} from "@/lib/views/session-stream-state";

/** Events handed over with the first view (the newest ones). */
export const HANDOVER_EVENTS = 50;
/** At most this many payload bytes among them (fewer events when payloads are large). */
export const HANDOVER_PAYLOAD_BYTES = 192 * 1024;

const WIRE_VERSION = 1;

/**
 * The state as handed over: `state` (a fold that has caught up) reduced to its
 * last events, its view's lists to the records of those events.
 */
export function windowForHandover(state: SessionStreamState, limits: { events?: number; payloadBytes?: number } = {}): SessionStreamState {
  const maxEvents = limits.events ?? HANDOVER_EVENTS;
  const maxBytes = limits.payloadBytes ?? HANDOVER_PAYLOAD_BYTES;
  const { events } = state;
  let first = events.length;
  let bytes = 0;
  while (first > 0 && events.length - first < maxEvents) {
    const size = events[first - 1]?.envelope.payload.byteLength ?? 0;
    if (bytes + size > maxBytes) break;
    bytes += size;
    first -= 1;
  }
  const windowEvents = events.slice(first);
  const heldFrom = windowEvents[0]?.sequence ?? state.lastSequence + 1;
  const alreadyFrom = state.heldFrom ?? 1;
  if (heldFrom <= alreadyFrom) return state;

  const contexts: Record<string, { count: number; late: number }> = { ...(state.omitted?.contexts ?? {}) };
  let updates = state.omitted?.updates ?? 0;
  const before = (seq: number | undefined): boolean => seq !== undefined && seq < heldFrom;
  let view: SessionView = state.view;
  if (view.handoff) {
    const offers = view.handoff.offers.map((o) => {
      const dropped = o.contexts.filter((c) => before(c.sequence));
      if (dropped.length === 0) return o;
      const prior = contexts[o.handoffId] ?? { count: 0, late: 0 };
      contexts[o.handoffId] = { count: prior.count + dropped.length, late: prior.late + dropped.filter((c) => c.late).length };
      return { ...o, contexts: o.contexts.filter((c) => !before(c.sequence)) };
    });
    view = { ...view, handoff: { ...view.handoff, offers } };
  }
  if (view.task?.task) {
    const t = view.task.task;
    const kept = t.updates.filter((u) => !before(u.sequence));
    if (kept.length !== t.updates.length) {
      updates += t.updates.length - kept.length;
      view = { ...view, task: { ...view.task, task: { ...t, updates: kept } } };
    }
  }

  // The summaries link offers and the commitment to their events.
  const linkedIds = new Set<string>(state.view.handoff?.offers.map((o) => o.offerMessageId) ?? []);
  const commitment = state.view.commitment;
  if (commitment) linkedIds.add(commitment.messageId);
  const linked: Record<string, number> = { ...(state.linkedSequences ?? {}) };
  for (let i = 0; i < first; i++) {
    const e = events[i];
    if (e?.sequence !== undefined && linkedIds.has(e.envelope.messageId)) linked[e.envelope.messageId] = e.sequence;
  }
  if (commitment?.sequence !== undefined && commitment.sequence < heldFrom) linked[commitment.messageId] = commitment.sequence;

  const omitted: OmittedRecords = { contexts, updates };
  return { ...state, events: windowEvents, view, heldFrom, omitted, linkedSequences: linked };
}

// ------------------------------------------------------------------ wire

interface WireEvent {
  /** sequence, gateway receive time (0: unknown), the envelope's protobuf bytes (base64). */
  s: number;
  t: number;
  e: string;
}

interface Wire {
  v: typeof WIRE_VERSION;
  sessionId: string;
  lastSequence: number;
  headSequence: number;
  heldFrom: number;
  metadata?: string;
  view: SessionView;
  events: WireEvent[];
  omitted: OmittedRecords;
  linked: Record<string, number>;
}

const BYTES_TAG = "$b64";

/** JSON with Uint8Array fields (payload bytes kept in the view) as base64. */
function replacer(this: unknown, _key: string, value: unknown): unknown {
  return value instanceof Uint8Array ? { [BYTES_TAG]: base64Encode(value) } : value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === BYTES_TAG) {
      const b = (value as Record<string, unknown>)[BYTES_TAG];
      if (typeof b !== "string") throw new Error("bad bytes field");
      return base64Decode(b);
    }
  }
  return value;
}

/** The handed-over state as text for the page (a string prop of the live view). */
export function encodeHandover(state: SessionStreamState): string {
  const wire: Wire = {
    v: WIRE_VERSION,
    sessionId: state.sessionId,
    lastSequence: state.lastSequence,
    headSequence: state.headSequence,
    heldFrom: state.heldFrom ?? 1,
    ...(state.metadata ? { metadata: base64Encode(toBinary(SessionMetadataSchema, state.metadata)) } : {}),
    view: state.view,
    events: state.events.map((e) => ({
      s: e.sequence ?? 0,
      t: e.receivedAtMs ?? 0,
      e: base64Encode(toBinary(EnvelopeSchema, e.envelope)),
    })),
    omitted: state.omitted ?? { contexts: {}, updates: 0 },
    linked: { ...(state.linkedSequences ?? {}) },
  };
  return JSON.stringify(wire, replacer);
}

const isCount = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;

/**
 * The live view's starting state from the page's handover text, checked: the
 * same session, a caught-up fold whose window ends at its lastSequence with
 * no gap. Throws on anything else (the live view then replays the history).
 */
export function decodeHandover(text: string, sessionId: string): SessionStreamState {
  const wire = JSON.parse(text, reviver) as Partial<Wire> | null;
  if (!wire || typeof wire !== "object" || wire.v !== WIRE_VERSION) throw new Error("unknown handover version");
  if (wire.sessionId !== sessionId) throw new Error("handover is for another session");
  const { lastSequence, headSequence, heldFrom, view, events, omitted, linked } = wire;
  if (!isCount(lastSequence) || !isCount(headSequence) || !isCount(heldFrom) || heldFrom < 1) throw new Error("bad handover sequences");
  if (!view || typeof view !== "object" || view.sessionId !== sessionId) throw new Error("bad handover view");
  if (!Array.isArray(events) || !omitted || typeof omitted !== "object" || !linked || typeof linked !== "object")
    throw new Error("bad handover");
  const held: SessionEvent[] = [];
  let expect = heldFrom;
  for (const w of events) {
    if (!w || !isCount(w.s) || w.s !== expect || !isCount(w.t) || typeof w.e !== "string")
      throw new Error(`handover events are not contiguous at ${expect}`);
    const event: SessionEvent = { envelope: fromBinary(EnvelopeSchema, base64Decode(w.e)), sequence: w.s };
    if (w.t > 0) event.receivedAtMs = w.t;
    held.push(event);
    expect += 1;
  }
  if (expect !== lastSequence + 1) throw new Error("handover window does not end at its last sequence");
  const state: SessionStreamState = {
    ...initialSessionStreamState(sessionId),
    events: held,
    view,
    lastSequence,
    headSequence,
    // The server's fold had caught up; this tab's own stream has not yet.
    everCaughtUp: true,
    caughtUp: false,
  };
  if (wire.metadata !== undefined) state.metadata = fromBinary(SessionMetadataSchema, base64Decode(wire.metadata));
  if (heldFrom > 1) {
    state.heldFrom = heldFrom;
    state.omitted = omitted;
    state.linkedSequences = linked;
  }
  return state;
}

// ------------------------------------------------------------------ on demand

/**
 * `current` (a window, possibly folded further by the live stream) completed
 * with `full`, the history read from its start on a separate stream: every
 * event once, ascending. When the live stream has gone further than `full`,
 * its newer events are folded onto `full` with the same fold; when `full` went
 * further, its lastSequence is kept and the live stream drops those events as
 * duplicates when they reach it.
 */
export function adoptFullHistory(current: SessionStreamState, full: SessionStreamState): SessionStreamState {
  if (full.heldFrom !== undefined && full.heldFrom > 1) throw new Error("the full history must start at the first event");
  const from = current.heldFrom ?? 1;
  if (full.lastSequence < from - 1) throw new Error(`the history read ends at #${full.lastSequence}, before the window's #${from}`);
  let merged = full;
  const newer = current.events.filter((e) => (e.sequence ?? 0) > full.lastSequence);
  if (newer.length > 0) {
    const messages: SubscribeSessionResponse[] = newer.map((e) =>
      create(SubscribeSessionResponseSchema, {
        item: {
          case: "event",
          value: {
            sessionId: current.sessionId,
            sequence: BigInt(e.sequence ?? 0),
            envelope: e.envelope,
            observedAtUnixMs: BigInt(e.receivedAtMs ?? 0),
          },
        },
      }),
    );
    merged = applySubscribeBatch({ ...full, everCaughtUp: false }, messages).state;
  }
  const out: SessionStreamState = {
    ...current,
    events: merged.events,
    view: merged.view,
    lastSequence: merged.lastSequence,
    headSequence: Math.max(current.headSequence, full.headSequence),
    duplicatesDropped: current.duplicatesDropped + full.duplicatesDropped,
    gapsAccepted: current.gapsAccepted + merged.gapsAccepted,
  };
  if (!out.metadata && full.metadata) out.metadata = full.metadata;
  delete out.heldFrom;
  delete out.omitted;
  delete out.linkedSequences;
  return out;
}
