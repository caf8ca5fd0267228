import { describe, expect, it } from "vitest";
import type { SessionView } from "@/lib/macp/projections/session";
import { decide, type Action, type Actor, type DecideContext, type DenyCode } from "@/lib/authz/decide";
import { summarizePolicyRules } from "@/lib/authz/policy-summary";
import { ACTORS, ALICE, BOB, CAROL, DAVE, HANDOFF, NOW, T0, TASK, TTL, type Scenario } from "./__fixtures__/decide-kit";

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
