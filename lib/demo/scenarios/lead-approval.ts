import { buildHandoffPolicy } from "@/lib/agent/policy";
import type { Scenario } from "../types";

const ALICE = "agent://dba/alice";
const BOB = "agent://dba/bob";
const ERIN = "human://sre-lead/erin";
export const LEAD_APPROVAL_POLICY = "policy.baton-demo.lead-approval.v1";

export const leadApproval: Scenario = {
  name: "lead-approval",
  title: "Rotation that needs the lead's approval",
  description:
    "For the orders database, a rotation only takes effect when the SRE lead signs it off. The session is bound to a " +
    "designated_role policy naming Erin, the lead, as the only commitment authority. Alice offers the rotation, Bob " +
    "accepts, and when Alice tries to commit she is refused with FORBIDDEN: being the initiator is not enough under this " +
    "policy. Erin's commitment is accepted and resolves the session.",
  actors: [
    { id: ALICE, role: "outgoing database on-call" },
    { id: BOB, role: "incoming database on-call" },
    { id: ERIN, role: "SRE lead, approves rotations" },
  ],
  policies: [
    buildHandoffPolicy({
      policyId: LEAD_APPROVAL_POLICY,
      description: "Baton demo: only the SRE lead may commit a rotation",
      commitment: { authority: "designated_role", designatedRoles: [ERIN] },
    }),
  ],
  steps: [
    {
      actor: ALICE,
      action: "start",
      args: {
        mode: "handoff",
        intent: "orders-pg on-call rotation (lead approval required)",
        participants: [ALICE, BOB, ERIN],
        ttlMs: 3_600_000,
        policy: LEAD_APPROVAL_POLICY,
      },
    },
    { actor: ALICE, action: "offer", args: { handoffId: "h1", to: BOB, scope: "orders-pg primary on-call" } },
    { actor: ALICE, action: "context", args: { handoffId: "h1", file: "db-oncall.md" } },
    { actor: BOB, action: "accept", args: { handoffId: "h1", reason: "replication and backups checked" } },
    {
      actor: ALICE,
      action: "commit",
      args: { action: "handoff.accepted", reason: "Bob takes orders-pg" },
      expect: { error: "FORBIDDEN" },
      say: "Alice tries to commit the rotation herself",
    },
    {
      actor: ERIN,
      action: "commit",
      args: { action: "handoff.accepted", reason: "approved: Bob owns orders-pg this week", authorityScope: "sre-lead approval" },
    },
  ],
  expect: { main: { state: "RESOLVED", phase: "Committed", action: "handoff.accepted", outcomePositive: true, committedBy: ERIN } },
};
