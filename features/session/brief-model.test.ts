import { describe, expect, it } from "vitest";
import { summarizePolicyRules, type PolicySummary } from "@/lib/authz/policy-summary";
import type { Actor } from "@/lib/authz/decide";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { emptySessionView, reduceSession, type SessionView } from "@/lib/macp/projections/session";
import type { SessionEvent } from "@/lib/macp/projections/types";
import { makeEvent } from "@/lib/macp/test-utils";
import { metadata } from "@/lib/views/test/fixtures";
import { briefFor, runbooksFor } from "@/features/session/brief-model";
import { decideContextFor } from "@/features/session/session-authz";

const ALICE = "human:alice";
const BOB = "human:bob";
const CAROL = "human:carol";
const DAVE = "human:dave";
const NAMES: Record<string, string> = { [ALICE]: "Alice Ng", [BOB]: "Bob Ito", [CAROL]: "Carol Lee", [DAVE]: "Dave Park" };
const nameOf = (id: string) => NAMES[id] ?? id;
const T0 = 1_700_000_000_000;
const LEAD = summarizePolicyRules(JSON.stringify({ commitment: { authority: "designated_role", designated_roles: [CAROL] } }));
const IMPLICIT = summarizePolicyRules(JSON.stringify({ acceptance: { implicit_accept_timeout_ms: 600_000 } }));
const enc = (s: string) => new TextEncoder().encode(s);
const as = (participantId: string, role: Actor["role"] = "operator"): Actor => ({ role, participantId });

type Step = ["offer", string, string, string?] | ["context", string, string] | ["accept", string] | ["decline", string, string];

function handoff(steps: Step[], policyVersion = "policy.baton.lead"): SessionView {
  const events: SessionEvent[] = [
    makeEvent(
      HANDOFF_MODE,
      "SessionStart",
      {
        intent: "payments rotation",
        participants: [ALICE, BOB, CAROL, DAVE],
        modeVersion: "1.0.0",
        configurationVersion: "config.default",
        policyVersion,
        ttlMs: 3_600_000n,
      },
      { sender: ALICE, ts: T0, sequence: 1 },
    ),
  ];
  let t = T0;
  for (const s of steps) {
    t += 1000;
    const opts = { sender: ALICE, ts: t, sequence: events.length + 1 };
    if (s[0] === "offer")
      events.push(
        makeEvent(
          HANDOFF_MODE,
          "HandoffOffer",
          { handoffId: s[1], targetParticipant: s[2], scope: "payments-api primary on-call", reason: s[3] ?? "" },
          opts,
        ),
      );
    if (s[0] === "context")
      events.push(makeEvent(HANDOFF_MODE, "HandoffContext", { handoffId: s[1], contentType: "text/markdown", context: enc(s[2]) }, opts));
    if (s[0] === "accept")
      events.push(makeEvent(HANDOFF_MODE, "HandoffAccept", { handoffId: s[1] }, { ...opts, sender: events.length > 4 ? DAVE : BOB }));
    if (s[0] === "decline")
      events.push(makeEvent(HANDOFF_MODE, "HandoffDecline", { handoffId: s[1], reason: s[2] }, { ...opts, sender: BOB }));
  }
  return events.reduce(reduceSession, emptySessionView());
}

function input(policy: PolicySummary | undefined, now = T0 + 10_000, policyId: string | null = "policy.baton.lead") {
  return {
    policy,
    policyId,
    nameOf,
    expiresAt: T0 + 3_600_000,
    ctx: decideContextFor({ metadata: metadata(SessionState.OPEN, { expiresAt: T0 + 3_600_000 }), policy, nameOf, now }),
  };
}

