import type { Scenario } from "../types";

const ALICE = "agent://oncall/alice";
const BOB = "agent://oncall/bob";

export const oncallRotation: Scenario = {
  name: "oncall-rotation",
  title: "On-call rotation, accepted",
  description:
    "The weekly hand-over of the payments pager. Alice, the outgoing primary, opens a Handoff session with Bob, offers " +
    "him the primary on-call scope, attaches the real runbook as Markdown plus a small JSON snapshot of open alerts, and " +
    "Bob accepts. Alice then commits handoff.accepted: only that commitment resolves the session and makes Bob the owner.",
  actors: [
    { id: ALICE, role: "outgoing primary on-call" },
    { id: BOB, role: "incoming primary on-call" },
  ],
  steps: [
    {
      actor: ALICE,
      action: "start",
      args: { mode: "handoff", intent: "Weekly payments-api on-call rotation", participants: [ALICE, BOB], ttlMs: 3_600_000 },
    },
    {
      actor: ALICE,
      action: "offer",
      args: { handoffId: "h1", to: BOB, scope: "payments-api primary on-call", reason: "end of Alice's rotation week" },
    },
    {
      actor: ALICE,
      action: "context",
      args: { handoffId: "h1", file: "payments-oncall.md" },
      say: "Alice attaches the runbook (Markdown)",
    },
    {
      actor: ALICE,
      action: "context",
      args: { handoffId: "h1", json: { openIncidents: ["INC-4790"], pendingChanges: ["CHG-1182"], pagerMuted: false } },
      say: "Alice adds a JSON snapshot of open incidents and changes",
    },
    { actor: BOB, action: "accept", args: { handoffId: "h1", reason: "read the runbook, pager app ready" } },
    { actor: ALICE, action: "commit", args: { action: "handoff.accepted", reason: "Bob is primary on-call for payments-api" } },
  ],
  expect: { main: { state: "RESOLVED", phase: "Committed", action: "handoff.accepted", outcomePositive: true, committedBy: ALICE } },
};
