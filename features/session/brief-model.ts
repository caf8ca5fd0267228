// The brief: what the session page opens with for the person asked to act
// (the target of the offer waiting for an answer, the assignee of a task, the
// approver whose commit the session waits for). Who asks what of them, the
// scope, the reason, the deadline (labelled as what it is) and the runbooks,
// including those attached to earlier offers of the same session, marked as
// such. Pure: built from the session view, the policy's rules and decide().

import { decide, type Actor, type DecideContext } from "@/lib/authz/decide";
import { commitmentAuthority, designatedRoles, implicitAcceptTimeoutMs, type PolicySummary } from "@/lib/authz/policy-summary";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import type { HandoffRecord } from "@/lib/macp/projections/handoff";
import type { SessionView } from "@/lib/macp/projections/session";

export type BriefKind =
  /** An offer waits for my answer. */
  | "offer"
  /** The policy names me as approver and the session waits for my commit. */
  | "approval"
  /** A task was requested from me (or from anyone, and I may take it). */
  | "task-request"
  /** I took the task and have not reported its end yet. */
  | "task-work";

export interface BriefDeadline {
  at: number;
  /** What the deadline is: the offer counts as accepted, the session expires, the task is due. */
  kind: "implicit-accept" | "session" | "task";
  /** Label before the countdown, e.g. "Counts as accepted in". */
  label: string;
}

export interface BriefRunbook {
  messageId: string;
  sequence?: number;
  contentType: string;
  bytes: Uint8Array;
  sender: string;
  timestampMs: number;
  /** 1-based number of the offer it was attached to. */
  offerOrdinal: number;
  /** Attached to an earlier offer than the one asked about (e.g. one somebody declined). */
  earlier: boolean;
  /** Target of the offer it was attached to, and that offer's status. */
  offerTarget: string;
  offerStatus: HandoffRecord["status"];
}

export interface Brief {
  kind: BriefKind;
  /** Who asks (participant id): the offer's sender, the task's requester, the session's owner. */
  asker: string;
  /** What is asked, one sentence with display names: "Alice Ng asks you to take over payments-api primary on-call". */
  headline: string;
  scope: string;
  reason: string;
  /** For an approval: who hands over to whom. */
  from?: string;
  to?: string;
  deadline?: BriefDeadline;
  runbooks: BriefRunbook[];
  /** Task instructions (tasks only). */
  instructions?: string;
}

export interface BriefInput {
  policy: PolicySummary | undefined;
  /** Bound policy id, null for policy.default (whose rules are known without a fetch). */
  policyId: string | null;
  ctx: DecideContext;
  nameOf: (participantId: string) => string;
  /** Session deadline from the runtime (Unix ms), else the view's start + TTL. */
  expiresAt?: number;
}

function pending(view: SessionView): HandoffRecord | undefined {
  const open = (view.handoff?.offers ?? []).filter((o) => o.status === "offered" || o.status === "context_sent");
  return open[open.length - 1];
}

/** Every context of the session's offers: the one asked about first, then those of earlier offers. */
export function runbooksFor(view: SessionView, current: HandoffRecord | undefined): BriefRunbook[] {
  const offers = view.handoff?.offers ?? [];
  const out: BriefRunbook[] = [];
  const add = (o: HandoffRecord, ordinal: number, earlier: boolean): void => {
    for (const c of o.contexts) {
      const r: BriefRunbook = {
        messageId: c.messageId,
        contentType: c.contentType,
        bytes: c.context,
        sender: c.sender,
        timestampMs: c.timestampMs,
        offerOrdinal: ordinal,
        earlier,
        offerTarget: o.target,
        offerStatus: o.status,
      };
      if (c.sequence !== undefined) r.sequence = c.sequence;
      out.push(r);
    }
  };
  const currentIndex = current ? offers.findIndex((o) => o.handoffId === current.handoffId) : -1;
  if (current && currentIndex >= 0) add(current, currentIndex + 1, false);
  // Earlier offers, newest first: the latest runbook is the most likely to be current.
  for (let i = offers.length - 1; i >= 0; i -= 1) {
    const o = offers[i];
    if (!o || i === currentIndex || (currentIndex >= 0 && i > currentIndex)) continue;
    add(o, i + 1, currentIndex >= 0);
  }
  return out;
}

