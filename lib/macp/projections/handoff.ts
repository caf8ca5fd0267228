// Handoff projection (PROTOCOL.md §4.7): a pure, immutable reducer over a
// session's accepted envelopes, using the SDK's phase and status vocabulary.
// Messages that the runtime would have rejected (unknown handoff ids, a
// second response, and so on) are ignored rather than guessed at.
//
// Every change goes through a Draft (see draft.ts): `reduceHandoff` passes
// none, so it copies what it changes as before; a batch fold passes one so
// that the lists growing per event (an offer's contexts) are appended to in
// place instead of being copied per event.

import { CORE_TYPES, HANDOFF_MODE, HANDOFF_TYPES } from "@/lib/macp/constants";
import {
  HandoffAcceptPayloadSchema,
  HandoffContextPayloadSchema,
  HandoffDeclinePayloadSchema,
  HandoffOfferPayloadSchema,
} from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import { decodeAs } from "@/lib/macp/payloads";
import { appended, Draft, replacedAt, writable } from "@/lib/macp/projections/draft";
import { commitmentFromEvent, eventTimeMs, type CommitmentRecord, type SessionEvent } from "@/lib/macp/projections/types";

export type HandoffPhase = "Pending" | "OfferPending" | "ContextSharing" | "Accepted" | "Declined" | "Committed";
export type HandoffStatus = "offered" | "context_sent" | "accepted" | "declined";
/** Runtime-side disposition vocabulary used by the conformance vectors (§4.4). */
export type HandoffDisposition = "Offered" | "Accepted" | "Declined";

export interface HandoffContextRecord {
  contentType: string;
  context: Uint8Array;
  sender: string;
  timestampMs: number;
  messageId: string;
  sequence?: number;
  /** True when the context arrived after the offer was accepted or declined. */
  late: boolean;
}

export interface HandoffRecord {
  handoffId: string;
  target: string;
  scope: string;
  reason: string;
  offeredBy: string;
  /** Offer envelope timestamp (Unix ms). */
  offeredAt: number;
  offerMessageId: string;
  status: HandoffStatus;
  contexts: readonly HandoffContextRecord[];
  /** Filled in by HandoffAccept: the payload's accepted_by, or the sender when empty. */
  acceptedBy?: string;
  /** Filled in by HandoffDecline: the payload's declined_by, or the sender when empty. */
  declinedBy?: string;
  /** Reason given in the accept or decline. */
  responseReason?: string;
  /** Timestamp of the accept or decline (Unix ms). */
  respondedAt?: number;
  responseMessageId?: string;
}

export interface HandoffState {
  phase: HandoffPhase;
  /** One record per handoff_id, in the order the offers were made. */
  offers: readonly HandoffRecord[];
  commitment?: CommitmentRecord;
}

export const initialHandoffState: HandoffState = Object.freeze({
  phase: "Pending",
  offers: Object.freeze([]) as readonly HandoffRecord[],
}) as HandoffState;

/** Fold one event into the handoff state. Returns a new object when anything changed. */
export function reduceHandoff(state: HandoffState, event: SessionEvent): HandoffState {
  return reduceHandoffDraft(state, event, undefined);
}

/**
 * reduceHandoff within a batch: objects `draft` created earlier in the batch
 * are written in place, anything else is copied on first write. Without a
 * draft this is reduceHandoff.
 */
export function reduceHandoffDraft(state: HandoffState, event: SessionEvent, draft: Draft | undefined): HandoffState {
  const env = event.envelope;
  if (env.mode !== "" && env.mode !== HANDOFF_MODE) return state;
  switch (env.messageType) {
    case HANDOFF_TYPES.Offer:
      return onOffer(state, event, draft);
    case HANDOFF_TYPES.Context:
      return onContext(state, event, draft);
    case HANDOFF_TYPES.Accept:
      return onResponse(state, event, "accepted", draft);
    case HANDOFF_TYPES.Decline:
      return onResponse(state, event, "declined", draft);
    case CORE_TYPES.Commitment:
      return onCommitment(state, event, draft);
    default:
      return state;
  }
}

/** Fold a list of events from the initial state (in one batch: linear in the number of events). */
export function handoffFromEvents(events: readonly SessionEvent[]): HandoffState {
  const draft = new Draft();
  let state = initialHandoffState;
  for (const event of events) state = reduceHandoffDraft(state, event, draft);
  return state;
}

function afterCommit(state: HandoffState, phase: HandoffPhase): HandoffPhase {
  // Nothing moves a committed session back; the runtime rejects such messages.
  return state.phase === "Committed" ? "Committed" : phase;
}

function onOffer(state: HandoffState, event: SessionEvent, draft: Draft | undefined): HandoffState {
  const env = event.envelope;
  const p = decodeAs(HandoffOfferPayloadSchema, env.payload);
  if (!p || p.handoffId === "" || getHandoff(state, p.handoffId)) return state;
  const record: HandoffRecord = {
    handoffId: p.handoffId,
    target: p.targetParticipant,
    scope: p.scope,
    reason: p.reason,
    offeredBy: env.sender,
    offeredAt: eventTimeMs(event),
    offerMessageId: env.messageId,
    status: "offered",
    contexts: [],
  };
  const next = writable(draft, state);
  next.phase = afterCommit(state, "OfferPending");
  next.offers = appended(draft, state.offers, record);
  return next;
}

