// Outbound notifications: which events a catalog row change means for the
// people on call. Pure: a row's notified state before and the row after give
// the events. The notifier (./notifier.ts) keeps the "before" per open
// session in its own table, so reading the same change twice derives nothing
// new (idempotent), and a restart resumes without re-sending.
//
// Rows are list rows (lib/gateway/catalog/store.ts), not histories: changes
// that happen between two catalog writes of the same session coalesce (an
// offer declined and re-offered within one write shows as the new offer).
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import type { SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";

export const EVENT_KINDS = [
  "offer.waiting",
  "offer.escalated",
  "offer.declined",
  "offer.accepted",
  "approval.upcoming",
  "approval.needed",
  "session.committed",
  "session.expired",
  "session.cancelled",
  "task.assigned",
  "task.reported",
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export function isEventKind(s: string): s is EventKind {
  return (EVENT_KINDS as readonly string[]).includes(s);
}

/** What the notifier remembers of a session: the facts events are derived from. */
export interface Snapshot {
  state: number;
  phase: string;
  owner: string;
  target: string;
  outcome: string;
}

/** One event for the people involved in a session. */
export interface NotifyEvent {
  kind: EventKind;
  sessionId: string;
  mode: string;
  intent: string;
  scope: string;
  /** Who caused it (the offering owner, the declining target, the reporting assignee...). */
  from: string;
  /** Who is told (must act, or is informed). */
  to: string[];
  /** Who must act now ("" when nobody: closed). */
  waitingOn: string[];
  /** "positive" | "negative" | "" */
  outcome: string;
  /** task.reported: "completed" or "failed"; else "". */
  detail: string;
  /** Everyone the session involves (hooks' participant filters match against it). */
  involved: string[];
  /** Unix ms of the row's last activity. */
  occurredAtMs: number;
}

export function snapshotOf(s: SessionSummary): Snapshot {
  return { state: s.metadata?.state ?? 0, phase: s.phase, owner: s.currentOwner, target: s.currentTarget, outcome: s.outcome };
}

export function isClosed(state: number): boolean {
  return state === SessionState.RESOLVED || state === SessionState.EXPIRED || state === SessionState.CANCELLED;
}

const OFFERING = new Set(["OfferPending", "ContextSharing"]);
const TASK_ACTIVE = new Set(["Requested", "InProgress"]);

const uniq = (ids: readonly string[]): string[] => [...new Set(ids.filter((id) => id !== ""))];

/**
 * Events for one session: `before` is the last notified snapshot (undefined
 * when the session is new to the notifier), `after` the row now,
 * `nextActors` the row's next actors and `approvers` the participants the
 * session's policy designates to commit (empty when the policy has none).
 */
export function deriveEvents(
  before: Snapshot | undefined,
  after: SessionSummary,
  nextActors: readonly string[],
  approvers: readonly string[] = [],
): NotifyEvent[] {
  const now = snapshotOf(after);
  if (before && isClosed(before.state)) return []; // nothing follows a close
  const meta = after.metadata;
  const mode = meta?.mode ?? "";
  const initiator = meta?.initiator ?? "";
  const owner = now.owner || initiator;
  const involved = uniq([initiator, ...(meta?.participants ?? []), now.owner, now.target, ...approvers]);
  const waiting = isClosed(now.state) ? [] : uniq([...nextActors]);
  const base = {
    sessionId: meta?.sessionId ?? "",
    mode,
    intent: after.intent,
    scope: after.scope,
    outcome: "",
    detail: "",
    involved,
    occurredAtMs: Number(after.lastActivityUnixMs),
  };
  const out: NotifyEvent[] = [];
  const add = (kind: EventKind, from: string, to: readonly string[], extra: Partial<NotifyEvent> = {}): void => {
    out.push({ ...base, kind, from, to: uniq(to), waitingOn: waiting, ...extra });
  };
  const changed = (pick: (s: Snapshot) => string): boolean => !before || pick(before) !== pick(now);

  if (mode === HANDOFF_MODE) {
    if (OFFERING.has(now.phase) && (!before || !OFFERING.has(before.phase) || before.target !== now.target) && now.target !== "") {
      add("offer.waiting", owner, [now.target]);
      // The approvers hear of it now, not only once the target has answered.
      const upcoming = approvers.filter((a) => a !== owner && a !== now.target);
      if (upcoming.length > 0) add("approval.upcoming", owner, upcoming);
    }
    if (now.phase === "Declined" && (changed((s) => s.phase) || before?.target !== now.target)) {
      add("offer.declined", now.target, [owner]);
    }
    if (now.phase === "Accepted" && (changed((s) => s.phase) || before?.target !== now.target)) {
      add("offer.accepted", now.target, [owner]);
      if (approvers.length > 0 && !isClosed(now.state)) {
        add("approval.needed", owner, approvers, { waitingOn: uniq([...approvers]) });
      }
    }
  } else if (mode === TASK_MODE) {
    if (TASK_ACTIVE.has(now.phase) && now.target !== "" && (!before || !TASK_ACTIVE.has(before.phase) || before.target !== now.target)) {
      add("task.assigned", owner, [now.target]);
    }
    if ((now.phase === "Completed" || now.phase === "Failed") && changed((s) => s.phase)) {
      add("task.reported", now.target, [owner], { detail: now.phase === "Completed" ? "completed" : "failed" });
    }
  }

  if (isClosed(now.state) && (!before || !isClosed(before.state))) {
    const everyone = involved;
    if (now.state === SessionState.RESOLVED) add("session.committed", owner, everyone, { outcome: now.outcome });
    else if (now.state === SessionState.EXPIRED) add("session.expired", owner, everyone);
    else add("session.cancelled", owner, everyone);
  }
  return out;
}
