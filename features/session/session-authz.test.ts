import { describe, expect, it } from "vitest";
import { DEFAULT_POLICY_SUMMARY, summarizePolicyRules } from "@/lib/authz/policy-summary";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { emptySessionView, reduceSession, type SessionView } from "@/lib/macp/projections/session";
import { makeEvent } from "@/lib/macp/test-utils";
import { metadata } from "@/lib/views/test/fixtures";
import {
  approvalFacts,
  commitDefaults,
  decideContextFor,
  implicitAcceptAt,
  lifecycleOfState,
  listsRefusal,
  pendingOfferOf,
  policyIdOf,
  sessionPanel,
  waitingFor,
} from "@/features/session/session-authz";

const ALICE = "human:alice";
const BOB = "human:bob";
const CAROL = "human:carol";
const NAMES: Record<string, string> = { [ALICE]: "Alice Ng", [BOB]: "Bob Ito", [CAROL]: "Carol Lee" };
const nameOf = (id: string) => NAMES[id] ?? id;
const T0 = 1_700_000_000_000;
const LEAD = summarizePolicyRules(JSON.stringify({ commitment: { authority: "designated_role", designated_roles: [CAROL] } }));

function handoff(steps: ("offer" | "accept" | "decline")[], policyVersion = ""): SessionView {
  const events = [
    makeEvent(
      HANDOFF_MODE,
      "SessionStart",
      {
        intent: "payments on-call",
        participants: [ALICE, BOB, CAROL],
        modeVersion: "1.0.0",
        configurationVersion: "config.default",
        policyVersion,
        ttlMs: 3_600_000n,
      },
      { sender: ALICE, ts: T0 },
    ),
  ];
  let t = T0;
  for (const s of steps) {
    t += 1000;
    if (s === "offer")
      events.push(
        makeEvent(HANDOFF_MODE, "HandoffOffer", { handoffId: "h1", targetParticipant: BOB, scope: "pager" }, { sender: ALICE, ts: t }),
      );
    if (s === "accept") events.push(makeEvent(HANDOFF_MODE, "HandoffAccept", { handoffId: "h1", acceptedBy: BOB }, { sender: BOB, ts: t }));
    if (s === "decline")
      events.push(makeEvent(HANDOFF_MODE, "HandoffDecline", { handoffId: "h1", declinedBy: BOB, reason: "busy" }, { sender: BOB, ts: t }));
  }
  return events.reduce(reduceSession, emptySessionView());
}

const ctx = (policy = LEAD, state = SessionState.OPEN, now = T0 + 10_000) =>
  decideContextFor({ metadata: metadata(state, { expiresAt: T0 + 3_600_000 }), policy, nameOf, now });

describe("sessionPanel", () => {
  it("shows viewers no controls at all", () => {
    expect(sessionPanel({ role: "viewer", participantId: "human:victor" }, handoff(["offer"]), ctx())).toEqual({
      kind: "read-only",
      reason: "Your account is read-only (viewer): you can watch sessions but not act in them.",
    });
  });

  it("says why the owner can't commit under lead approval, and that the offer waits", () => {
    const panel = sessionPanel({ role: "operator", participantId: ALICE }, handoff(["offer", "accept"], "policy.baton.lead"), ctx());
    expect(panel.kind).toBe("actions");
    if (panel.kind !== "actions") return;
    const commit = panel.actions.find((a) => a.action === "commit")?.decision;
    expect(commit).toEqual({ allowed: false, code: "authority", reason: "This handoff needs approval from Carol Lee." });
    const pending = sessionPanel({ role: "operator", participantId: ALICE }, handoff(["offer"]), ctx(undefined));
    const offer = pending.kind === "actions" ? pending.actions.find((a) => a.action === "offer")?.decision : undefined;
    expect(offer).toMatchObject({ allowed: false, reason: "The offer to Bob Ito is still waiting for an answer." });
  });

  it("lets the approver commit and the target answer", () => {
    const carol = sessionPanel({ role: "approver", participantId: CAROL }, handoff(["offer", "accept"]), ctx());
    expect(carol.kind === "actions" && carol.actions.find((a) => a.action === "commit")?.decision.allowed).toBe(true);
    const bob = sessionPanel({ role: "operator", participantId: BOB }, handoff(["offer"]), ctx());
    const allowed = bob.kind === "actions" ? bob.actions.filter((a) => a.decision.allowed).map((a) => a.action) : [];
    expect(allowed).toEqual(["accept", "decline"]);
  });

  it("closes when the runtime says the session is over", () => {
    expect(sessionPanel({ role: "operator", participantId: ALICE }, handoff(["offer"]), ctx(LEAD, SessionState.CANCELLED))).toEqual({
      kind: "closed",
      reason: "This handoff was cancelled.",
    });
    expect(sessionPanel({ role: "operator", participantId: ALICE }, emptySessionView(), ctx())).toEqual({ kind: "none" });
  });

  it("lists task actions for task sessions", () => {
    const start = makeEvent(
      TASK_MODE,
      "SessionStart",
      { intent: "export", participants: [ALICE, BOB], modeVersion: "1.0.0", configurationVersion: "config.default", ttlMs: 60_000n },
      { sender: ALICE, ts: T0 },
    );
    const view = reduceSession(emptySessionView(), start);
    const panel = sessionPanel({ role: "operator", participantId: ALICE }, view, ctx(undefined));
    expect(panel.kind === "actions" && panel.actions.map((a) => a.action)).toEqual([
      "taskRequest",
      "taskAccept",
      "taskReject",
      "taskUpdate",
      "taskComplete",
      "taskFail",
      "commit",
      "cancel",
    ]);
  });
});

