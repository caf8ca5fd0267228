// Display vocabulary for phases and states: human labels, a tone (mapped to
// AA-contrast colours by the Badge component) and an icon name, so a badge
// never relies on colour alone. Pure data; phases themselves come from the
// projections in lib/macp.

import type { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import type { SessionPhase } from "@/lib/macp/projections/session";
import { phaseStatus, sessionStatus, type StatusFacts, type StatusKey } from "@/lib/macp/projections/status";

/**
 * SessionState's values (lib/gen/macp/v1/envelope_pb), each typed as its
 * generated member. The pages' first-load code reads them from here rather
 * than from the generated module, whose file descriptors pull protobuf-es
 * into the JavaScript loaded before `load`; labels.test.ts checks every value
 * against the generated enum.
 */
export const SESSION_STATE: { readonly [K in keyof typeof SessionState]: (typeof SessionState)[K] } = {
  UNSPECIFIED: 0 as SessionState.UNSPECIFIED,
  OPEN: 1 as SessionState.OPEN,
  RESOLVED: 2 as SessionState.RESOLVED,
  EXPIRED: 3 as SessionState.EXPIRED,
  SUSPENDED: 4 as SessionState.SUSPENDED,
  CANCELLED: 5 as SessionState.CANCELLED,
};

export type Tone = "neutral" | "info" | "progress" | "warning" | "success" | "danger" | "muted";
export type IconName =
  | "circle-dashed"
  | "send"
  | "document"
  | "check"
  | "x"
  | "seal"
  | "inbox"
  | "play"
  | "check-circle"
  | "alert"
  | "dot"
  | "clock"
  | "pause"
  | "ban"
  | "question";

export interface BadgeInfo {
  label: string;
  tone: Tone;
  icon: IconName;
  /** Longer explanation for a tooltip / accessible description. */
  hint: string;
}

/** The projection's phases as the list's Phase filter names them (in the status pill's words). */
export const PHASE_INFO: Readonly<Record<SessionPhase, BadgeInfo>> = {
  Pending: { label: "Started", tone: "neutral", icon: "circle-dashed", hint: "Started; nothing offered or requested yet" },
  OfferPending: { label: "Offered", tone: "info", icon: "send", hint: "An offer awaits the target's answer" },
  ContextSharing: {
    label: "Offered, context being shared",
    tone: "info",
    icon: "document",
    hint: "The owner is sharing context with the target",
  },
  Accepted: { label: "Accepted or awaiting approval", tone: "success", icon: "check", hint: "The target accepted; awaiting commitment" },
  Declined: { label: "Declined", tone: "warning", icon: "x", hint: "The target declined; a new offer or a commitment may follow" },
  Committed: { label: "Committed", tone: "success", icon: "seal", hint: "A commitment resolved the session" },
  Requested: { label: "Requested", tone: "info", icon: "inbox", hint: "Task requested; awaiting an assignee" },
  InProgress: { label: "In progress", tone: "progress", icon: "play", hint: "An assignee is working on the task" },
  Completed: { label: "Completed", tone: "success", icon: "check-circle", hint: "The assignee reported completion; awaiting commitment" },
  Failed: { label: "Failed", tone: "danger", icon: "alert", hint: "The assignee reported failure; awaiting commitment" },
};

export const PHASES = Object.keys(PHASE_INFO) as SessionPhase[];

export function isPhase(value: string): value is SessionPhase {
  return Object.prototype.hasOwnProperty.call(PHASE_INFO, value);
}

export type StateKey = "open" | "suspended" | "resolved" | "expired" | "cancelled";

export const STATE_INFO: Readonly<Record<StateKey, BadgeInfo & { state: SessionState }>> = {
  open: { state: SESSION_STATE.OPEN, label: "Open", tone: "info", icon: "dot", hint: "Accepting messages" },
  suspended: { state: SESSION_STATE.SUSPENDED, label: "Suspended", tone: "warning", icon: "pause", hint: "Paused; TTL frozen" },
  resolved: { state: SESSION_STATE.RESOLVED, label: "Resolved", tone: "success", icon: "seal", hint: "Resolved by a commitment" },
  expired: { state: SESSION_STATE.EXPIRED, label: "Expired", tone: "muted", icon: "clock", hint: "TTL elapsed before a commitment" },
  cancelled: { state: SESSION_STATE.CANCELLED, label: "Cancelled", tone: "danger", icon: "ban", hint: "Cancelled by an operator" },
};

export const STATE_KEYS = Object.keys(STATE_INFO) as StateKey[];

export function stateKeyOf(state: SessionState | undefined): StateKey | undefined {
  return STATE_KEYS.find((k) => STATE_INFO[k].state === state);
}

export function stateBadge(state: SessionState | undefined): BadgeInfo {
  const key = stateKeyOf(state);
  return key ? STATE_INFO[key] : { label: "Unknown", tone: "muted", icon: "question", hint: "State not reported" };
}

export function isTerminalSessionState(state: SessionState | undefined): boolean {
  return state === SESSION_STATE.RESOLVED || state === SESSION_STATE.EXPIRED || state === SESSION_STATE.CANCELLED;
}

/** The lifecycle a SessionView shows, as a SessionState (used until metadata arrives). */
export function lifecycleToState(lifecycle: "Open" | "Resolved" | "Suspended" | "Cancelled" | "Expired"): SessionState {
  switch (lifecycle) {
    case "Open":
      return SESSION_STATE.OPEN;
    case "Resolved":
      return SESSION_STATE.RESOLVED;
    case "Suspended":
      return SESSION_STATE.SUSPENDED;
    case "Cancelled":
      return SESSION_STATE.CANCELLED;
    case "Expired":
      return SESSION_STATE.EXPIRED;
  }
}

/**
 * The one status pill (lib/macp/projections/status.ts merges lifecycle and
 * phase): one label, one colour scale. Blue: someone has been asked (offered,
 * requested); amber: the ball is back with someone (awaiting approval,
 * declined, rejected, suspended); violet: work under way; green: done well;
 * red: done badly or cancelled; grey: started, expired, unknown.
 */
export const STATUS_INFO: Readonly<Record<StatusKey, BadgeInfo>> = {
  started: { label: "Started", tone: "neutral", icon: "circle-dashed", hint: "Started; nothing offered or requested yet" },
  offered: { label: "Offered", tone: "info", icon: "send", hint: "An offer awaits the target's answer" },
  accepted: { label: "Accepted", tone: "success", icon: "check", hint: "The target accepted; awaiting the commitment" },
  awaiting_approval: {
    label: "Awaiting approval",
    tone: "warning",
    icon: "clock",
    hint: "The target accepted; an approver must approve or reject",
  },
  declined: {
    label: "Declined",
    tone: "warning",
    icon: "x",
    hint: "The target declined; the owner may offer it to someone else or close the handoff",
  },
  requested: { label: "Requested", tone: "info", icon: "inbox", hint: "Task requested; awaiting the assignee" },
  rejected: { label: "Rejected", tone: "warning", icon: "x", hint: "The assignee turned the task down; nobody is working on it" },
  in_progress: { label: "In progress", tone: "progress", icon: "play", hint: "The assignee is working on the task" },
  completed: {
    label: "Completed",
    tone: "success",
    icon: "check-circle",
    hint: "The assignee reported completion; awaiting the commitment",
  },
  failed: { label: "Failed", tone: "danger", icon: "alert", hint: "The assignee reported failure; awaiting the commitment" },
  committed: { label: "Committed", tone: "success", icon: "seal", hint: "Resolved by a positive commitment" },
  committed_negative: { label: "Committed · negative", tone: "danger", icon: "seal", hint: "Resolved by a negative commitment" },
  resolved: { label: "Resolved", tone: "success", icon: "seal", hint: "Resolved" },
  suspended: { label: "Suspended", tone: "warning", icon: "pause", hint: "Paused; time left frozen" },
  expired: { label: "Expired", tone: "muted", icon: "clock", hint: "Time ran out before a commitment" },
  cancelled: { label: "Cancelled", tone: "danger", icon: "ban", hint: "Cancelled" },
  unknown: { label: "Unknown", tone: "muted", icon: "question", hint: "Status not reported yet" },
};

/** The status pill for a session: its label, tone and icon; a closed or paused one says what it was doing in the hint. */
export function statusBadge(f: StatusFacts): BadgeInfo {
  const key = sessionStatus(f);
  const info = STATUS_INFO[key];
  if (key === "expired" || key === "cancelled" || key === "suspended") {
    const was = phaseStatus(f);
    if (was !== "unknown" && was !== "committed" && was !== "committed_negative") {
      return { ...info, hint: `${info.hint} (while ${STATUS_INFO[was].label.toLowerCase()})` };
    }
  }
  return info;
}

/** The status facts of a list row. */
export function summaryStatusFacts(s: {
  metadata?: { state: SessionState } | undefined;
  phase: string;
  outcome: string;
  phaseDetail: string;
}): StatusFacts {
  return { state: s.metadata?.state ?? 0, phase: s.phase, outcome: s.outcome, detail: s.phaseDetail };
}
