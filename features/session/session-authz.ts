// What the session page's action panel shows for the signed-in person: every
// action of the session's mode with decide()'s verdict (lib/authz/decide, the
// same function the server runs before sending), built from the live session
// view, the runtime's metadata, the bound policy's rules and display names.
// Pure: no decisions are made here, only gathered.

import { decide, type Action, type Actor, type DecideContext, type Decision } from "@/lib/authz/decide";
import {
  commitmentAuthority,
  DEFAULT_POLICY_SUMMARY,
  designatedRoles,
  implicitAcceptTimeoutMs,
  type PolicySummary,
} from "@/lib/authz/policy-summary";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { DEFAULT_POLICY_ID, HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import type { HandoffRecord } from "@/lib/macp/projections/handoff";
import type { SessionLifecycle, SessionView } from "@/lib/macp/projections/session";
import { turnedDownByAssignee } from "@/lib/macp/projections/summary";

export function lifecycleOfState(state: SessionState | undefined): SessionLifecycle | undefined {
  switch (state) {
    case SessionState.OPEN:
      return "Open";
    case SessionState.RESOLVED:
      return "Resolved";
    case SessionState.EXPIRED:
      return "Expired";
    case SessionState.SUSPENDED:
      return "Suspended";
    case SessionState.CANCELLED:
      return "Cancelled";
    default:
      return undefined;
  }
}

/** The policy id whose rules decide() needs, or null for policy.default. */
export function policyIdOf(view: SessionView, metadata: SessionMetadata | undefined): string | null {
  const id = metadata?.policyVersion || view.effectivePolicyId;
  return id === "" || id === DEFAULT_POLICY_ID ? null : id;
}

export function decideContextFor(input: {
  metadata: SessionMetadata | undefined;
  policy: PolicySummary | undefined;
  nameOf: (participantId: string) => string;
  now: number;
}): DecideContext {
  const lifecycle = lifecycleOfState(input.metadata?.state);
  const expires = input.metadata ? Number(input.metadata.expiresAtUnixMs) : 0;
  return {
    ...(input.policy ? { policy: input.policy } : {}),
    ...(lifecycle ? { lifecycle } : {}),
    ...(expires > 0 ? { expiresAt: expires } : {}),
    now: input.now,
    nameOf: input.nameOf,
  };
}

export const HANDOFF_PANEL: readonly Action[] = ["offer", "attachContext", "accept", "decline", "commit", "cancel"];
export const TASK_PANEL: readonly Action[] = [
  "taskRequest",
  "taskAccept",
  "taskReject",
  "taskUpdate",
  "taskComplete",
  "taskFail",
  "commit",
  "cancel",
];

export type Panel =
  /** Nothing to show yet (session not loaded, or not a handoff/task). */
  | { kind: "none" }
  /** The person may watch but never act (viewer). */
  | { kind: "read-only"; reason: string }
  /** The session is over; the sentence says how. */
  | { kind: "closed"; reason: string }
  | { kind: "actions"; actions: readonly { action: Action; decision: Decision }[] };

export function sessionPanel(me: Actor, view: SessionView, ctx: DecideContext): Panel {
  if (!view.started) return { kind: "none" };
  const list = view.mode === HANDOFF_MODE ? HANDOFF_PANEL : view.mode === TASK_MODE ? TASK_PANEL : null;
  if (!list) return { kind: "none" };
  const decisions = list.map((action) => ({ action, decision: decide(me, view, action, ctx) }));
  const denied = decisions.map((d) => d.decision).filter((d): d is Extract<Decision, { allowed: false }> => !d.allowed);
  if (denied.length === decisions.length) {
    const role = denied.find((d) => d.code === "role");
    if (role) return { kind: "read-only", reason: role.reason };
    const closed = denied[0];
    if (closed && denied.every((d) => d.code === "not_open")) return { kind: "closed", reason: closed.reason };
  }
  return { kind: "actions", actions: decisions };
}

/**
 * Whether the panel lists a refused action with its reason. Authority
 * refusals ("this offer is for Bob; only they can accept it") are noise for
 * everyone but the people concerned, so only commit's are listed: who may
 * commit matters to everyone in the session. Every other reason is listed.
 */
export function listsRefusal(action: Action, decision: Decision): boolean {
  if (decision.allowed) return false;
  return decision.code !== "authority" || action === "commit";
}

/** The offer waiting for an answer, if any. */
export function pendingOfferOf(view: SessionView): HandoffRecord | undefined {
  const pending = (view.handoff?.offers ?? []).filter((o) => o.status === "offered" || o.status === "context_sent");
  return pending[pending.length - 1];
}

/**
 * When the pending offer counts as accepted under an implicit-accept policy
 * (Unix ms), or undefined (no pending offer, no timeout, or not known).
 */
export function implicitAcceptAt(view: SessionView, policy: PolicySummary | undefined, policyId: string | null): number | undefined {
  const rules = policy ?? (policyId === null ? DEFAULT_POLICY_SUMMARY : undefined);
  if (!rules) return undefined;
  const timeout = implicitAcceptTimeoutMs(rules);
  const pending = pendingOfferOf(view);
  if (timeout <= 0 || !pending || pending.offeredAt <= 0) return undefined;
  return pending.offeredAt + timeout;
}

/** The offer a commit binds (accepted first, else the last one): its target and scope, for the form's defaults. */
export function commitDefaults(
  view: SessionView,
  nameOf: (id: string) => string,
): { outcome: "accepted" | "declined"; scope: string; reason: string } {
  const offers = view.handoff?.offers ?? [];
  const accepted = offers.find((o) => o.status === "accepted");
  const decided = accepted ?? pendingOfferOf(view) ?? offers[offers.length - 1];
  const scope = decided?.scope || view.intent;
  if (accepted) return { outcome: "accepted", scope, reason: `${nameOf(accepted.target)} (${accepted.target}) takes over ${scope}.` };
  const pending = pendingOfferOf(view);
  if (pending) return { outcome: "accepted", scope, reason: `${nameOf(pending.target)} (${pending.target}) takes over ${scope}.` };
  return { outcome: "declined", scope, reason: `The handoff was declined; ${nameOf(view.initiator)} (${view.initiator}) keeps ${scope}.` };
}

export interface ApprovalFacts {
  /** Whether there is an accepted offer to approve (else only Reject applies). */
  canApprove: boolean;
  /** What the decision does, with names: "Bob Ito takes over payments-api on-call" / "Alice Ng keeps payments-api on-call". */
  sentence: string;
  /** The prefilled reason. */
  reason: string;
  /** Filled in from the bound policy: the approver commits under it. */
  authorityScope: string;
}

/** The facts of an approver's Approve or Reject, from the session and its bound policy. */
export function approvalFacts(
  view: SessionView,
  nameOf: (id: string) => string,
  decision: "approve" | "reject",
  policyId: string | null,
): ApprovalFacts {
  const offers = view.handoff?.offers ?? [];
  const accepted = offers.find((o) => o.status === "accepted");
  const decided = accepted ?? pendingOfferOf(view) ?? offers[offers.length - 1];
  const scope = decided?.scope || view.scope || view.intent;
  // Who hands over: the offer's sender (the owner before the commit), who keeps it on Reject.
  const owner = decided?.offeredBy || view.initiator;
  const sentence =
    decision === "approve" && accepted ? `${nameOf(accepted.target)} takes over ${scope}.` : `${nameOf(owner)} keeps ${scope}.`;
  const reason =
    decision === "approve" && accepted
      ? `Approved: ${nameOf(accepted.target)} (${accepted.target}) takes over ${scope}.`
      : `Rejected: ${nameOf(owner)} (${owner}) keeps ${scope}.`;
  const policy = policyId ?? DEFAULT_POLICY_ID;
  return { canApprove: accepted !== undefined, sentence, reason, authorityScope: `approver under ${policy}`.slice(0, 200) };
}

/** Who the session waits for now, and the one line that says so. */
export interface Waiting {
  /** Participant ids who can move the session on (empty: anyone eligible, or not known). */
  on: readonly string[];
  sentence: string;
}

function joinNames(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? "";
  return `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}`;
}

/** Who may commit under the policy (ids), or undefined when anyone in the session may or the rules are unknown. */
function committers(view: SessionView, policy: PolicySummary | undefined): readonly string[] | undefined {
  if (!policy) return undefined;
  switch (commitmentAuthority(policy)) {
    case "designated_role":
      return designatedRoles(policy);
    case "any_participant":
      return undefined;
    default:
      return view.initiator ? [view.initiator] : [];
  }
}

/**
 * The one line the action panel shows instead of actions someone else has to
 * take: who the open session is waiting for ("Waiting for Bob Ito to answer
 * the offer."). Null when the session is not open (or not started).
 * `policy` is the bound policy's rules (DEFAULT_POLICY_SUMMARY for policy.default).
 */
export function waitingFor(view: SessionView, policy: PolicySummary | undefined, nameOf: (id: string) => string): Waiting | null {
  if (!view.started || view.lifecycle !== "Open" || view.commitment) return null;
  const names = (ids: readonly string[]) => joinNames(ids.map(nameOf));
  const commit = (what: string): Waiting => {
    const ids = committers(view, policy);
    const approval = policy !== undefined && commitmentAuthority(policy) === "designated_role";
    if (ids === undefined || ids.length === 0) return { on: [], sentence: `Waiting for someone to commit ${what}.` };
    return { on: ids, sentence: `Waiting for ${names(ids)} to ${approval ? "approve and commit" : "commit"} ${what}.` };
  };
  if (view.mode === HANDOFF_MODE) {
    const offers = view.handoff?.offers ?? [];
    const pending = pendingOfferOf(view);
    if (pending) return { on: [pending.target], sentence: `Waiting for ${nameOf(pending.target)} to answer the offer.` };
    const accepted = offers.find((o) => o.status === "accepted");
    if (accepted) return commit(`the handoff to ${nameOf(accepted.target)}`);
    const last = offers[offers.length - 1];
    if (last?.status === "declined") {
      return {
        on: [view.initiator],
        sentence: `${nameOf(last.target)} declined; waiting for ${nameOf(view.initiator)} to offer it to someone else or close the handoff.`,
      };
    }
    return { on: [view.initiator], sentence: `Waiting for ${nameOf(view.initiator)} to make an offer.` };
  }
  if (view.mode === TASK_MODE) {
    const task = view.task?.task;
    if (!task) return { on: [view.initiator], sentence: `Waiting for ${nameOf(view.initiator)} to request the task.` };
    if (task.terminalReport) return commit(`the ${task.terminalReport.kind === "fail" ? "failed" : "completed"} task`);
    if (task.activeAssignee !== undefined)
      return { on: [task.activeAssignee], sentence: `Waiting for ${nameOf(task.activeAssignee)} to finish the task.` };
    if (task.requestedAssignee !== "") {
      if (turnedDownByAssignee(task)) {
        return {
          on: [view.initiator],
          sentence: `${nameOf(task.requestedAssignee)} turned the task down; waiting for ${nameOf(view.initiator)} to cancel it or start another.`,
        };
      }
      return { on: [task.requestedAssignee], sentence: `Waiting for ${nameOf(task.requestedAssignee)} to take the task or turn it down.` };
    }
    return { on: [], sentence: "Waiting for someone in the session to take the task." };
  }
  return null;
}