describe("helpers", () => {
  it("lists refusals that inform, not other people's authority", () => {
    expect(
      listsRefusal("accept", { allowed: false, code: "authority", reason: "This offer is for Bob Ito; only they can accept it." }),
    ).toBe(false);
    expect(listsRefusal("commit", { allowed: false, code: "authority", reason: "This handoff needs approval from Carol Lee." })).toBe(true);
    expect(listsRefusal("offer", { allowed: false, code: "state", reason: "waiting" })).toBe(true);
    expect(listsRefusal("offer", { allowed: true })).toBe(false);
  });

  it("knows the policy and the lifecycle", () => {
    expect(policyIdOf(handoff([]), undefined)).toBeNull();
    expect(policyIdOf(handoff([], "policy.baton.x"), undefined)).toBe("policy.baton.x");
    expect(lifecycleOfState(SessionState.RESOLVED)).toBe("Resolved");
    expect(lifecycleOfState(undefined)).toBeUndefined();
    expect(decideContextFor({ metadata: undefined, policy: undefined, nameOf, now: 5 })).toEqual({ now: 5, nameOf });
  });

  it("counts down an implicit accept only when the policy has one", () => {
    const view = handoff(["offer"]);
    const offeredAt = pendingOfferOf(view)?.offeredAt ?? 0;
    const implicit = summarizePolicyRules(JSON.stringify({ acceptance: { implicit_accept_timeout_ms: 60_000 } }));
    expect(implicitAcceptAt(view, implicit, "policy.x")).toBe(offeredAt + 60_000);
    expect(implicitAcceptAt(view, undefined, null)).toBeUndefined();
    expect(implicitAcceptAt(view, undefined, "policy.x")).toBeUndefined();
    expect(implicitAcceptAt(handoff(["offer", "accept"]), implicit, "policy.x")).toBeUndefined();
  });

  it("prefills the commit with the new owner, or the owner keeping it", () => {
    expect(commitDefaults(handoff(["offer", "accept"]), nameOf)).toEqual({
      outcome: "accepted",
      scope: "pager",
      reason: "Bob Ito (human:bob) takes over pager.",
    });
    expect(commitDefaults(handoff(["offer", "decline"]), nameOf)).toEqual({
      outcome: "declined",
      scope: "pager",
      reason: "The handoff was declined; Alice Ng (human:alice) keeps pager.",
    });
  });
});

