// Row model for the virtualized session timeline. Handoff events are grouped
// per handoff_id (offer → contexts → accept/decline), each group anchored
// where its offer occurred; everything else (start, commitment, task events,
// anything not understood) stays in sequence order. Group membership comes
// from the Handoff projection's records (message ids), never re-derived here.

import type { HandoffRecord } from "@/lib/macp/projections/handoff";
import type { SessionView } from "@/lib/macp/projections/session";
import type { SessionEvent } from "@/lib/macp/projections/types";

/** A refused attempt this tab saw (kept by lib/client/refusals.ts). */
export interface LocalRefusal {
  /** Unique per refusal (e.g. the refused message id, or run id + step). */
  id: string;
  sessionId: string;
  /** When it was attempted, on the clock envelope timestamps use (Unix ms). */
  atMs: number;
  /** Who attempted it (participant id). */
  actor: string;
  /** What was attempted, in a few words ("commit", "Approve the handoff"). */
  attempt: string;
  /** MACP error code, e.g. "FORBIDDEN"; for a console refusal its deny code. */
  code: string;
  /** What it means, in plain words. */
  explanation: string;
  /** Who refused and where it was seen. */
  source: "runtime" | "console" | "demo";
}

export interface GroupRow {
  kind: "group";
  key: string;
  offer: HandoffRecord;
  /** 1-based position of the offer in the session. */
  ordinal: number;
  /** Offers in the session. */
  total: number;
}

export interface EventRow {
  kind: "event";
  key: string;
  event: SessionEvent;
  sequence: number;
  /** handoff_id when the event belongs to a handoff group. */
  groupId?: string;
  /** A context that arrived after the offer was answered. */
  late?: boolean;
  /** Last row of its group (for drawing the group's end). */
  groupEnd?: boolean;
}

/** A refused attempt: a local annotation, not an event of the session (lib/client/refusals.ts). */
export interface RefusalRow {
  kind: "refusal";
  key: string;
  refusal: LocalRefusal;
}

export type TimelineRow = GroupRow | EventRow | RefusalRow;

export interface Timeline {
  rows: TimelineRow[];
  /** Row index for each event sequence. */
  rowOfSequence: Map<number, number>;
  /** Highest sequence present. */
  newestSequence?: number;
}

interface Membership {
  handoffId: string;
  late: boolean;
}

export function buildTimeline(view: SessionView, events: readonly SessionEvent[], refusals: readonly LocalRefusal[] = []): Timeline {
  const offers = view.handoff?.offers ?? [];
  const members = new Map<string, Membership>();
  offers.forEach((o) => {
    if (o.offerMessageId) members.set(o.offerMessageId, { handoffId: o.handoffId, late: false });
    for (const c of o.contexts) if (c.messageId) members.set(c.messageId, { handoffId: o.handoffId, late: c.late });
    if (o.responseMessageId) members.set(o.responseMessageId, { handoffId: o.handoffId, late: false });
  });

  const byGroup = new Map<string, SessionEvent[]>();
  if (members.size > 0) {
    for (const e of events) {
      const m = members.get(e.envelope.messageId);
      if (!m) continue;
      const list = byGroup.get(m.handoffId);
      if (list) list.push(e);
      else byGroup.set(m.handoffId, [e]);
    }
  }
  const ordinal = new Map(offers.map((o, i) => [o.handoffId, i + 1]));
  const record = new Map(offers.map((o) => [o.handoffId, o]));

  const rows: TimelineRow[] = [];
  const rowOfSequence = new Map<number, number>();
  const emitted = new Set<string>();
  let newest: number | undefined;

  const pushEvent = (e: SessionEvent, extra: Partial<EventRow> = {}): void => {
    const sequence = e.sequence ?? 0;
    if (newest === undefined || sequence > newest) newest = sequence;
    rowOfSequence.set(sequence, rows.length);
    rows.push({ kind: "event", key: `e-${sequence}-${e.envelope.messageId}`, event: e, sequence, ...extra });
  };

  for (const e of events) {
    const m = members.get(e.envelope.messageId);
    const offer = m ? record.get(m.handoffId) : undefined;
    if (!m || !offer) {
      pushEvent(e);
      continue;
    }
    if (emitted.has(m.handoffId)) continue;
    emitted.add(m.handoffId);
    rows.push({ kind: "group", key: `g-${m.handoffId}`, offer, ordinal: ordinal.get(m.handoffId) ?? 0, total: offers.length });
    const groupEvents = byGroup.get(m.handoffId) ?? [e];
    groupEvents.forEach((ge, i) => {
      const gm = members.get(ge.envelope.messageId);
      const extra: Partial<EventRow> = { groupId: m.handoffId };
      if (gm?.late) extra.late = true;
      if (i === groupEvents.length - 1) extra.groupEnd = true;
      pushEvent(ge, extra);
    });
  }
  const placed = refusals.length > 0 ? withRefusals(rows, refusals) : rows;
  if (placed !== rows) {
    rowOfSequence.clear();
    placed.forEach((r, i) => {
      if (r.kind === "event") rowOfSequence.set(r.sequence, i);
    });
  }
  const timeline: Timeline = { rows: placed, rowOfSequence };
  if (newest !== undefined) timeline.newestSequence = newest;
  return timeline;
}

const timeOf = (e: SessionEvent): number => Number(e.envelope.timestampUnixMs) || e.receivedAtMs || 0;

/**
 * Rows with each refusal after the last event row whose timestamp is not later
 * than the attempt (before every event when it is earlier than all of them),
 * refusals at the same place in the order they were made. Pure.
 */
export function withRefusals(rows: readonly TimelineRow[], refusals: readonly LocalRefusal[]): TimelineRow[] {
  const sorted = [...refusals].sort((a, b) => a.atMs - b.atMs);
  const after = new Map<number, LocalRefusal[]>(); // row index → refusals after it (-1: before all)
  for (const r of sorted) {
    let at = -1;
    rows.forEach((row, i) => {
      if (row.kind === "event" && timeOf(row.event) <= r.atMs) at = i;
    });
    const list = after.get(at);
    if (list) list.push(r);
    else after.set(at, [r]);
  }
  const out: TimelineRow[] = [];
  const emit = (i: number): void => {
    for (const r of after.get(i) ?? []) out.push({ kind: "refusal", key: `r-${r.id}`, refusal: r });
  };
  emit(-1);
  rows.forEach((row, i) => {
    out.push(row);
    emit(i);
  });
  return out;
}

/** Each event's sequence by message id (links from the summaries to their events). */
export function sequencesByMessageId(events: readonly SessionEvent[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const e of events) if (e.sequence !== undefined) m.set(e.envelope.messageId, e.sequence);
  return m;
}

/**
 * Sequence of the newest event someone other than `me` sent (the runtime
 * included), or 0 when there is none: a notice about my own action stays
 * until this moves, i.e. until the session moves on without me.
 */
export function newestSequenceNotBy(events: readonly SessionEvent[], me: string): number {
  for (let i = events.length - 1; i >= 0; i -= 1) {
    const e = events[i];
    if (e && e.envelope.sender !== me) return e.sequence ?? 0;
  }
  return 0;
}
