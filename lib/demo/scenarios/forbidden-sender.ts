import type { Scenario } from "../types";

const ALICE = "agent://oncall/alice";
const BOB = "agent://oncall/bob";
const CAROL = "agent://oncall/carol";

export const forbiddenSender: Scenario = {
  name: "forbidden-sender",
  title: "A message from the wrong sender is refused",
  description:
    "The runtime, not the agents, enforces who may say what. Alice offers the pager to Bob; Carol, also a participant, " +
    "tries to accept the offer in Bob's place and Bob tries to commit the handoff himself. Both are rejected with " +
    "FORBIDDEN and leave no trace in the history. Bob's own accept and Alice's commitment then go through normally.",
  actors: [
    { id: ALICE, role: "outgoing on-call (initiator)" },
    { id: BOB, role: "offer target" },
    { id: CAROL, role: "participant who is not the target" },
  ],
  steps: [
    {
      actor: ALICE,
      action: "start",
      args: { mode: "handoff", intent: "Payments on-call rotation", participants: [ALICE, BOB, CAROL], ttlMs: 3_600_000 },
    },
    { actor: ALICE, action: "offer", args: { handoffId: "h1", to: BOB, scope: "payments-api primary on-call" } },
    {
      actor: CAROL,
      action: "accept",
      args: { handoffId: "h1", reason: "I'll take it" },
      expect: { error: "FORBIDDEN" },
      say: "Carol tries to accept an offer made to Bob",
    },
    { actor: BOB, action: "accept", args: { handoffId: "h1" } },
    {
      actor: BOB,
      action: "commit",
      args: { action: "handoff.accepted", reason: "I accepted, so it's done" },
      expect: { error: "FORBIDDEN" },
      say: "Bob tries to commit; only the initiator holds commitment authority",
    },
    { actor: ALICE, action: "commit", args: { action: "handoff.accepted", reason: "Bob is primary on-call" } },
  ],
  expect: { main: { state: "RESOLVED", phase: "Committed", action: "handoff.accepted", outcomePositive: true, committedBy: ALICE } },
};
