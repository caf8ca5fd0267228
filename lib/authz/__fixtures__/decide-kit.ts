import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { makeEvent } from "@/lib/macp/test-utils";
import { viewFromEvents, type SessionView } from "@/lib/macp/projections/session";
import type { SessionEvent } from "@/lib/macp/projections/types";
import type { Actor, DecideContext } from "@/lib/authz/decide";
import { summarizePolicyRules, type PolicySummary } from "@/lib/authz/policy-summary";

// People. Participants of every session: alice (owner), bob, carol, vic.
export const ALICE = "human:alice";
export const BOB = "human:bob";
export const CAROL = "human:carol";
export const VIC = "human:vic";
export const ROOT = "human:root"; // an admin who is not a participant
export const DAVE = "human:dave"; // an operator who is not a participant

export const ACTORS = {
  vic: { role: "viewer", participantId: VIC },
  alice: { role: "operator", participantId: ALICE },
  aliceApprover: { role: "approver", participantId: ALICE },
  bob: { role: "operator", participantId: BOB },
  carol: { role: "approver", participantId: CAROL },
  carolOperator: { role: "operator", participantId: CAROL },
  dave: { role: "operator", participantId: DAVE },
  root: { role: "admin", participantId: ROOT },
} as const satisfies Record<string, Actor>;
export type ActorName = keyof typeof ACTORS;
export const ACTOR_NAMES = Object.keys(ACTORS) as ActorName[];

export const T0 = 1_000_000;
export const TTL = 3_600_000;
export const NOW = T0 + 10 * 60_000; // ten minutes in

export function start(mode: string, policyVersion = ""): SessionEvent {
  return makeEvent(
    mode,
    "SessionStart",
    {
      intent: "rotate the pager",
      participants: [ALICE, BOB, CAROL, VIC],
      modeVersion: "1.0.0",
      configurationVersion: "config.default",
      policyVersion,
      ttlMs: BigInt(TTL),
    },
    { sender: ALICE, ts: T0 },
  );
}

let clock = T0;
export const h = (type: string, payload: Record<string, unknown>, sender: string) =>
  makeEvent(HANDOFF_MODE, type, payload, { sender, ts: (clock += 1000) });
export const t = (type: string, payload: Record<string, unknown>, sender: string) =>
  makeEvent(TASK_MODE, type, payload, { sender, ts: (clock += 1000) });
export const commitment = (mode: string, action: string, positive: boolean, sender: string) =>
  makeEvent(
    mode,
    "Commitment",
    {
      commitmentId: "c1",
      action,
      authorityScope: "pager",
      reason: "done",
      modeVersion: "1.0.0",
      policyVersion: "policy.default",
      configurationVersion: "config.default",
      outcomePositive: positive,
    },
    { sender, ts: (clock += 1000) },
  );

export const offer = (id = "h1", target = BOB) =>
  h("HandoffOffer", { handoffId: id, targetParticipant: target, scope: "pager", reason: "shift" }, ALICE);
export const context = (id = "h1") =>
  h("HandoffContext", { handoffId: id, contentType: "text/plain", context: new Uint8Array([1]) }, ALICE);
export const acceptOffer = (id = "h1", by = BOB) => h("HandoffAccept", { handoffId: id, reason: "ok" }, by);
export const declineOffer = (id = "h1", by = BOB) => h("HandoffDecline", { handoffId: id, reason: "busy" }, by);

export const request = (assignee = BOB) =>
  t("TaskRequest", { taskId: "t1", title: "Rotate keys", instructions: "do it", requestedAssignee: assignee }, ALICE);
export const taskAccept = (by = BOB) => t("TaskAccept", { taskId: "t1" }, by);
export const taskReject = (by = BOB) => t("TaskReject", { taskId: "t1", reason: "no" }, by);
export const taskComplete = (by = BOB, output = new Uint8Array([1])) => t("TaskComplete", { taskId: "t1", output, summary: "ok" }, by);
export const taskFail = (by = BOB) => t("TaskFail", { taskId: "t1", errorCode: "E", reason: "broke", retryable: false }, by);

export function view(events: SessionEvent[]): SessionView {
  return viewFromEvents(events);
}

export interface Scenario {
  view: SessionView;
  ctx?: DecideContext;
}

export const DESIGNATED: PolicySummary = summarizePolicyRules(
  JSON.stringify({ commitment: { authority: "designated_role", designated_roles: [CAROL] } }),
);
export const ANY_PARTICIPANT: PolicySummary = summarizePolicyRules(JSON.stringify({ commitment: { authority: "any_participant" } }));
export const IMPLICIT: PolicySummary = summarizePolicyRules(
  JSON.stringify({
    acceptance: { implicit_accept_timeout_ms: 60_000 },
    commitment: { authority: "designated_role", designated_roles: [CAROL] },
  }),
);
export const REASSIGN: PolicySummary = summarizePolicyRules(JSON.stringify({ assignment: { allow_reassignment_on_reject: true } }));
export const REQUIRE_OUTPUT: PolicySummary = summarizePolicyRules(JSON.stringify({ completion: { require_output: true } }));

