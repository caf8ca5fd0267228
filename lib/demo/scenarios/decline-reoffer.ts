import type { Scenario } from "../types";

const ALICE = "agent://oncall/alice";
const BOB = "agent://oncall/bob";
const CAROL = "agent://oncall/carol";

export const declineReoffer: Scenario = {
  name: "decline-reoffer",
  title: "Declined, then re-offered to a second target",
  description:
    "Not every offer lands. Alice offers the payments pager to Bob, who declines because he is travelling. One session " +
    "can carry several offers in turn, so Alice makes a second offer (a new handoff id) to Carol, shares the runbook with " +
    "her, and Carol accepts. The history keeps both answers: h1 declined, h2 accepted, and the commitment names Carol.",
  actors: [
    { id: ALICE, role: "outgoing on-call" },
    { id: BOB, role: "first choice, travelling" },
    { id: CAROL, role: "second choice" },
  ],
  steps: [
    {
      actor: ALICE,
      action: "start",
      args: { mode: "handoff", intent: "Payments on-call cover for next week", participants: [ALICE, BOB, CAROL], ttlMs: 3_600_000 },
    },
    { actor: ALICE, action: "offer", args: { handoffId: "h1", to: BOB, scope: "payments-api primary on-call" } },
    { actor: BOB, action: "decline", args: { handoffId: "h1", reason: "travelling Tuesday to Thursday, no laptop" } },
    {
      actor: ALICE,
      action: "offer",
      args: { handoffId: "h2", to: CAROL, scope: "payments-api primary on-call", reason: "Bob is travelling" },
      say: "Alice re-offers to Carol with a new handoff id",
    },
    { actor: ALICE, action: "context", args: { handoffId: "h2", file: "payments-oncall.md" } },
    { actor: CAROL, action: "accept", args: { handoffId: "h2", reason: "happy to cover" } },
    { actor: ALICE, action: "commit", args: { action: "handoff.accepted", reason: "Carol covers payments-api on-call" } },
  ],
  expect: { main: { state: "RESOLVED", phase: "Committed", action: "handoff.accepted", outcomePositive: true } },
};