describe("waitingFor", () => {
  const lead = (steps: ("offer" | "accept" | "decline")[]) => handoff(steps, "policy.baton.lead");
  it("names who must act next in a handoff, in one sentence", () => {
    expect(waitingFor(lead([]), LEAD, nameOf)).toEqual({ on: [ALICE], sentence: "Waiting for Alice Ng to make an offer." });
    expect(waitingFor(lead(["offer"]), LEAD, nameOf)).toEqual({ on: [BOB], sentence: "Waiting for Bob Ito to answer the offer." });
    expect(waitingFor(lead(["offer", "decline"]), LEAD, nameOf)).toEqual({
      on: [ALICE],
      sentence: "Bob Ito declined; waiting for Alice Ng to offer it to someone else or close the handoff.",
    });
    expect(waitingFor(lead(["offer", "accept"]), LEAD, nameOf)).toEqual({
      on: [CAROL],
      sentence: "Waiting for Carol Lee to approve and commit the handoff to Bob Ito.",
    });
    expect(waitingFor(handoff(["offer", "accept"]), DEFAULT_POLICY_SUMMARY, nameOf)).toEqual({
      on: [ALICE],
      sentence: "Waiting for Alice Ng to commit the handoff to Bob Ito.",
    });
    // Rules not loaded yet: nobody is named.
    expect(waitingFor(lead(["offer", "accept"]), undefined, nameOf)).toEqual({
      on: [],
      sentence: "Waiting for someone to commit the handoff to Bob Ito.",
    });
  });

  it("names who must act next in a task", () => {
    const task = (steps: ("request" | "accept" | "reject" | "complete")[]) => {
      const events = [
        makeEvent(
          TASK_MODE,
          "SessionStart",
          { intent: "keys", participants: [ALICE, BOB], modeVersion: "1.0.0", configurationVersion: "config.default", ttlMs: 3_600_000n },
          { sender: ALICE, ts: T0 },
        ),
      ];
      for (const s of steps) {
        if (s === "request")
          events.push(
            makeEvent(TASK_MODE, "TaskRequest", { taskId: "t1", title: "Rotate", requestedAssignee: BOB }, { sender: ALICE, ts: T0 + 1 }),
          );
        if (s === "accept") events.push(makeEvent(TASK_MODE, "TaskAccept", { taskId: "t1", assignee: BOB }, { sender: BOB, ts: T0 + 2 }));
        if (s === "reject")
          events.push(makeEvent(TASK_MODE, "TaskReject", { taskId: "t1", assignee: BOB, reason: "no" }, { sender: BOB, ts: T0 + 2 }));
        if (s === "complete")
          events.push(makeEvent(TASK_MODE, "TaskComplete", { taskId: "t1", assignee: BOB }, { sender: BOB, ts: T0 + 3 }));
      }
      return events.reduce(reduceSession, emptySessionView());
    };
    expect(waitingFor(task([]), DEFAULT_POLICY_SUMMARY, nameOf)?.sentence).toBe("Waiting for Alice Ng to request the task.");
    expect(waitingFor(task(["request"]), DEFAULT_POLICY_SUMMARY, nameOf)?.sentence).toBe(
      "Waiting for Bob Ito to take the task or turn it down.",
    );
    expect(waitingFor(task(["request", "reject"]), DEFAULT_POLICY_SUMMARY, nameOf)?.sentence).toBe(
      "Bob Ito turned the task down; waiting for Alice Ng to cancel it or start another.",
    );
    expect(waitingFor(task(["request", "accept"]), DEFAULT_POLICY_SUMMARY, nameOf)?.sentence).toBe(
      "Waiting for Bob Ito to finish the task.",
    );
    expect(waitingFor(task(["request", "accept", "complete"]), DEFAULT_POLICY_SUMMARY, nameOf)?.sentence).toBe(
      "Waiting for Alice Ng to commit the completed task.",
    );
  });

  it("says nothing once the session is over", () => {
    const done = lead(["offer", "accept"]);
    expect(waitingFor({ ...done, lifecycle: "Cancelled" }, LEAD, nameOf)).toBeNull();
  });
});

describe("approvalFacts", () => {
  it("approves the accepted offer, with the authority scope from the bound policy", () => {
    const f = approvalFacts(handoff(["offer", "accept"], "policy.baton.lead"), nameOf, "approve", "policy.baton.lead");
    expect(f).toEqual({
      canApprove: true,
      sentence: "Bob Ito takes over pager.",
      reason: "Approved: Bob Ito (human:bob) takes over pager.",
      authorityScope: "approver under policy.baton.lead",
    });
  });

  it("rejects: the owner keeps it; with no accepted offer only Reject applies", () => {
    const r = approvalFacts(handoff(["offer", "accept"]), nameOf, "reject", null);
    expect(r.sentence).toBe("Alice Ng keeps pager.");
    expect(r.reason).toBe("Rejected: Alice Ng (human:alice) keeps pager.");
    expect(r.authorityScope).toBe("approver under policy.default");
    const declined = approvalFacts(handoff(["offer", "decline"]), nameOf, "approve", null);
    expect(declined.canApprove).toBe(false);
    expect(declined.sentence).toBe("Alice Ng keeps pager.");
  });
});
