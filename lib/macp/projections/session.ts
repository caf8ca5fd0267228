// Mode-independent session view: SessionStart metadata, lifecycle, activity,
// plus the Handoff or Task projection and the derived owner/target/scope.
// Pure and immutable; unknown message types and undecodable payloads are
// counted but never change state and never throw.
//
// Folding many events (history replay, a stream batch) goes through
// reduceSessionMany / reduceSessionDraft: the same reducer, but objects the
// batch created itself are written in place rather than copied per event
// (see draft.ts), which keeps a batch linear in its number of events.

import { taskRejected } from "@/lib/macp/projections/status";
import { CORE_TYPES, DEFAULT_POLICY_ID, HANDOFF_MODE, SCOPE_EXTENSION, TASK_MODE } from "@/lib/macp/constants";
import { SessionStartPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import { decodeAs, payloadSchemaFor } from "@/lib/macp/payloads";
import { Draft, writable } from "@/lib/macp/projections/draft";
import {
  acceptedOffer,
  currentScope as handoffScope,
  currentTarget as handoffTarget,
  initialHandoffState,
  pendingHandoffs,
  reduceHandoffDraft,
  type HandoffPhase,
  type HandoffState,
} from "@/lib/macp/projections/handoff";
import { initialTaskState, reduceTaskDraft, type TaskPhase, type TaskState } from "@/lib/macp/projections/task";
import { commitmentFromEvent, eventTimeMs, type CommitmentRecord, type SessionEvent } from "@/lib/macp/projections/types";

export { describePhaseChange } from "@/lib/macp/projections/describe";

/** Phase of any mode; unknown modes only use `Pending` and `Committed`. */
export type SessionPhase = HandoffPhase | TaskPhase;

/**
 * Lifecycle as far as the event stream shows it: `Resolved` after a
 * commitment; `Cancelled`/`Suspended`/`Expired` only when runtime annotations
 * are delivered (many runtimes do not broadcast them, §3.7 / D5).
 */
export type SessionLifecycle = "Open" | "Resolved" | "Suspended" | "Cancelled" | "Expired";

export interface SessionView {
  sessionId: string;
  mode: string;
  /** False until the SessionStart envelope has been seen. */
  started: boolean;
  intent: string;
  participants: readonly string[];
  /** Sender of SessionStart. */
  initiator: string;
  modeVersion: string;
  configurationVersion: string;
  /** policy_version as sent in SessionStart (may be empty). */
  policyVersion: string;
  /** Effective policy id: `policy.default` when the start left it empty. */
  effectivePolicyId: string;
  ttlMs: number;
  roots: readonly { uri: string; name: string }[];
  contextId: string;
  extensionKeys: readonly string[];
  /** SessionStart envelope timestamp (Unix ms), when seen. */
  startedAt?: number;
  /** startedAt + ttlMs, when both are known (not adjusted for suspensions). */
  expiresAt?: number;
  /** Number of events folded in, including ignored ones. */
  events: number;
  /** Events that changed nothing because their type or payload was not understood. */
  ignoredEvents: number;
  lastActivityMs?: number;
  lastSequence?: number;
  lifecycle: SessionLifecycle;
  phase: SessionPhase;
  /**
   * When the current status began (the time of the event that moved the
   * session there; lib/macp/projections/status.ts): a new phase, a new offer,
   * a task turned down, or a lifecycle change. Sharing context on a pending
   * offer does not restart it: the offer is still unanswered.
   */
  phaseSinceMs?: number;
  /** What phaseSinceMs belongs to (internal: phase, offer count, rejection, lifecycle). */
  phaseKey?: string;
  /** Handoff: the initiator until a positive commitment with an accepted offer, then its target. Task: the requester. */
  currentOwner?: string;
  /** Handoff: target of the active or last offer. Task: active assignee, else requested assignee. */
  currentTarget?: string;
  /** Handoff: scope of the active or last offer, else the scope typed at start. Task: the task title. */
  scope?: string;
  /** The scope given at start (SessionStart extension `baton.scope`), when there is one. */
  startScope?: string;
  commitment?: CommitmentRecord;
  handoff?: HandoffState;
  task?: TaskState;
}

/** An empty view; `sessionId`/`mode` are filled from the first event if not given. */
export function emptySessionView(sessionId = "", mode = ""): SessionView {
  const view: SessionView = {
    sessionId,
    mode,
    started: false,
    intent: "",
    participants: [],
    initiator: "",
    modeVersion: "",
    configurationVersion: "",
    policyVersion: "",
    effectivePolicyId: DEFAULT_POLICY_ID,
    ttlMs: 0,
    roots: [],
    contextId: "",
    extensionKeys: [],
    events: 0,
    ignoredEvents: 0,
    lifecycle: "Open",
    phase: "Pending",
  };
  addModeState(view, mode);
  return view;
}

/** Give a (writable) view the initial sub-state of its mode, if it has none yet. */
function addModeState(view: SessionView, mode: string): void {
  if (mode === HANDOFF_MODE && !view.handoff) view.handoff = initialHandoffState;
  else if (mode === TASK_MODE && !view.task) view.task = initialTaskState;
}

/** Fold one event into the view. Never throws. */
export function reduceSession(view: SessionView, event: SessionEvent): SessionView {
  return reduceSessionDraft(view, event, undefined);
}

/**
 * Fold events into the view in one batch: the same result as folding them
 * one by one with reduceSession, in time linear in the number of events.
 * Nothing reachable from `view` is modified.
 */
export function reduceSessionMany(view: SessionView, events: Iterable<SessionEvent>): SessionView {
  const draft = new Draft();
  let next = view;
  for (const event of events) next = reduceSessionDraft(next, event, draft);
  return next;
}

/**
 * reduceSession as one step of a batch that owns `draft`, for callers that
 * interleave events with their own bookkeeping (applySubscribeBatch). The
 * returned view may be written in place by the next step with the same
 * draft: read what you need from it before that step, and keep only the
 * batch's final view. Without a draft this is reduceSession.
 */
export function reduceSessionDraft(view: SessionView, event: SessionEvent, draft: Draft | undefined): SessionView {
  const env = event.envelope;
  const next = writable(draft, view);
  next.events = view.events + 1;
  if (next.sessionId === "" && env.sessionId !== "") next.sessionId = env.sessionId;
  if (next.mode === "" && env.mode !== "") {
    next.mode = env.mode;
    addModeState(next, env.mode);
  }

  // The event's own time (the envelope's timestamp, the receive time only
  // without one): a replayed history must not read as activity "just now".
  const t = eventTimeMs(event);
  const activity = t;
  if (activity > 0 && (next.lastActivityMs === undefined || activity > next.lastActivityMs)) {
    next.lastActivityMs = activity;
  }
  if (event.sequence !== undefined && (next.lastSequence === undefined || event.sequence > next.lastSequence)) {
    next.lastSequence = event.sequence;
  }

  // Messages for another session or mode are not ours to interpret.
  const foreign = (env.sessionId !== "" && env.sessionId !== next.sessionId) || (env.mode !== "" && env.mode !== next.mode);
  const understood = !foreign && understands(next.mode, env.messageType, env.payload);
  if (!understood) {
    next.ignoredEvents += 1;
    return next;
  }

  switch (env.messageType) {
    case CORE_TYPES.SessionStart:
      applyStart(next, event);
      break;
    case CORE_TYPES.Commitment:
      if (!next.commitment) {
        const commitment = commitmentFromEvent(event);
        if (commitment) {
          next.commitment = commitment;
          next.lifecycle = "Resolved";
        }
      }
      break;
    case CORE_TYPES.TtlExpired:
      if (next.lifecycle === "Open" || next.lifecycle === "Suspended") next.lifecycle = "Expired";
      break;
    case CORE_TYPES.SessionCancel:
      next.lifecycle = "Cancelled";
      break;
    case CORE_TYPES.SessionSuspend:
      if (next.lifecycle === "Open") next.lifecycle = "Suspended";
      break;
    case CORE_TYPES.SessionResume:
      if (next.lifecycle === "Suspended") next.lifecycle = "Open";
      break;
    default:
      break;
  }

  if (next.handoff) next.handoff = reduceHandoffDraft(next.handoff, event, draft);
  if (next.task) next.task = reduceTaskDraft(next.task, event, draft);
  derive(next);
  const key = statusKeyOf(next);
  if (key !== next.phaseKey) {
    next.phaseKey = key;
    if (t > 0) next.phaseSinceMs = t;
  }
  return next;
}

/** What a status start belongs to: phase (context sharing is still "offered"), offers made, a task rejection, lifecycle. */
function statusKeyOf(v: SessionView): string {
  const phase = v.phase === "ContextSharing" ? "OfferPending" : v.phase;
  return `${phase}|${v.handoff?.offers.length ?? 0}|${taskRejected(v) ? 1 : 0}|${v.lifecycle}`;
}

/** Fold a list of events into a fresh view. */
export function viewFromEvents(events: readonly SessionEvent[]): SessionView {
  return reduceSessionMany(emptySessionView(), events);
}

function understands(mode: string, messageType: string, payload: Uint8Array): boolean {
  if (messageType === CORE_TYPES.TtlExpired) return true;
  const schema = payloadSchemaFor(mode, messageType);
  if (!schema) return false;
  return decodeAs(schema, payload) !== undefined;
}

/** Apply SessionStart metadata to a writable view (the first start only). */
function applyStart(next: SessionView, event: SessionEvent): void {
  if (next.started) return;
  const p = decodeAs(SessionStartPayloadSchema, event.envelope.payload);
  if (!p) return;
  const startedAt = eventTimeMs(event);
  const ttlMs = Number(p.ttlMs);
  next.started = true;
  next.intent = p.intent;
  next.participants = [...p.participants];
  next.initiator = event.envelope.sender;
  next.modeVersion = p.modeVersion;
  next.configurationVersion = p.configurationVersion;
  next.policyVersion = p.policyVersion;
  next.effectivePolicyId = p.policyVersion !== "" ? p.policyVersion : DEFAULT_POLICY_ID;
  next.ttlMs = ttlMs;
  next.roots = p.roots.map((r) => ({ uri: r.uri, name: r.name }));
  next.contextId = p.contextId;
  next.extensionKeys = Object.keys(p.extensions);
  const scope = p.extensions[SCOPE_EXTENSION];
  if (scope !== undefined && scope.byteLength > 0) {
    const text = new TextDecoder("utf-8", { fatal: false }).decode(scope).trim();
    if (text !== "") next.startScope = text;
  }
  if (startedAt > 0) {
    next.startedAt = startedAt;
    if (ttlMs > 0) next.expiresAt = startedAt + ttlMs;
  }
}

/** Recompute phase, owner, target and scope of a writable view from the mode sub-state. */
function derive(next: SessionView): void {
  delete next.currentOwner;
  delete next.currentTarget;
  delete next.scope;
  if (next.handoff) {
    const h = next.handoff;
    next.phase = h.phase;
    // A positive handoff.accepted commitment with no explicit accept in history
    // means the policy's implicit accept took the still-open offer (§4.6, D7).
    const implicit =
      h.commitment?.outcomePositive === true && h.commitment.action.endsWith("accepted") ? pendingHandoffs(h).at(-1) : undefined;
    const accepted = acceptedOffer(h) ?? implicit;
    const transferred = h.commitment?.outcomePositive === true && accepted !== undefined;
    const owner = transferred ? accepted.target : next.initiator;
    if (owner !== "") next.currentOwner = owner;
    const target = handoffTarget(h);
    if (target !== undefined) next.currentTarget = target;
    const scope = handoffScope(h) || next.startScope;
    if (scope !== undefined) next.scope = scope;
  } else if (next.task) {
    const t = next.task;
    next.phase = t.phase;
    const owner = t.task?.requester ?? next.initiator;
    if (owner !== "") next.currentOwner = owner;
    const target = t.task?.activeAssignee ?? (t.task?.requestedAssignee || undefined);
    if (target !== undefined) next.currentTarget = target;
    if (t.task) next.scope = t.task.title;
  } else {
    next.phase = next.commitment ? "Committed" : "Pending";
    if (next.initiator !== "") next.currentOwner = next.initiator;
  }
}