function sessionDeadline(input: BriefInput, view: SessionView): BriefDeadline | undefined {
  const at = input.expiresAt ?? view.expiresAt;
  return at !== undefined && at > 0 ? { at, kind: "session", label: "Session expires in" } : undefined;
}

/** The brief for `me` in this session, or null when the session asks nothing of them now. */
export function briefFor(me: Actor, view: SessionView, input: BriefInput): Brief | null {
  if (!view.started) return null;
  const { nameOf, ctx } = input;
  const id = me.participantId;
  const can = (action: Parameters<typeof decide>[2]): boolean => decide(me, view, action, ctx).allowed;

  if (view.mode === HANDOFF_MODE) {
    const offer = pending(view);
    if (offer && offer.target === id && (can("accept") || can("decline"))) {
      const timeout = input.policy ? implicitAcceptTimeoutMs(input.policy) : 0;
      const deadline: BriefDeadline | undefined =
        timeout > 0 && offer.offeredAt > 0
          ? { at: offer.offeredAt + timeout, kind: "implicit-accept", label: "Counts as accepted in" }
          : sessionDeadline(input, view);
      const scope = offer.scope || view.scope || view.intent;
      return {
        kind: "offer",
        asker: offer.offeredBy,
        headline: `${nameOf(offer.offeredBy)} asks you to take over ${scope}`,
        scope,
        reason: offer.reason,
        ...(deadline ? { deadline } : {}),
        runbooks: runbooksFor(view, offer),
      };
    }
    // An approver (named by the policy, not the owner) whose commit the session waits for.
    const policy = input.policy;
    if (
      policy &&
      id !== view.initiator &&
      commitmentAuthority(policy) === "designated_role" &&
      designatedRoles(policy).includes(id) &&
      can("commit")
    ) {
      const offers = view.handoff?.offers ?? [];
      const accepted = offers.find((o) => o.status === "accepted");
      const decided = accepted ?? offer ?? offers[offers.length - 1];
      const scope = decided?.scope || view.scope || view.intent;
      const to = decided?.target ?? "";
      const deadline = sessionDeadline(input, view);
      const headline = accepted
        ? `${nameOf(view.initiator)} asks you to approve handing ${scope} to ${nameOf(to)}`
        : `${nameOf(view.initiator)} asks you to close the handoff of ${scope}`;
      return {
        kind: "approval",
        asker: view.initiator,
        headline,
        scope,
        reason: decided?.reason ?? "",
        from: view.initiator,
        ...(to ? { to } : {}),
        ...(deadline ? { deadline } : {}),
        runbooks: runbooksFor(view, decided),
      };
    }
    return null;
  }

  if (view.mode === TASK_MODE) {
    const task = view.task?.task;
    if (!task || task.terminalReport) return null;
    const due =
      task.deadlineUnixMs > 0 ? { at: task.deadlineUnixMs, kind: "task" as const, label: "Task due in" } : sessionDeadline(input, view);
    const title = task.title || view.intent || "the task";
    const base = {
      asker: task.requester,
      scope: title,
      reason: "",
      runbooks: [],
      ...(task.instructions ? { instructions: task.instructions } : {}),
      ...(due ? { deadline: due } : {}),
    };
    if (task.activeAssignee === undefined && (can("taskAccept") || can("taskReject"))) {
      return { ...base, kind: "task-request", headline: `${nameOf(task.requester)} asks you to take the task “${title}”` };
    }
    if (task.activeAssignee === id && (can("taskComplete") || can("taskUpdate"))) {
      return { ...base, kind: "task-work", headline: `You took “${title}” from ${nameOf(task.requester)}; report progress or its end` };
    }
  }
  return null;
}
