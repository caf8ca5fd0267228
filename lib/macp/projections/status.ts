// One status per session: the runtime's lifecycle (open, suspended, resolved,
// expired, cancelled) and the projection's phase (offered, accepted, …)
// merged into a single key, so the list and the session page show one pill
// that says where a session is, not two that repeat each other. And the stuck
// rule: an offer unanswered, or an approval pending, for longer than a
// threshold. Pure (no clock but the one passed in, no protobuf at run time):
// the browser renders with it, the console's catalog indexes with it.

import type { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import type { SessionView } from "@/lib/macp/projections/session";

/** SessionState values, as plain numbers (lib/views/labels.ts SESSION_STATE checks them against the generated enum). */
const OPEN = 1;
const RESOLVED = 2;
const EXPIRED = 3;
const SUSPENDED = 4;
const CANCELLED = 5;

/** SessionSummary.phase_detail values. */
export const PHASE_DETAIL = { awaitingApproval: "awaiting_approval", rejected: "rejected" } as const;

export const STATUS_KEYS = [
  "started",
  "offered",
  "accepted",
  "awaiting_approval",
  "declined",
  "requested",
  "rejected",
  "in_progress",
  "completed",
  "failed",
  "committed",
  "committed_negative",
  "resolved",
  "suspended",
  "expired",
  "cancelled",
  "unknown",
] as const;
export type StatusKey = (typeof STATUS_KEYS)[number];

/** What the status is made of: a list row's (or a session view's) state, phase, outcome and detail. */
export interface StatusFacts {
  /** SessionState (0 = not reported yet). */
  state: SessionState | number;
  /** Projection phase ("" before the SessionStart is folded). */
  phase: string;
  /** Commitment outcome: "positive", "negative" or "". */
  outcome: string;
  /** SessionSummary.phase_detail: "awaiting_approval", "rejected" or "". */
  detail: string;
}

/** A task turned down by its requested assignee, with nobody working on it (the protocol keeps it requested). */
export function taskRejected(v: Pick<SessionView, "phase" | "task">): boolean {
  const task = v.task?.task;
  return v.phase === "Requested" && task?.status === "rejected" && task.activeAssignee === undefined;
}

/**
 * What the phase alone does not say (SessionSummary.phase_detail): an
 * accepted offer awaiting the approvers a lead-approval policy designates
 * (`committers`: the runtime knows the bound policy; a page knows it once
 * the policy's rules are loaded), or a task turned down by its assignee.
 */
export function phaseDetail(view: Pick<SessionView, "phase" | "task" | "commitment">, committers?: readonly string[]): string {
  if (view.phase === "Accepted" && !view.commitment && committers !== undefined && committers.length > 0)
    return PHASE_DETAIL.awaitingApproval;
  if (taskRejected(view)) return PHASE_DETAIL.rejected;
  return "";
}

/** The open-session status a phase stands for (also what a closed session was doing when it closed). */
export function phaseStatus(f: Pick<StatusFacts, "phase" | "outcome" | "detail">): StatusKey {
  switch (f.phase) {
    case "Pending":
      return "started";
    case "OfferPending":
    case "ContextSharing":
      return "offered";
    case "Accepted":
      return f.detail === PHASE_DETAIL.awaitingApproval ? "awaiting_approval" : "accepted";
    case "Declined":
      return "declined";
    case "Requested":
      return f.detail === PHASE_DETAIL.rejected ? "rejected" : "requested";
    case "InProgress":
      return "in_progress";
    case "Completed":
      return "completed";
    case "Failed":
      return "failed";
    case "Committed":
      return f.outcome === "negative" ? "committed_negative" : "committed";
    default:
      return "unknown";
  }
}

/**
 * The one status of a session. Closing wins over the phase (an expired offer
 * is "expired", a cancelled task "cancelled"); a resolved session says how
 * (its commitment); suspension pauses whatever the phase was; an open
 * session is its phase. Before metadata arrives (state 0) the phase speaks.
 */
export function sessionStatus(f: StatusFacts): StatusKey {
  switch (f.state) {
    case EXPIRED:
      return "expired";
    case CANCELLED:
      return "cancelled";
    case SUSPENDED:
      return "suspended";
    case RESOLVED: {
      const p = phaseStatus(f);
      if (p === "committed" || p === "committed_negative") return p;
      if (f.outcome === "negative") return "committed_negative";
      if (f.outcome === "positive") return "committed";
      return "resolved";
    }
    default:
      return phaseStatus(f);
  }
}

/** Statuses that can get stuck: someone has been asked and has not answered. */
export const STUCK_STATUSES: ReadonlySet<StatusKey> = new Set<StatusKey>(["offered", "awaiting_approval"]);

/** Default threshold: 15 minutes (BATON_STUCK_AFTER_MINUTES). */
export const DEFAULT_STUCK_AFTER_MS = 15 * 60_000;

export interface StuckFacts extends StatusFacts {
  /** When the current status began (Unix ms; 0 = not known). */
  phaseSinceMs: number;
  /** Newest activity (Unix ms): the status began no later than this (a fallback for rows without phaseSinceMs). */
  lastActivityMs: number;
}

/**
 * From when an open session counts towards being stuck: the start of its
 * offered or awaiting-approval status, or undefined when it cannot be stuck
 * (closed, suspended, or nobody has been asked). A row without the status
 * start (stored by an older Baton) counts from its last activity, which can
 * only make it stuck later, never sooner. The catalog stores this per row and
 * the "stuck" filter is `since <= now - threshold` on it.
 */
export function stuckSince(f: StuckFacts): number | undefined {
  if (f.state !== OPEN && f.state !== 0) return undefined;
  if (!STUCK_STATUSES.has(sessionStatus(f))) return undefined;
  const since = f.phaseSinceMs > 0 ? f.phaseSinceMs : f.lastActivityMs;
  return since > 0 ? since : undefined;
}

/** How long the session has been stuck (ms waiting), or undefined when it is not stuck at `nowMs` under `thresholdMs`. */
export function stuckFor(f: StuckFacts, nowMs: number, thresholdMs: number): number | undefined {
  const since = stuckSince(f);
  if (since === undefined) return undefined;
  const waited = nowMs - since;
  return waited >= thresholdMs ? waited : undefined;
}

/** "Stuck 23 min", "Stuck 2 h 5 min", "Stuck 3 d": whole minutes, rounded down ("Stuck <1 min" below one, with a threshold under a minute). */
export function stuckLabel(waitedMs: number): string {
  const minutes = Math.max(0, Math.floor(waitedMs / 60_000));
  if (minutes < 1) return "Stuck <1 min";
  if (minutes < 60) return `Stuck ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `Stuck ${hours} h${minutes % 60 > 0 ? ` ${minutes % 60} min` : ""}`;
  return `Stuck ${Math.floor(hours / 24)} d`;
}

/**
 * The stuck threshold from BATON_STUCK_AFTER_MINUTES: a positive number of
 * minutes (decimals allowed, e.g. 0.05 for 3 s in tests), default 15. Bad
 * values are an error naming the variable.
 */
export function parseStuckAfter(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === "") return DEFAULT_STUCK_AFTER_MS;
  const t = raw.trim();
  const minutes = /^\d+(\.\d+)?$/.test(t) ? Number(t) : NaN;
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 525_600) {
    throw new Error(`BATON_STUCK_AFTER_MINUTES must be a positive number of minutes (at most a year), e.g. 15; got ${JSON.stringify(raw)}`);
  }
  return Math.max(1, Math.round(minutes * 60_000));
}