function onContext(state: HandoffState, event: SessionEvent, draft: Draft | undefined): HandoffState {
  const env = event.envelope;
  const p = decodeAs(HandoffContextPayloadSchema, env.payload);
  if (!p) return state;
  const index = indexOfHandoff(state, p.handoffId);
  const existing = state.offers[index];
  if (!existing) return state;
  const late = existing.status === "accepted" || existing.status === "declined";
  const ctx: HandoffContextRecord = {
    contentType: p.contentType,
    context: p.context,
    sender: env.sender,
    timestampMs: eventTimeMs(event),
    messageId: env.messageId,
    late,
  };
  if (event.sequence !== undefined) ctx.sequence = event.sequence;
  const updated = writable(draft, existing);
  updated.status = existing.status === "offered" ? "context_sent" : existing.status;
  updated.contexts = appended(draft, existing.contexts, ctx);
  const next = writable(draft, state);
  next.phase = state.phase === "OfferPending" ? "ContextSharing" : state.phase;
  next.offers = replacedAt(draft, state.offers, index, updated);
  return next;
}

function onResponse(state: HandoffState, event: SessionEvent, outcome: "accepted" | "declined", draft: Draft | undefined): HandoffState {
  const env = event.envelope;
  const p = outcome === "accepted" ? decodeAs(HandoffAcceptPayloadSchema, env.payload) : decodeAs(HandoffDeclinePayloadSchema, env.payload);
  if (!p) return state;
  const index = indexOfHandoff(state, p.handoffId);
  const existing = state.offers[index];
  if (!existing || !isOpenStatus(existing.status)) return state;
  const named = "acceptedBy" in p ? p.acceptedBy : p.declinedBy;
  const by = named !== "" ? named : env.sender;
  const updated = writable(draft, existing);
  updated.status = outcome;
  updated.responseReason = p.reason;
  updated.respondedAt = eventTimeMs(event);
  updated.responseMessageId = env.messageId;
  if (outcome === "accepted") updated.acceptedBy = by;
  else updated.declinedBy = by;
  const next = writable(draft, state);
  next.phase = afterCommit(state, outcome === "accepted" ? "Accepted" : "Declined");
  next.offers = replacedAt(draft, state.offers, index, updated);
  return next;
}

function onCommitment(state: HandoffState, event: SessionEvent, draft: Draft | undefined): HandoffState {
  if (state.commitment) return state;
  const commitment = commitmentFromEvent(event);
  if (!commitment) return state;
  const next = writable(draft, state);
  next.phase = "Committed";
  next.commitment = commitment;
  return next;
}

/** Position of the offer with this handoff_id in `state.offers`, or -1 (ids are unique: onOffer ignores repeats). */
function indexOfHandoff(state: HandoffState, handoffId: string): number {
  return state.offers.findIndex((o) => o.handoffId === handoffId);
}

function isOpenStatus(status: HandoffStatus): boolean {
  return status === "offered" || status === "context_sent";
}

// ---------------------------------------------------------------------------
// Helpers (SDK names)

export function getHandoff(state: HandoffState, handoffId: string): HandoffRecord | undefined {
  return state.offers.find((o) => o.handoffId === handoffId);
}

export function isAccepted(state: HandoffState, handoffId: string): boolean {
  return getHandoff(state, handoffId)?.status === "accepted";
}

export function isDeclined(state: HandoffState, handoffId: string): boolean {
  return getHandoff(state, handoffId)?.status === "declined";
}

export function hasAcceptedOffer(state: HandoffState): boolean {
  return state.offers.some((o) => o.status === "accepted");
}

/** The accepted offer, if any (the runtime allows at most one). */
export function acceptedOffer(state: HandoffState): HandoffRecord | undefined {
  return state.offers.find((o) => o.status === "accepted");
}

/** Offers still awaiting a response (`offered` or `context_sent`), in offer order. */
export function pendingHandoffs(state: HandoffState): HandoffRecord[] {
  return state.offers.filter((o) => isOpenStatus(o.status));
}

/** The outstanding offer (the runtime allows only one at a time), if any. */
export function activeOffer(state: HandoffState): HandoffRecord | undefined {
  const pending = pendingHandoffs(state);
  return pending[pending.length - 1];
}

/** The most recent offer, whatever its status. */
export function lastOffer(state: HandoffState): HandoffRecord | undefined {
  return state.offers[state.offers.length - 1];
}

export function isCommitted(state: HandoffState): boolean {
  return state.commitment !== undefined;
}

/** The commitment's outcome_positive (defaults kept), or undefined before a commitment. */
export function isPositiveOutcome(state: HandoffState): boolean | undefined {
  return state.commitment?.outcomePositive;
}

/** Target of the active offer, or of the last offer when none is active. */
export function currentTarget(state: HandoffState): string | undefined {
  return (activeOffer(state) ?? lastOffer(state))?.target;
}

/** Scope of the active offer, or of the last offer when none is active. */
export function currentScope(state: HandoffState): string | undefined {
  return (activeOffer(state) ?? lastOffer(state))?.scope;
}

/** Map an SDK status to the runtime disposition (`context_sent` is still `Offered`). */
export function dispositionOf(status: HandoffStatus): HandoffDisposition {
  switch (status) {
    case "accepted":
      return "Accepted";
    case "declined":
      return "Declined";
    default:
      return "Offered";
  }
}

/**
 * The runtime-side view of offers, shaped like a conformance vector's
 * `expected_mode_state.offers`: `{ [handoff_id]: { disposition } }`.
 */
export function offerDispositions(state: HandoffState): Record<string, { disposition: HandoffDisposition }> {
  const out: Record<string, { disposition: HandoffDisposition }> = {};
  for (const o of state.offers) out[o.handoffId] = { disposition: dispositionOf(o.status) };
  return out;
}
