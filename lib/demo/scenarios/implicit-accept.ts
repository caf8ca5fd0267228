import { buildHandoffPolicy } from "@/lib/agent/policy";
import type { Scenario } from "../types";

const ALICE = "agent://oncall/alice";
const BOB = "agent://oncall/bob";
export const IMPLICIT_ACCEPT_POLICY = "policy.baton-demo.implicit-accept-2m.v1";

export const implicitAccept: Scenario = {
  name: "implicit-accept",
  title: "Implicit accept after a policy timeout",
  description:
    "Some rotations are routine enough that silence means yes. The session is bound to a policy whose " +
    "acceptance.implicit_accept_timeout_ms is two minutes. Alice offers the pager to Bob, who never answers. Committing " +
    "right away is refused (no offer has been answered), but two minutes later by the envelope clocks the runtime counts " +
    "the offer as accepted and the commitment succeeds. The timing uses envelope timestamps, so the demo skips the wait; " +
    "as in the reference runtime, no synthetic accept appears in the history.",
  actors: [
    { id: ALICE, role: "outgoing on-call" },
    { id: BOB, role: "incoming on-call, does not answer" },
  ],
  policies: [
    buildHandoffPolicy({
      policyId: IMPLICIT_ACCEPT_POLICY,
      description: "Baton demo: an offer unanswered for 2 minutes counts as accepted",
      implicitAcceptTimeoutMs: 120_000,
    }),
  ],
  steps: [
    {
      actor: ALICE,
      action: "start",
      args: {
        mode: "handoff",
        intent: "Routine payments on-call rotation",
        participants: [ALICE, BOB],
        ttlMs: 3_600_000,
        policy: IMPLICIT_ACCEPT_POLICY,
      },
    },
    { actor: ALICE, action: "offer", args: { handoffId: "h1", to: BOB, scope: "payments-api secondary on-call" } },
    { actor: ALICE, action: "context", args: { handoffId: "h1", file: "payments-oncall.md" } },
    {
      actor: ALICE,
      action: "commit",
      args: { action: "handoff.accepted", reason: "Bob did not object" },
      expect: { error: "INVALID_ENVELOPE" },
      say: "Alice tries to commit at once; Bob has not answered and the timeout has not passed",
    },
    { actor: ALICE, action: "wait", args: { ms: 125_000 }, say: "Two minutes pass without an answer from Bob" },
    {
      actor: ALICE,
      action: "commit",
      args: { action: "handoff.accepted", reason: "no answer within 2 minutes: implicit accept by policy" },
    },
  ],
  expect: { main: { state: "RESOLVED", phase: "Committed", action: "handoff.accepted", outcomePositive: true, committedBy: ALICE } },
};
