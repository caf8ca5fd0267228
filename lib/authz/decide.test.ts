import { describe, expect, it } from "vitest";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { makeEvent } from "@/lib/macp/test-utils";
import { viewFromEvents, type SessionView } from "@/lib/macp/projections/session";
import type { SessionEvent } from "@/lib/macp/projections/types";
import { ACTIONS, decide, decideAll, type Action, type Actor, type DecideContext, type DenyCode } from "@/lib/authz/decide";
import { summarizePolicyRules, type PolicySummary } from "@/lib/authz/policy-summary";
import { ROLES, roleAtLeast } from "@/lib/authz/roles";

// People. Participants of every session: alice (owner), bob, carol, vic.
const ALICE = "human:alice";
const BOB = "human:bob";
const CAROL = "human:carol";
const VIC = "human:vic";
const ROOT = "human:root"; // an admin who is not a participant
const DAVE = "human:dave"; // an operator who is not a participant

const ACTORS = {
  vic: { role: "viewer", participantId: VIC },
  alice: { role: "operator", participantId: ALICE },
  aliceApprover: { role: "approver", participantId: ALICE },
  bob: { role: "operator", participantId: BOB },
  carol: { role: "approver", participantId: CAROL },
  carolOperator: { role: "operator", participantId: CAROL },
  dave: { role: "operator", participantId: DAVE },
  root: { role: "admin", participantId: ROOT },
} as const satisfies Record<string, Actor>;
type ActorName = keyof typeof ACTORS;
const ACTOR_NAMES = Object.keys(ACTORS) as ActorName[];

const T0 = 1_000_000;
const TTL = 3_600_000;
const NOW = T0 + 10 * 60_000; // ten minutes in