describe("briefFor: an offer", () => {
  it("tells the target who asks what, with scope, reason, the session's time left and the runbook", () => {
    const view = handoff([
      ["offer", "h1", BOB, "weekly rotation"],
      ["context", "h1", "# Runbook"],
    ]);
    const brief = briefFor(as(BOB), view, input(LEAD));
    expect(brief).toMatchObject({
      kind: "offer",
      asker: ALICE,
      headline: "Alice Ng asks you to take over payments-api primary on-call",
      scope: "payments-api primary on-call",
      reason: "weekly rotation",
      deadline: { at: T0 + 3_600_000, kind: "session", label: "Session expires in" },
    });
    expect(brief?.runbooks.map((r) => [new TextDecoder().decode(r.bytes), r.earlier, r.offerOrdinal])).toEqual([["# Runbook", false, 1]]);
  });

  it("labels the implicit-accept countdown as such", () => {
    const view = handoff([["offer", "h1", BOB]], "policy.implicit");
    expect(briefFor(as(BOB), view, input(IMPLICIT, T0 + 5_000, "policy.implicit"))?.deadline).toEqual({
      at: T0 + 1000 + 600_000,
      kind: "implicit-accept",
      label: "Counts as accepted in",
    });
  });

  it("carries the runbook of an earlier, declined offer into the re-offer, marked as earlier", () => {
    const view = handoff([
      ["offer", "h1", BOB],
      ["context", "h1", "# Runbook v1"],
      ["decline", "h1", "in a review"],
      ["offer", "h2", DAVE, "Bob is busy"],
    ]);
    const brief = briefFor(as(DAVE), view, input(LEAD));
    expect(brief?.kind).toBe("offer");
    expect(brief?.reason).toBe("Bob is busy");
    expect(brief?.runbooks).toHaveLength(1);
    expect(brief?.runbooks[0]).toMatchObject({ earlier: true, offerOrdinal: 1, offerTarget: BOB, offerStatus: "declined" });
  });

  it("puts the current offer's own runbook before the earlier ones", () => {
    const view = handoff([
      ["offer", "h1", BOB],
      ["context", "h1", "old"],
      ["decline", "h1", "no"],
      ["offer", "h2", DAVE],
      ["context", "h2", "new"],
    ]);
    const runbooks = briefFor(as(DAVE), view, input(LEAD))?.runbooks ?? [];
    expect(runbooks.map((r) => [new TextDecoder().decode(r.bytes), r.earlier])).toEqual([
      ["new", false],
      ["old", true],
    ]);
    // Without an offer asked about, every runbook is the session's own.
    expect(runbooksFor(view, undefined).every((r) => !r.earlier)).toBe(true);
  });

  it("asks nothing of the owner, of others, of viewers, or once the offer is answered", () => {
    const view = handoff([["offer", "h1", BOB]]);
    expect(briefFor(as(ALICE), view, input(LEAD))).toBeNull();
    expect(briefFor(as(DAVE), view, input(LEAD))).toBeNull();
    expect(briefFor(as(BOB, "viewer"), view, input(LEAD))).toBeNull();
    expect(
      briefFor(
        as(BOB),
        handoff([
          ["offer", "h1", BOB],
          ["decline", "h1", "no"],
        ]),
        input(LEAD),
      ),
    ).toBeNull();
  });
});

describe("briefFor: an approval", () => {
  it("asks the designated approver to approve once the target accepted, naming from and to", () => {
    const view = handoff([
      ["offer", "h1", BOB, "weekly rotation"],
      ["context", "h1", "# Runbook"],
      ["accept", "h1"],
    ]);
    const brief = briefFor(as(CAROL, "approver"), view, input(LEAD));
    expect(brief).toMatchObject({
      kind: "approval",
      asker: ALICE,
      from: ALICE,
      to: BOB,
      headline: "Alice Ng asks you to approve handing payments-api primary on-call to Bob Ito",
      reason: "weekly rotation",
    });
    expect(brief?.runbooks).toHaveLength(1);
  });

  it("does not ask the approver while the offer still waits for the target", () => {
    expect(briefFor(as(CAROL, "approver"), handoff([["offer", "h1", BOB]]), input(LEAD))).toBeNull();
  });
});

describe("briefFor: a task", () => {
  function task(steps: ("request" | "accept" | "reject" | "complete")[], deadline = 0n): SessionView {
    const events: SessionEvent[] = [
      makeEvent(
        TASK_MODE,
        "SessionStart",
        {
          intent: "rotate keys",
          participants: [ALICE, BOB],
          modeVersion: "1.0.0",
          configurationVersion: "config.default",
          ttlMs: 3_600_000n,
        },
        { sender: ALICE, ts: T0 },
      ),
    ];
    let t = T0;
    for (const s of steps) {
      t += 1000;
      if (s === "request")
        events.push(
          makeEvent(
            TASK_MODE,
            "TaskRequest",
            { taskId: "t1", title: "Rotate the keys", instructions: "Use the vault CLI", requestedAssignee: BOB, deadlineUnixMs: deadline },
            { sender: ALICE, ts: t },
          ),
        );
      if (s === "accept") events.push(makeEvent(TASK_MODE, "TaskAccept", { taskId: "t1", assignee: BOB }, { sender: BOB, ts: t }));
      if (s === "reject")
        events.push(makeEvent(TASK_MODE, "TaskReject", { taskId: "t1", assignee: BOB, reason: "busy" }, { sender: BOB, ts: t }));
      if (s === "complete")
        events.push(makeEvent(TASK_MODE, "TaskComplete", { taskId: "t1", assignee: BOB, summary: "done" }, { sender: BOB, ts: t }));
    }
    return events.reduce(reduceSession, emptySessionView());
  }
  const tin = () => input(undefined, T0 + 10_000, null);

  it("asks the assignee to take the task, with its instructions and deadline", () => {
    const brief = briefFor(as(BOB), task(["request"], BigInt(T0 + 60_000)), tin());
    expect(brief).toMatchObject({
      kind: "task-request",
      asker: ALICE,
      headline: "Alice Ng asks you to take the task “Rotate the keys”",
      instructions: "Use the vault CLI",
      deadline: { at: T0 + 60_000, kind: "task", label: "Task due in" },
    });
  });

  it("reminds the assignee who took it to report, and asks nothing after a rejection or the end", () => {
    expect(briefFor(as(BOB), task(["request", "accept"]), tin())?.kind).toBe("task-work");
    expect(briefFor(as(BOB), task(["request", "reject"]), tin())).toBeNull();
    expect(briefFor(as(BOB), task(["request", "accept", "complete"]), tin())).toBeNull();
    expect(briefFor(as(ALICE), task(["request"]), tin())).toBeNull();
  });
});
