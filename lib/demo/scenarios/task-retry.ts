import type { Scenario } from "../types";

const PLANNER = "agent://billing/planner";
const WORKER7 = "agent://billing/worker-7";
const WORKER9 = "agent://billing/worker-9";

export const taskRetry: Scenario = {
  name: "task-retry",
  title: "Task failure (retryable), then a retry session",
  description:
    "Failure is an outcome too. The worker takes the export job, gets to 40%, then fails with a retryable error when " +
    "the upstream store times out. The planner commits task.failed, a negative outcome that still resolves the session. " +
    "A session carries exactly one task, so the retry is a new Task session, linked to the first one in its intent and " +
    "given to a second worker, which completes it.",
  actors: [
    { id: PLANNER, role: "planning agent (requester)" },
    { id: WORKER7, role: "first worker" },
    { id: WORKER9, role: "second worker (retry)" },
  ],
  steps: [
    {
      actor: PLANNER,
      session: "first",
      action: "start",
      args: { mode: "task", intent: "Export Q1 ledger to the finance warehouse", participants: [PLANNER, WORKER7], ttlMs: 3_600_000 },
    },
    { actor: PLANNER, session: "first", action: "request", args: { taskId: "export-q1", title: "Export Q1 ledger", to: WORKER7 } },
    { actor: WORKER7, session: "first", action: "accept", args: { taskId: "export-q1" } },
    {
      actor: WORKER7,
      session: "first",
      action: "update",
      args: { taskId: "export-q1", progress: 0.4, message: "January and February exported" },
    },
    {
      actor: WORKER7,
      session: "first",
      action: "fail",
      args: { taskId: "export-q1", errorCode: "UPSTREAM_TIMEOUT", reason: "warehouse write timed out after 3 attempts", retryable: true },
    },
    {
      actor: PLANNER,
      session: "first",
      action: "commit",
      args: { action: "task.failed", reason: "retryable failure; retrying in a new session" },
    },
    {
      actor: PLANNER,
      session: "retry",
      action: "start",
      args: { mode: "task", intent: "Retry of {session:first}: export Q1 ledger", participants: [PLANNER, WORKER9], ttlMs: 3_600_000 },
      say: "The planner opens a new session for the retry, pointing back at the failed one",
    },
    {
      actor: PLANNER,
      session: "retry",
      action: "request",
      args: {
        taskId: "export-q1-retry-1",
        title: "Export Q1 ledger (retry)",
        to: WORKER9,
        instructions: "Resume from March; January and February are already exported.",
        input: { previousSession: "{session:first}" },
      },
    },
    { actor: WORKER9, session: "retry", action: "accept", args: { taskId: "export-q1-retry-1" } },
    {
      actor: WORKER9,
      session: "retry",
      action: "update",
      args: { taskId: "export-q1-retry-1", progress: 0.5, message: "March half exported" },
    },
    {
      actor: WORKER9,
      session: "retry",
      action: "complete",
      args: { taskId: "export-q1-retry-1", summary: "Q1 ledger exported (March resumed)", output: { rows: 48211 } },
    },
    { actor: PLANNER, session: "retry", action: "commit", args: { action: "task.completed", reason: "export verified" } },
  ],
  expect: {
    first: { state: "RESOLVED", phase: "Committed", action: "task.failed", outcomePositive: false },
    retry: { state: "RESOLVED", phase: "Committed", action: "task.completed", outcomePositive: true },
  },
};
