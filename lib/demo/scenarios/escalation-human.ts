import type { Scenario } from "../types";

const BOT = "agent://support/tier1-bot";
const DANA = "human://oncall/dana";

export const escalationHuman: Scenario = {
  name: "escalation-human",
  title: "Escalation from a tier-1 agent to a human on call",
  description:
    "An automated tier-1 support agent hits the limit of what it may do: fixing a checkout outage needs a route change " +
    "only a person with change authority can make. It opens a Handoff with the human on call, offers the incident, and " +
    "attaches its escalation notes. The human answers from the CLI or the console (with --interactive the player waits " +
    "for that answer, otherwise a scripted answer stands in), and the agent commits whatever the human decided.",
  actors: [
    { id: BOT, role: "tier-1 support agent" },
    { id: DANA, role: "human on call (incident commander rotation)" },
  ],
  steps: [
    {
      actor: BOT,
      action: "start",
      args: {
        mode: "handoff",
        intent: "Escalate INC-4821 to the human on call",
        participants: [BOT, DANA],
        ttlMs: 1_800_000,
        contextId: "INC-4821",
      },
    },
    {
      actor: BOT,
      action: "offer",
      args: {
        handoffId: "h1",
        to: DANA,
        scope: "incident INC-4821 (sev-2, checkout failing on eu-gateway-v1)",
        reason: "needs a route change with human change authority",
      },
    },
    {
      actor: BOT,
      action: "context",
      args: { handoffId: "h1", file: "inc-4821-escalation.md" },
      say: "The agent attaches its escalation notes",
    },
    {
      actor: DANA,
      action: "accept",
      args: { handoffId: "h1", reason: "taking INC-4821; switching the route" },
      human: { prompt: "Dana, the human on call, decides whether to take over INC-4821", timeoutMs: 120_000 },
    },
    { actor: BOT, action: "commit", say: "The agent commits the human's decision" },
  ],
  expect: { main: { state: "RESOLVED", phase: "Committed", action: "handoff.accepted", outcomePositive: true, committedBy: BOT } },
};