function start(mode: string, policyVersion = ""): SessionEvent {
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
const h = (type: string, payload: Record<string, unknown>, sender: string) =>
  makeEvent(HANDOFF_MODE, type, payload, { sender, ts: (clock += 1000) });
const t = (type: string, payload: Record<string, unknown>, sender: string) =>
  makeEvent(TASK_MODE, type, payload, { sender, ts: (clock += 1000) });
const commitment = (mode: string, action: string, positive: boolean, sender: string) =>
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

const offer = (id = "h1", target = BOB) =>
  h("HandoffOffer", { handoffId: id, targetParticipant: target, scope: "pager", reason: "shift" }, ALICE);
const context = (id = "h1") => h("HandoffContext", { handoffId: id, contentType: "text/plain", context: new Uint8Array([1]) }, ALICE);
const acceptOffer = (id = "h1", by = BOB) => h("HandoffAccept", { handoffId: id, reason: "ok" }, by);
const declineOffer = (id = "h1", by = BOB) => h("HandoffDecline", { handoffId: id, reason: "busy" }, by);

const request = (assignee = BOB) =>
  t("TaskRequest", { taskId: "t1", title: "Rotate keys", instructions: "do it", requestedAssignee: assignee }, ALICE);
const taskAccept = (by = BOB) => t("TaskAccept", { taskId: "t1" }, by);
const taskReject = (by = BOB) => t("TaskReject", { taskId: "t1", reason: "no" }, by);
const taskComplete = (by = BOB, output = new Uint8Array([1])) => t("TaskComplete", { taskId: "t1", output, summary: "ok" }, by);
const taskFail = (by = BOB) => t("TaskFail", { taskId: "t1", errorCode: "E", reason: "broke", retryable: false }, by);

function view(events: SessionEvent[]): SessionView {
  return viewFromEvents(events);
}

interface Scenario {
  view: SessionView;
  ctx?: DecideContext;
}

const DESIGNATED: PolicySummary = summarizePolicyRules(
  JSON.stringify({ commitment: { authority: "designated_role", designated_roles: [CAROL] } }),
);
const ANY_PARTICIPANT: PolicySummary = summarizePolicyRules(JSON.stringify({ commitment: { authority: "any_participant" } }));
const IMPLICIT: PolicySummary = summarizePolicyRules(
  JSON.stringify({
    acceptance: { implicit_accept_timeout_ms: 60_000 },
    commitment: { authority: "designated_role", designated_roles: [CAROL] },
  }),
);
const REASSIGN: PolicySummary = summarizePolicyRules(JSON.stringify({ assignment: { allow_reassignment_on_reject: true } }));
const REQUIRE_OUTPUT: PolicySummary = summarizePolicyRules(JSON.stringify({ completion: { require_output: true } }));

const HANDOFF: Record<string, Scenario> = {
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

const TASK: Record<string, Scenario> = {
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

// Actions every role at or above the minimum may always do, whatever the session.
const ALWAYS: Record<ActorName, Action[]> = {
  vic: ["view"],
  alice: ["view", "startSession", "manageHandoffTemplates", "cancelEscalation"],
  aliceApprover: ["view", "startSession", "manageHandoffTemplates", "cancelEscalation"],
  bob: ["view", "startSession", "manageHandoffTemplates", "cancelEscalation"],
  carol: ["view", "startSession", "manageHandoffTemplates", "cancelEscalation"],
  carolOperator: ["view", "startSession", "manageHandoffTemplates", "cancelEscalation"],
  dave: ["view", "startSession", "manageHandoffTemplates", "cancelEscalation"],
  root: ["view", "startSession", "runDemo", "manageUsers", "managePolicies", "manageHandoffTemplates", "cancelEscalation"],
};

type Expectation = Partial<Record<ActorName, Action[]>>;

/** Allowed session actions per scenario and actor; anything not listed must be refused. */
const HANDOFF_EXPECT: Record<string, Expectation> = {
  noOffer: { alice: ["offer", "cancel"], aliceApprover: ["offer", "cancel"], root: ["cancel"] },
  pending: {
    alice: ["attachContext", "escalate", "cancel"],
    aliceApprover: ["attachContext", "escalate", "cancel"],
    bob: ["accept", "decline"],
    root: ["cancel"],
  },
  contextSent: {
    alice: ["attachContext", "escalate", "cancel"],
    aliceApprover: ["attachContext", "escalate", "cancel"],
    bob: ["accept", "decline"],
    root: ["cancel"],
  },
  accepted: { alice: ["attachContext", "commit", "cancel"], aliceApprover: ["attachContext", "commit", "cancel"], root: ["cancel"] },
  declined: {
    alice: ["offer", "attachContext", "commit", "cancel"],
    aliceApprover: ["offer", "attachContext", "commit", "cancel"],
    root: ["cancel"],
  },
  committed: {},
  cancelled: {},
  expired: {},
  suspended: { alice: ["cancel"], aliceApprover: ["cancel"], root: ["cancel"] },
  designatedAccepted: {
    alice: ["attachContext", "cancel"],
    aliceApprover: ["attachContext", "cancel"],
    carol: ["commit", "cancel"],
    carolOperator: ["commit"],
    root: ["cancel"],
  },
  designatedPending: {
    alice: ["attachContext", "escalate", "cancel"],
    aliceApprover: ["attachContext", "escalate", "cancel"],
    bob: ["accept", "decline"],
    carol: ["cancel"],
    root: ["cancel"],
  },
  anyParticipantAccepted: {
    alice: ["attachContext", "commit", "cancel"],
    aliceApprover: ["attachContext", "commit", "cancel"],
    bob: ["commit"],
    carol: ["commit", "cancel"],
    carolOperator: ["commit"],
    root: ["cancel"],
  },
  unknownPolicyAccepted: { alice: ["attachContext", "cancel"], aliceApprover: ["attachContext", "cancel"], root: ["cancel"] },
  implicitNotYet: {
    alice: ["attachContext", "escalate", "cancel"],
    aliceApprover: ["attachContext", "escalate", "cancel"],
    bob: ["accept", "decline"],
    carol: ["cancel"],
    root: ["cancel"],
  },
  implicitPassed: {
    alice: ["attachContext", "escalate", "cancel"],
    aliceApprover: ["attachContext", "escalate", "cancel"],
    bob: ["accept", "decline"],
    carol: ["commit", "cancel"],
    carolOperator: ["commit"],
    root: ["cancel"],
  },
};

const TASK_EXPECT: Record<string, Expectation> = {
  noTask: { alice: ["taskRequest", "cancel"], aliceApprover: ["taskRequest", "cancel"], root: ["cancel"] },
  requestedBob: { alice: ["cancel"], aliceApprover: ["cancel"], bob: ["taskAccept", "taskReject"], root: ["cancel"] },
  requestedAnyone: {
    alice: ["cancel"],
    aliceApprover: ["cancel"],
    bob: ["taskAccept", "taskReject"],
    carol: ["taskAccept", "taskReject"],
    carolOperator: ["taskAccept", "taskReject"],
    root: ["cancel"],
  },
  inProgress: { alice: ["cancel"], aliceApprover: ["cancel"], bob: ["taskUpdate", "taskComplete", "taskFail"], root: ["cancel"] },
  rejectedAnyone: {
    alice: ["cancel"],
    aliceApprover: ["cancel"],
    carol: ["taskReject"],
    carolOperator: ["taskReject"],
    root: ["cancel"],
  },
  rejectedAnyoneReassign: {
    alice: ["cancel"],
    aliceApprover: ["cancel"],
    bob: ["taskAccept"],
    carol: ["taskAccept", "taskReject"],
    carolOperator: ["taskAccept", "taskReject"],
    root: ["cancel"],
  },
  inProgressReassign: {
    alice: ["cancel"],
    aliceApprover: ["cancel"],
    bob: ["taskReject", "taskUpdate", "taskComplete", "taskFail"],
    root: ["cancel"],
  },
  completed: { alice: ["commit", "cancel"], aliceApprover: ["commit", "cancel"], root: ["cancel"] },
  failed: { alice: ["commit", "cancel"], aliceApprover: ["commit", "cancel"], root: ["cancel"] },
  failedRequireOutput: { alice: ["cancel"], aliceApprover: ["cancel"], root: ["cancel"] },
  emptyOutputRequireOutput: { alice: ["cancel"], aliceApprover: ["cancel"], root: ["cancel"] },
  completedRequireOutput: { alice: ["commit", "cancel"], aliceApprover: ["commit", "cancel"], root: ["cancel"] },
  committed: {},
  designatedCompleted: {
    alice: ["cancel"],
    aliceApprover: ["cancel"],
    carol: ["commit", "cancel"],
    carolOperator: ["commit"],
    root: ["cancel"],
  },
};

function expectTable(scenarios: Record<string, Scenario>, expectations: Record<string, Expectation>) {
  for (const [name, scenario] of Object.entries(scenarios)) {
    const expected = expectations[name];
    if (!expected) throw new Error(`no expectation for scenario ${name}`);
    for (const actorName of ACTOR_NAMES) {
      it(`${name} × ${actorName}`, () => {
        const allowed = new Set<Action>([...ALWAYS[actorName], ...(expected[actorName] ?? [])]);
        const ctx = { now: NOW, ...scenario.ctx };
        const got = decideAll(ACTORS[actorName], scenario.view, ctx);
        const actual = ACTIONS.filter((a) => got[a].allowed);
        expect(actual.sort()).toEqual([...allowed].sort());
        for (const a of ACTIONS) {
          const d = got[a];
          if (!d.allowed) {
            expect(d.reason, `${a} reason`).toMatch(/^[A-Z"].*\.$/);
            expect(d.reason).not.toMatch(/undefined|\[object/);
          }
        }
      });
    }
  }
}

describe("decide: handoff table (role × protocol state × action)", () => {
  expectTable(HANDOFF, HANDOFF_EXPECT);
});

describe("decide: task table (role × protocol state × action)", () => {
  expectTable(TASK, TASK_EXPECT);
});

function reasonOf(actor: Actor, scenario: Scenario, action: Action, extra: DecideContext = {}): { code: DenyCode; reason: string } {
  const d = decide(actor, scenario.view, action, { now: NOW, ...scenario.ctx, ...extra });
  if (d.allowed) throw new Error(`${action} unexpectedly allowed`);
  return { code: d.code, reason: d.reason };
}

const names: DecideContext = {
  nameOf: (id) => ({ [BOB]: "Bob", [CAROL]: "Carol", [ALICE]: "Alice" })[id],
};

describe("decide: reasons people can read", () => {
  it("role denials", () => {
    expect(reasonOf(ACTORS.vic, HANDOFF.pending!, "accept")).toEqual({
      code: "role",
      reason: "Your account is read-only (viewer): you can watch sessions but not act in them.",
    });
    expect(reasonOf(ACTORS.vic, HANDOFF.accepted!, "commit").code).toBe("role");
    // An operator who owns the session commits it under the default policy,
    // but a lead-approval policy sends the decision to the designated approver.
    expect(decide(ACTORS.alice, HANDOFF.accepted!.view, "commit", { now: NOW }).allowed).toBe(true);
    expect(reasonOf(ACTORS.alice, HANDOFF.designatedAccepted!, "commit", { approverLabel: "a lead" })).toEqual({
      code: "authority",
      reason: "This handoff needs approval from a lead (carol).",
    });
    expect(reasonOf(ACTORS.carol, HANDOFF.accepted!, "manageUsers").reason).toBe("Only an admin can manage users.");
    expect(reasonOf(ACTORS.bob, HANDOFF.accepted!, "managePolicies").reason).toBe("Only an admin can manage policies.");
  });

  it("waiting for the target", () => {
    expect(reasonOf(ACTORS.aliceApprover, HANDOFF.pending!, "commit")).toEqual({
      code: "state",
      reason: "Waiting for bob to respond to the offer.",
    });
    expect(reasonOf(ACTORS.aliceApprover, HANDOFF.pending!, "commit", names).reason).toBe("Waiting for Bob to respond to the offer.");
    expect(reasonOf(ACTORS.carol, HANDOFF.implicitNotYet!, "commit").reason).toBe(
      "Waiting for bob to respond to the offer; it counts as accepted in 1 s.",
    );
  });

  it("designated approvers are named", () => {
    expect(reasonOf(ACTORS.aliceApprover, HANDOFF.designatedAccepted!, "commit", { approverLabel: "a lead" })).toEqual({
      code: "authority",
      reason: "This handoff needs approval from a lead (carol).",
    });
    const two = summarizePolicyRules(
      JSON.stringify({ commitment: { authority: "designated_role", designated_roles: [CAROL, "human:erin"] } }),
    );
    expect(reasonOf(ACTORS.aliceApprover, HANDOFF.designatedAccepted!, "commit", { policy: two, ...names }).reason).toBe(
      "This handoff needs approval from Carol or erin.",
    );
    expect(reasonOf(ACTORS.carol, HANDOFF.accepted!, "commit").reason).toBe("Only the session's owner (alice) can commit this handoff.");
  });

  it("offer and response rules", () => {
    expect(reasonOf(ACTORS.bob, HANDOFF.noOffer!, "offer")).toEqual({
      code: "authority",
      reason: "Only the session's owner (alice) can offer the handoff.",
    });
    expect(reasonOf(ACTORS.alice, HANDOFF.pending!, "offer").reason).toBe("The offer to bob is still waiting for an answer.");
    expect(reasonOf(ACTORS.alice, HANDOFF.accepted!, "offer").reason).toBe(
      "Bob already accepted the handoff, so no further offers can be made.",
    );
    expect(reasonOf(ACTORS.carol, HANDOFF.pending!, "accept", names)).toEqual({
      code: "authority",
      reason: "This offer is for Bob; only they can accept it.",
    });
    expect(reasonOf(ACTORS.bob, HANDOFF.accepted!, "decline").reason).toBe("You already accepted the handoff.");
    expect(reasonOf(ACTORS.bob, HANDOFF.declined!, "accept").reason).toBe("You already declined the offer.");
    expect(reasonOf(ACTORS.bob, HANDOFF.noOffer!, "accept").reason).toBe("There is no offer to answer yet.");
    expect(reasonOf(ACTORS.alice, HANDOFF.noOffer!, "attachContext").reason).toBe("Make an offer first; context is attached to an offer.");
    expect(reasonOf(ACTORS.alice, HANDOFF.noOffer!, "offer", { offer: { target: ALICE } })).toEqual({
      code: "invalid",
      reason: "You can't offer the handoff to yourself.",
    });
    expect(reasonOf(ACTORS.alice, HANDOFF.noOffer!, "offer", { offer: { target: DAVE } }).code).toBe("invalid");
    expect(decide(ACTORS.alice, HANDOFF.noOffer!.view, "offer", { now: NOW, offer: { target: CAROL } }).allowed).toBe(true);
    expect(reasonOf(ACTORS.aliceApprover, HANDOFF.noOffer!, "commit").reason).toBe(
      "There is nothing to commit yet: no offer has been made.",
    );
  });

  it("lifecycle", () => {
    expect(reasonOf(ACTORS.bob, HANDOFF.committed!, "accept")).toEqual({
      code: "not_open",
      reason: "This handoff is already committed; nothing more can happen in it.",
    });
    expect(reasonOf(ACTORS.root, HANDOFF.cancelled!, "cancel").reason).toBe("This handoff was cancelled.");
    expect(reasonOf(ACTORS.bob, HANDOFF.expired!, "accept").reason).toBe("This handoff expired before it was committed.");
    expect(reasonOf(ACTORS.bob, HANDOFF.suspended!, "accept").reason).toBe("This handoff is suspended; it has to be resumed first.");
    // The runtime's deadline wins over start + TTL (it moves after a resume).
    expect(decide(ACTORS.bob, HANDOFF.pending!.view, "accept", { now: T0 + TTL + 5, expiresAt: T0 + TTL + 10 }).allowed).toBe(true);
    // Exactly at the deadline is still open.
    expect(decide(ACTORS.bob, HANDOFF.pending!.view, "accept", { now: T0 + TTL }).allowed).toBe(true);
  });

  it("unknown policies are not guessed", () => {
    expect(reasonOf(ACTORS.aliceApprover, HANDOFF.unknownPolicyAccepted!, "commit")).toEqual({
      code: "unknown_policy",
      reason: "The rules of policy policy.ops.lead aren't loaded yet, so Baton can't tell whether this is allowed.",
    });
    expect(reasonOf(ACTORS.carol, HANDOFF.unknownPolicyAccepted!, "cancel").code).toBe("unknown_policy");
  });

  it("cancel", () => {
    expect(reasonOf(ACTORS.bob, HANDOFF.pending!, "cancel")).toEqual({
      code: "authority",
      reason: "Only the session's owner (alice) or an admin can cancel it.",
    });
  });

  it("task rules", () => {
    expect(reasonOf(ACTORS.carol, TASK.requestedBob!, "taskAccept")).toEqual({
      code: "authority",
      reason: "This task was requested from bob; only they can take it.",
    });
    expect(reasonOf(ACTORS.alice, TASK.requestedAnyone!, "taskAccept").reason).toBe(
      "You requested this task; someone else has to take it.",
    );
    expect(reasonOf(ACTORS.dave, TASK.requestedAnyone!, "taskAccept")).toEqual({
      code: "not_participant",
      reason: "You aren't a participant in this session.",
    });
    expect(reasonOf(ACTORS.carol, TASK.rejectedAnyone!, "taskAccept")).toEqual({
      code: "policy",
      reason:
        "Bob turned the task down and this session's policy doesn't allow reassignment, so nobody can take it. Cancel the session instead.",
    });
    expect(reasonOf(ACTORS.bob, TASK.rejectedAnyone!, "taskReject").reason).toBe("You already turned this task down.");
    expect(reasonOf(ACTORS.carol, TASK.inProgress!, "taskAccept").reason).toBe("Bob already took this task.");
    expect(reasonOf(ACTORS.bob, TASK.inProgress!, "taskReject")).toEqual({
      code: "policy",
      reason: "This session's policy doesn't let you hand back a task you took.",
    });
    expect(reasonOf(ACTORS.carol, TASK.inProgress!, "taskComplete").reason).toBe("Only bob, who took the task, can complete it.");
    expect(reasonOf(ACTORS.bob, TASK.requestedBob!, "taskUpdate").reason).toBe(
      "Nobody has taken this task yet; it has to be accepted before anyone reports on it.",
    );
    expect(reasonOf(ACTORS.bob, TASK.completed!, "taskFail").reason).toBe("The task already completed; no further reports are possible.");
    expect(reasonOf(ACTORS.alice, TASK.requestedBob!, "taskRequest").reason).toBe(
      'This session already has its task ("Rotate keys"); a task session carries exactly one.',
    );
    expect(reasonOf(ACTORS.aliceApprover, TASK.inProgress!, "commit").reason).toBe("Waiting for bob to finish the task.");
    expect(reasonOf(ACTORS.aliceApprover, TASK.requestedAnyone!, "commit").reason).toBe("Waiting for someone to take the task.");
    expect(reasonOf(ACTORS.aliceApprover, TASK.rejectedAnyone!, "commit").code).toBe("policy");
    expect(reasonOf(ACTORS.aliceApprover, TASK.noTask!, "commit").reason).toBe(
      "There is nothing to commit yet: no task has been requested.",
    );
    expect(reasonOf(ACTORS.aliceApprover, TASK.failedRequireOutput!, "commit").reason).toMatch(/failed task can't be committed/);
    expect(reasonOf(ACTORS.aliceApprover, TASK.emptyOutputRequireOutput!, "commit").reason).toMatch(/completed it without any/);
    expect(reasonOf(ACTORS.carol, TASK.designatedCompleted!, "taskRequest").reason).toBe(
      "Only the session's owner (alice) can request the task.",
    );
    expect(reasonOf(ACTORS.alice, TASK.noTask!, "taskRequest", { task: { requestedAssignee: DAVE } }).code).toBe("invalid");
  });

  it("mode mismatches", () => {
    expect(reasonOf(ACTORS.alice, TASK.noTask!, "offer")).toEqual({
      code: "wrong_mode",
      reason: "Offers and their answers only exist in handoff sessions.",
    });
    expect(reasonOf(ACTORS.alice, HANDOFF.noOffer!, "taskRequest").code).toBe("wrong_mode");
  });

  it("sessions that are not loaded", () => {
    expect(reasonOf(ACTORS.root, { view: undefined as unknown as SessionView }, "cancel")).toEqual({
      code: "not_found",
      reason: "This session isn't loaded yet, or doesn't exist.",
    });
    expect(decide(ACTORS.vic, undefined, "view").allowed).toBe(true);
  });
});

describe("decide: startSession", () => {
  const op = ACTORS.alice;
  it("checks role, mode and participants", () => {
    expect(decide(op, undefined, "startSession").allowed).toBe(true);
    expect(decide(op, undefined, "startSession", { start: { mode: HANDOFF_MODE, participants: [ALICE, BOB] } }).allowed).toBe(true);
    expect(decide(ACTORS.vic, undefined, "startSession").allowed).toBe(false);
    const cases: Array<[DecideContext["start"], string]> = [
      [{ mode: "macp.mode.decision.v1" }, "Baton can only start handoff and task sessions."],
      [{ participants: [ALICE] }, "Add at least one other participant."],
      [{ participants: [BOB, CAROL] }, "You (human:alice) must be one of the participants, because you start the session."],
      [{ participants: [ALICE, BOB, BOB] }, "human:bob is listed twice."],
      [{ participants: [ALICE, " "] }, "A participant id is empty."],
      [{ participants: [ALICE, "bad id"] }, '"bad id" isn\'t a valid participant id (no spaces, at most 512 characters).'],
    ];
    for (const [start, reason] of cases) {
      const d = decide(op, undefined, "startSession", { start });
      expect(d).toMatchObject({ allowed: false, reason });
    }
  });

  it("refuses accounts without a participant id", () => {
    expect(decide({ role: "admin", participantId: "" }, undefined, "startSession")).toMatchObject({ allowed: false, code: "no_identity" });
    expect(decide({ role: "admin", participantId: "" }, undefined, "manageUsers").allowed).toBe(true);
    expect(decide({ role: "operator", participantId: "_runtime" }, HANDOFF.pending!.view, "accept").allowed).toBe(false);
  });
});

describe("decide: properties", () => {
  const scenarios = [...Object.values(HANDOFF), ...Object.values(TASK)];
  it("a higher role never loses a right a lower role has (same participant)", () => {
    for (const s of scenarios) {
      for (const pid of [ALICE, BOB, CAROL, VIC, ROOT]) {
        for (const action of ACTIONS) {
          for (const lower of ROLES) {
            if (!decide({ role: lower, participantId: pid }, s.view, action, { now: NOW, ...s.ctx }).allowed) continue;
            for (const higher of ROLES.filter((r) => roleAtLeast(r, lower))) {
              expect(decide({ role: higher, participantId: pid }, s.view, action, { now: NOW, ...s.ctx }).allowed).toBe(true);
            }
          }
        }
      }
    }
  });

  it("viewers can only view", () => {
    for (const s of scenarios) {
      const all = decideAll({ role: "viewer", participantId: BOB }, s.view, { now: NOW, ...s.ctx });
      expect(ACTIONS.filter((a) => all[a].allowed)).toEqual(["view"]);
    }
  });

  it("only the session's protocol authority may commit, whatever the role", () => {
    for (const s of scenarios) {
      for (const pid of [BOB, VIC, ROOT]) {
        // bob, vic and root are never the initiator nor designated in these scenarios,
        // except under any_participant where bob and vic are participants.
        const d = decide({ role: "admin", participantId: pid }, s.view, "commit", { now: NOW, ...s.ctx });
        if (d.allowed) expect(s.ctx?.policy).toBe(ANY_PARTICIPANT);
      }
    }
  });
});

describe("lib/authz stays browser-safe", () => {
  it("imports nothing from Node or from server-side folders (lib/base imports nothing at all)", async () => {
    const { readdir, readFile } = await import("node:fs/promises");
    const dir = new URL(".", import.meta.url);
    const files = (await readdir(dir)).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const text = await readFile(new URL(f, dir), "utf8");
      const imports = [...text.matchAll(/from "([^"]+)"/g)].map((m) => m[1] as string);
      for (const spec of imports) {
        expect(spec, `${f} imports ${spec}`).toMatch(
          /^(@\/lib\/base\/|@\/lib\/macp\/|@\/lib\/authz\/|@\/lib\/handoff-files\/transitions$|\.\/)/,
        );
      }
    }
    // The v0.1 state machine's table is shared with lib/handoff-files, and stays free of imports but types.
    const table = await readFile(new URL("../handoff-files/transitions.ts", dir), "utf8");
    for (const line of table.split("\n").filter((l) => /^import /.test(l) || /^export .* from /.test(l)))
      expect(line).toMatch(/^(import|export) type /);
  });
});

describe("decide: escalation", () => {
  it("only the owner escalates, and only while their offer waits", () => {
    const pending = view([start(HANDOFF_MODE), offer()]);
    expect(decide(ACTORS.alice, pending, "escalate", { now: NOW }).allowed).toBe(true);
    expect(decide(ACTORS.bob, pending, "escalate", { now: NOW })).toMatchObject({ allowed: false, code: "authority" });
    expect(decide(ACTORS.vic, pending, "escalate", { now: NOW })).toMatchObject({ allowed: false, code: "role" });
    const accepted = view([start(HANDOFF_MODE), offer(), acceptOffer()]);
    expect(decide(ACTORS.alice, accepted, "escalate", { now: NOW })).toMatchObject({ allowed: false, code: "state" });
    expect(decide(ACTORS.alice, view([start(HANDOFF_MODE)]), "escalate", { now: NOW })).toMatchObject({ allowed: false, code: "state" });
    expect(decide(ACTORS.alice, pending, "escalate", { now: NOW, lifecycle: "Cancelled" })).toMatchObject({
      allowed: false,
      code: "not_open",
    });
  });

  it("an escalation is cancelled by its owner or an admin", () => {
    const ctx = { escalation: { owner: ALICE } };
    expect(decide(ACTORS.alice, undefined, "cancelEscalation", ctx).allowed).toBe(true);
    expect(decide(ACTORS.root, undefined, "cancelEscalation", ctx).allowed).toBe(true);
    expect(decide(ACTORS.bob, undefined, "cancelEscalation", ctx)).toMatchObject({ allowed: false, code: "authority" });
    expect(decide(ACTORS.vic, undefined, "cancelEscalation", ctx)).toMatchObject({ allowed: false, code: "role" });
  });
});
