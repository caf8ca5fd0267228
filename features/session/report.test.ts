import { describe, expect, it } from "vitest";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { emptySessionView, reduceSession } from "@/lib/macp/projections/session";
import type { SessionEvent } from "@/lib/macp/projections/types";
import { makeEvent } from "@/lib/macp/test-utils";
import { handoverReport } from "@/features/session/report";

const ALICE = "human:alice";
const BOB = "human:bob";
const DAVE = "human:dave";
const CAROL = "human:carol";
const AGENT = "agent://oncall/pager";
const NAMES: Record<string, string> = { [ALICE]: "Alice Ng", [BOB]: "Bob Ito", [DAVE]: "Dave Park", [CAROL]: "Carol Lee" };
const nameOf = (id: string) => NAMES[id] ?? id.replace(/^agent:\/\//, "");
const kindOf = (id: string) => (id.startsWith("human:") ? ("person" as const) : ("agent" as const));
const T0 = Date.UTC(2026, 10, 26, 9, 0, 0);
const enc = (s: string) => new TextEncoder().encode(s);
const RUNBOOK = "# Runbook\n\n```sh\nkubectl get pods\n```\n";

function rotation(): SessionEvent[] {
  let seq = 0;
  const ev = (type: string, payload: Record<string, unknown>, sender: string) => {
    seq += 1;
    return makeEvent(HANDOFF_MODE, type, payload, { sender, ts: T0 + seq * 60_000, sequence: seq });
  };
  return [
    ev(
      "SessionStart",
      { intent: "payments rotation", participants: [ALICE, BOB, DAVE, CAROL, AGENT], ttlMs: 3_600_000n, policyVersion: "policy.lead" },
      ALICE,
    ),
    ev(
      "HandoffOffer",
      { handoffId: "h1", targetParticipant: BOB, scope: "payments-api primary on-call", reason: "weekly rotation" },
      ALICE,
    ),
    ev("HandoffContext", { handoffId: "h1", contentType: "text/markdown", context: enc(RUNBOOK) }, ALICE),
    ev("HandoffDecline", { handoffId: "h1", reason: "in an incident | review" }, BOB),
    ev("HandoffOffer", { handoffId: "h2", targetParticipant: DAVE, scope: "payments-api primary on-call", reason: "Bob is busy" }, ALICE),
    ev("HandoffContext", { handoffId: "h2", contentType: "application/octet-stream", context: new Uint8Array([0, 1, 2]) }, AGENT),
    ev("HandoffAccept", { handoffId: "h2", reason: "I have the pager" }, DAVE),
    ev(
      "Commitment",
      {
        commitmentId: "c1",
        action: "handoff.accepted",
        authorityScope: "payments-api primary on-call",
        reason: "Dave takes over",
        outcomePositive: true,
      },
      CAROL,
    ),
  ];
}

describe("handoverReport", () => {
  it("says who handed what to whom and when, with the runbook text, every decision and the commitment", () => {
    const events = rotation();
    const view = events.reduce(reduceSession, emptySessionView());
    const md = handoverReport({ sessionId: "s-1", view, events, nameOf, kindOf });
    expect(md).toContain("# Handover report: payments rotation");
    expect(md).toContain("Alice Ng handed **payments-api primary on-call** to **Dave Park**; committed 2026-11-26T09:08:00.000Z.");
    expect(md).toContain("## Offer 1: Alice Ng → Bob Ito (declined)");
    expect(md).toContain("- Reason: “weekly rotation”");
    expect(md).toContain("- Declined 2026-11-26T09:04:00.000Z by Bob Ito (person, `human:bob`): “in an incident | review”");
    // The runbook verbatim, in a fence longer than its own code fence.
    expect(md).toContain("````markdown\n# Runbook\n\n```sh\nkubectl get pods\n```\n````");
    expect(md).toContain("## Offer 2: Alice Ng → Dave Park (accepted)");
    expect(md).toContain("- Accepted 2026-11-26T09:07:00.000Z by Dave Park (person, `human:dave`): “I have the pager”");
    // Binary context is named, not dumped; agents are marked as agents.
    expect(md).toContain(
      "### Context (application/octet-stream), attached 2026-11-26T09:06:00.000Z by oncall/pager (agent, `agent://oncall/pager`)",
    );
    expect(md).toContain("Binary content, 3 bytes (not included).");
    expect(md).toContain("- Action: `handoff.accepted` (positive outcome)");
    expect(md).toContain("- Committed 2026-11-26T09:08:00.000Z by Carol Lee (person, `human:carol`)");
    // Every step, one table row each, pipes escaped.
    expect(md).toContain(
      "| 2 | 2026-11-26T09:02:00.000Z | Alice Ng (person) | Alice Ng offered payments-api primary on-call to Bob Ito | weekly rotation |",
    );
    expect(md).toContain("| 4 | 2026-11-26T09:04:00.000Z | Bob Ito (person) | Bob Ito declined the offer | in an incident \\| review |");
    expect(md.split("\n").filter((l) => /^\| \d+ \|/.test(l))).toHaveLength(events.length);
  });

  it("lists at most maxSteps steps, says how many more there are, and keeps the outcome and runbook whatever the cap", () => {
    const events = rotation();
    const view = events.reduce(reduceSession, emptySessionView());
    const md = handoverReport({ sessionId: "s-cap", view, events, nameOf, kindOf, maxSteps: 3 });
    const rows = md.split("\n").filter((l) => /^\| \d+ \|/.test(l));
    expect(rows.map((r) => r.split("|")[1]?.trim())).toEqual(["1", "2", "3"]);
    expect(md).toContain(`…and ${events.length - 3} later steps not listed here`);
    expect(md).toContain("kubectl get pods");
    expect(md).toContain("## Commitment");
    // At or above the number of events: every step, no note.
    const all = handoverReport({ sessionId: "s-cap", view, events, nameOf, kindOf, maxSteps: events.length });
    expect(all).not.toContain("later step");
    expect(all.split("\n").filter((l) => /^\| \d+ \|/.test(l))).toHaveLength(events.length);
  });

  it("reports a task and an open session without a commitment", () => {
    const events = [
      makeEvent(
        TASK_MODE,
        "SessionStart",
        { intent: "rotate keys", participants: [ALICE, BOB], ttlMs: 60_000n },
        { sender: ALICE, ts: T0, sequence: 1 },
      ),
      makeEvent(
        TASK_MODE,
        "TaskRequest",
        { taskId: "t1", title: "Rotate the keys", instructions: "Use vault", requestedAssignee: BOB },
        { sender: ALICE, ts: T0 + 1000, sequence: 2 },
      ),
      makeEvent(TASK_MODE, "TaskReject", { taskId: "t1", assignee: BOB, reason: "on leave" }, { sender: BOB, ts: T0 + 2000, sequence: 3 }),
    ];
    const view = events.reduce(reduceSession, emptySessionView());
    const md = handoverReport({ sessionId: "s-2", view, events, nameOf, kindOf });
    expect(md).toContain("- Requested 2026-11-26T09:00:01.000Z by Alice Ng (person, `human:alice`) from Bob Ito (person, `human:bob`)");
    expect(md).toContain("- Turned down 2026-11-26T09:00:02.000Z by Bob Ito (person, `human:bob`): “on leave”");
    expect(md).toContain("## Commitment\n\nNone yet.");
  });
});
