import type { Scenario } from "../types";

const PLANNER = "agent://billing/planner";
const WORKER = "agent://billing/worker-7";

export const taskProgress: Scenario = {
  name: "task-progress",
  title: "Task delegation with progress updates",
  description:
    "A planning agent delegates one bounded job, backfilling a month of invoices, to a worker agent in a Task session. " +
    "The worker accepts, reports progress at 30% and 70%, then completes with a summary and a JSON output. The planner " +
    "commits task.completed. Progress lives in the task's history, so anyone watching sees the same bar move.",
  actors: [
    { id: PLANNER, role: "planning agent (requester)" },
    { id: WORKER, role: "worker agent (assignee)" },
  ],
  steps: [
    {
      actor: PLANNER,
      action: "start",
      args: { mode: "task", intent: "Backfill March invoices after the tax-rate fix", participants: [PLANNER, WORKER], ttlMs: 3_600_000 },
    },
    {
      actor: PLANNER,
      action: "request",
      args: {
        taskId: "backfill-2025-03",
        title: "Backfill March invoices",
        instructions: "Recompute VAT for every March invoice with the corrected rate table; do not email customers.",
        to: WORKER,
        input: { month: "2025-03", rateTable: "vat-2025-03-fixed" },
      },
    },
    { actor: WORKER, action: "accept", args: { taskId: "backfill-2025-03", reason: "capacity available" } },
    {
      actor: WORKER,
      action: "update",
      args: { taskId: "backfill-2025-03", progress: 0.3, message: "invoices 1–4,000 of 13,200 recomputed" },
    },
    { actor: WORKER, action: "update", args: { taskId: "backfill-2025-03", progress: 0.7, message: "9,240 of 13,200 recomputed" } },
    {
      actor: WORKER,
      action: "complete",
      args: {
        taskId: "backfill-2025-03",
        summary: "13,200 invoices recomputed, 312 amounts changed",
        output: { invoices: 13200, changed: 312, totalDeltaEur: -1840.55 },
      },
    },
    { actor: PLANNER, action: "commit", args: { action: "task.completed", reason: "output checked against the ledger" } },
  ],
  expect: { main: { state: "RESOLVED", phase: "Committed", action: "task.completed", outcomePositive: true, committedBy: PLANNER } },
};
