// Validation of the Task-mode actions: Request, Accept/Reject (Respond),
// Update, Complete, Fail and Commit.
import {
  TaskOutcome,
  type TaskCommitRequest,
  type TaskCompleteRequest,
  type TaskFailRequest,
  type TaskRequestRequest,
  type TaskRespondRequest,
  type TaskUpdateRequest,
} from "@/lib/gen/baton/v1/actions_pb";
import { contractText, invalidField, jsonTextOf, optionalIdOf, participantOf, sessionMessage, type SessionMessageInput } from "./fields";

export interface TaskRequestInput extends SessionMessageInput {
  title: string;
  instructions: string;
  assignee: string;
  inputJson: string;
  deadlineUnixMs: number;
}

export function parseTaskRequest(req: TaskRequestRequest, maxPayloadBytes: number): TaskRequestInput {
  const deadline = req.deadlineUnixMs;
  if (deadline < 0n || deadline > 32_503_680_000_000n)
    throw invalidField("deadline_unix_ms", "must be 0 (none) or a Unix time in milliseconds");
  return {
    ...sessionMessage(req),
    title: contractText("title", req.title),
    instructions: contractText("instructions", req.instructions),
    assignee: participantOf("assignee", req.assignee, false),
    inputJson: jsonTextOf("input_json", req.inputJson, maxPayloadBytes),
    deadlineUnixMs: Number(deadline),
  };
}

export interface TaskRespondInput extends SessionMessageInput {
  taskId: string;
  reason: string;
}

export function parseTaskRespond(req: TaskRespondRequest): TaskRespondInput {
  return {
    ...sessionMessage(req),
    taskId: optionalIdOf("task_id", req.taskId),
    reason: contractText("reason", req.reason),
  };
}

export interface TaskUpdateInput extends SessionMessageInput {
  taskId: string;
  progress: number;
  status: string;
  message: string;
}

export function parseTaskUpdate(req: TaskUpdateRequest): TaskUpdateInput {
  if (!Number.isFinite(req.progress) || req.progress < 0 || req.progress > 1) {
    throw invalidField("progress", "must be a number from 0 to 1");
  }
  const status = contractText("status", req.status, "use letters, digits, '_', '.' or '-', e.g. in_progress") || "in_progress";
  return {
    ...sessionMessage(req),
    taskId: optionalIdOf("task_id", req.taskId),
    progress: req.progress,
    status,
    message: contractText("message", req.message),
  };
}

export interface TaskCompleteInput extends SessionMessageInput {
  taskId: string;
  output: Uint8Array;
  summary: string;
}

export function parseTaskComplete(req: TaskCompleteRequest): TaskCompleteInput {
  return {
    ...sessionMessage(req),
    taskId: optionalIdOf("task_id", req.taskId),
    output: req.output,
    summary: contractText("summary", req.summary),
  };
}

export interface TaskFailInput extends SessionMessageInput {
  taskId: string;
  errorCode: string;
  reason: string;
  retryable: boolean;
}

export function parseTaskFail(req: TaskFailRequest): TaskFailInput {
  const errorCode = contractText("errorCode", req.errorCode, "use letters, digits, '_', '.', ':' or '-', e.g. TIMEOUT");
  return {
    ...sessionMessage(req),
    taskId: optionalIdOf("task_id", req.taskId),
    errorCode,
    reason: contractText("reason", req.reason),
    retryable: req.retryable,
  };
}

export interface TaskCommitInput extends SessionMessageInput {
  positive: boolean;
  authorityScope: string;
  reason: string;
}

export function parseTaskCommit(req: TaskCommitRequest): TaskCommitInput {
  if (req.outcome !== TaskOutcome.COMPLETED && req.outcome !== TaskOutcome.FAILED) {
    throw invalidField("outcome", "choose TASK_OUTCOME_COMPLETED or TASK_OUTCOME_FAILED");
  }
  return {
    ...sessionMessage(req),
    positive: req.outcome === TaskOutcome.COMPLETED,
    authorityScope: contractText("authorityScope", req.authorityScope),
    reason: contractText("reason", req.reason),
  };
}