export const HANDOFF: Record<string, Scenario> = {
  noOffer: { view: view([start(HANDOFF_MODE)]) },
  pending: { view: view([start(HANDOFF_MODE), offer()]) },
  contextSent: { view: view([start(HANDOFF_MODE), offer(), context()]) },
  accepted: { view: view([start(HANDOFF_MODE), offer(), acceptOffer()]) },
  declined: { view: view([start(HANDOFF_MODE), offer(), declineOffer()]) },
  committed: { view: view([start(HANDOFF_MODE), offer(), acceptOffer(), commitment(HANDOFF_MODE, "handoff.accepted", true, ALICE)]) },
  cancelled: { view: view([start(HANDOFF_MODE), offer()]), ctx: { lifecycle: "Cancelled" } },
  suspended: { view: view([start(HANDOFF_MODE), offer()]), ctx: { lifecycle: "Suspended" } },
  expired: { view: view([start(HANDOFF_MODE), offer()]), ctx: { now: T0 + TTL + 1 } },
  designatedAccepted: {
    view: view([start(HANDOFF_MODE, "policy.ops.lead"), offer(), acceptOffer()]),
    ctx: { policy: DESIGNATED },
  },
  designatedPending: {
    view: view([start(HANDOFF_MODE, "policy.ops.lead"), offer()]),
    ctx: { policy: DESIGNATED },
  },
  anyParticipantAccepted: {
    view: view([start(HANDOFF_MODE, "policy.ops.any"), offer(), acceptOffer()]),
    ctx: { policy: ANY_PARTICIPANT },
  },
  unknownPolicyAccepted: { view: view([start(HANDOFF_MODE, "policy.ops.lead"), offer(), acceptOffer()]) },
};
// Implicit accept: pending offer, 60 s timeout, designated carol; before and after the timeout.
const implicitView = view([start(HANDOFF_MODE, "policy.ops.implicit"), offer()]);
const offeredAt = implicitView.handoff?.offers[0]?.offeredAt ?? 0;
HANDOFF.implicitNotYet = { view: implicitView, ctx: { policy: IMPLICIT, now: offeredAt + 59_999 } };
HANDOFF.implicitPassed = { view: implicitView, ctx: { policy: IMPLICIT, now: offeredAt + 60_000 } };

export const TASK: Record<string, Scenario> = {
  noTask: { view: view([start(TASK_MODE)]) },
  requestedBob: { view: view([start(TASK_MODE), request()]) },
  requestedAnyone: { view: view([start(TASK_MODE), request("")]) },
  inProgress: { view: view([start(TASK_MODE), request(), taskAccept()]) },
  rejectedAnyone: { view: view([start(TASK_MODE), request(""), taskReject()]) },
  rejectedAnyoneReassign: {
    view: view([start(TASK_MODE, "policy.ops.reassign"), request(""), taskReject()]),
    ctx: { policy: REASSIGN },
  },
  inProgressReassign: {
    view: view([start(TASK_MODE, "policy.ops.reassign"), request(), taskAccept()]),
    ctx: { policy: REASSIGN },
  },
  completed: { view: view([start(TASK_MODE), request(), taskAccept(), taskComplete()]) },
  failed: { view: view([start(TASK_MODE), request(), taskAccept(), taskFail()]) },
  failedRequireOutput: {
    view: view([start(TASK_MODE, "policy.ops.output"), request(), taskAccept(), taskFail()]),
    ctx: { policy: REQUIRE_OUTPUT },
  },
  emptyOutputRequireOutput: {
    view: view([start(TASK_MODE, "policy.ops.output"), request(), taskAccept(), taskComplete(BOB, new Uint8Array())]),
    ctx: { policy: REQUIRE_OUTPUT },
  },
  completedRequireOutput: {
    view: view([start(TASK_MODE, "policy.ops.output"), request(), taskAccept(), taskComplete()]),
    ctx: { policy: REQUIRE_OUTPUT },
  },
  committed: {
    view: view([start(TASK_MODE), request(), taskAccept(), taskComplete(), commitment(TASK_MODE, "task.completed", true, ALICE)]),
  },
  designatedCompleted: {
    view: view([start(TASK_MODE, "policy.ops.lead"), request(), taskAccept(), taskComplete()]),
    ctx: { policy: DESIGNATED },
  },
};
