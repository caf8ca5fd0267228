// Mode-independent session view: SessionStart metadata, lifecycle, activity,
// plus the Handoff or Task projection and the derived owner/target/scope.
// Pure and immutable; unknown message types and undecodable payloads are
// counted but never change state and never throw.

import {
  CORE_TYPES,
  DEFAULT_POLICY_ID,
  HANDOFF_MODE,
  TASK_MODE,
} from "@/lib/macp/constants";
import { SessionStartPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import { decodeAs, payloadSchemaFor } from "@/lib/macp/payloads";
import {
  acceptedOffer,
  currentScope as handoffScope,
  currentTarget as handoffTarget,
  initialHandoffState,
  pendingHandoffs,
  reduceHandoff,
  type HandoffPhase,
  type HandoffState,
} from "@/lib/macp/projections/handoff";
import { initialTaskState, reduceTask, type TaskPhase, type TaskState } from "@/lib/macp/projections/task";
import {
  commitmentFromEvent,
  eventTimeMs,
  type CommitmentRecord,
  type SessionEvent,
} from "@/lib/macp/projections/types";

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
  /** Handoff: the initiator until a positive commitment with an accepted offer, then its target. Task: the requester. */
  currentOwner?: string;
  /** Handoff: target of the active or last offer. Task: active assignee, else requested assignee. */
  currentTarget?: string;
  /** Handoff: scope of the active or last offer. Task: the task title. */
  scope?: string;
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
  return withModeState(view, mode);
}

function withModeState(view: SessionView, mode: string): SessionView {
  if (mode === HANDOFF_MODE && !view.handoff) return { ...view, handoff: initialHandoffState };
  if (mode === TASK_MODE && !view.task) return { ...view, task: initialTaskState };
  return view;
}

/** Fold one event into the view. Never throws. */
export function reduceSession(view: SessionView, event: SessionEvent): SessionView {
  const env = event.envelope;
  let next: SessionView = { ...view, events: view.events + 1 };
  if (next.sessionId === "" && env.sessionId !== "") next.sessionId = env.sessionId;
  if (next.mode === "" && env.mode !== "") next = withModeState({ ...next, mode: env.mode }, env.mode);

  const t = eventTimeMs(event);
  const activity = event.receivedAtMs ?? t;
  if (activity > 0 && (next.lastActivityMs === undefined || activity > next.lastActivityMs)) {
    next.lastActivityMs = activity;
  }
  if (event.sequence !== undefined && (next.lastSequence === undefined || event.sequence > next.lastSequence)) {
    next.lastSequence = event.sequence;
  }

  // Messages for another session or mode are not ours to interpret.
  const foreign =
    (env.sessionId !== "" && env.sessionId !== next.sessionId) || (env.mode !== "" && env.mode !== next.mode);
  const understood = !foreign && understands(next.mode, env.messageType, env.payload);
  if (!understood) return { ...next, ignoredEvents: next.ignoredEvents + 1 };

  switch (env.messageType) {
    case CORE_TYPES.SessionStart:
      next = applyStart(next, event);
      break;
    case CORE_TYPES.Commitment:
      if (!next.commitment) {
        const commitment = commitmentFromEvent(event);
        if (commitment) next = { ...next, commitment, lifecycle: "Resolved" };
      }
      break;
    case CORE_TYPES.TtlExpired:
      if (next.lifecycle === "Open" || next.lifecycle === "Suspended") next = { ...next, lifecycle: "Expired" };
      break;
    case CORE_TYPES.SessionCancel:
      next = { ...next, lifecycle: "Cancelled" };
      break;
    case CORE_TYPES.SessionSuspend:
      if (next.lifecycle === "Open") next = { ...next, lifecycle: "Suspended" };
      break;
    case CORE_TYPES.SessionResume:
      if (next.lifecycle === "Suspended") next = { ...next, lifecycle: "Open" };
      break;
    default:
      break;
  }

  if (next.handoff) next = { ...next, handoff: reduceHandoff(next.handoff, event) };
  if (next.task) next = { ...next, task: reduceTask(next.task, event) };
  return derive(next);
}

/** Fold a list of events into a fresh view. */
export function viewFromEvents(events: readonly SessionEvent[]): SessionView {
  return events.reduce(reduceSession, emptySessionView());
}

function understands(mode: string, messageType: string, payload: Uint8Array): boolean {
  if (messageType === CORE_TYPES.TtlExpired) return true;
  const schema = payloadSchemaFor(mode, messageType);
  if (!schema) return false;
  return decodeAs(schema, payload) !== undefined;
}

function applyStart(view: SessionView, event: SessionEvent): SessionView {
  if (view.started) return view;
  const p = decodeAs(SessionStartPayloadSchema, event.envelope.payload);
  if (!p) return view;
  const startedAt = eventTimeMs(event);
  const ttlMs = Number(p.ttlMs);
  const next: SessionView = {
    ...view,
    started: true,
    intent: p.intent,
    participants: [...p.participants],
    initiator: event.envelope.sender,
    modeVersion: p.modeVersion,
    configurationVersion: p.configurationVersion,
    policyVersion: p.policyVersion,
    effectivePolicyId: p.policyVersion !== "" ? p.policyVersion : DEFAULT_POLICY_ID,
    ttlMs,
    roots: p.roots.map((r) => ({ uri: r.uri, name: r.name })),
    contextId: p.contextId,
    extensionKeys: Object.keys(p.extensions),
  };
  if (startedAt > 0) {
    next.startedAt = startedAt;
    if (ttlMs > 0) next.expiresAt = startedAt + ttlMs;
  }
  return next;
}

/** Recompute phase, owner, target and scope from the mode sub-state. */
function derive(view: SessionView): SessionView {
  const next: SessionView = { ...view };
  delete next.currentOwner;
  delete next.currentTarget;
  delete next.scope;
  if (view.handoff) {
    const h = view.handoff;
    next.phase = h.phase;
    // A positive handoff.accepted commitment with no explicit accept in history
    // means the policy's implicit accept took the still-open offer (§4.6, D7).
    const implicit =
      h.commitment?.outcomePositive === true && h.commitment.action.endsWith("accepted") ? pendingHandoffs(h).at(-1) : undefined;
    const accepted = acceptedOffer(h) ?? implicit;
    const transferred = h.commitment?.outcomePositive === true && accepted !== undefined;
    const owner = transferred ? accepted.target : view.initiator;
    if (owner !== "") next.currentOwner = owner;
    const target = handoffTarget(h);
    if (target !== undefined) next.currentTarget = target;
    const scope = handoffScope(h);
    if (scope !== undefined) next.scope = scope;
  } else if (view.task) {
    const t = view.task;
    next.phase = t.phase;
    const owner = t.task?.requester ?? view.initiator;
    if (owner !== "") next.currentOwner = owner;
    const target = t.task?.activeAssignee ?? (t.task?.requestedAssignee || undefined);
    if (target !== undefined) next.currentTarget = target;
    if (t.task) next.scope = t.task.title;
  } else {
    next.phase = view.commitment ? "Committed" : "Pending";
    if (view.initiator !== "") next.currentOwner = view.initiator;
  }
  return next;
}
