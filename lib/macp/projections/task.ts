// Task projection (PROTOCOL.md §5.7): a pure, immutable reducer over a
// session's accepted envelopes, using the SDK's phase and status vocabulary.
// Messages the runtime would have rejected (a second TaskRequest, a task_id
// mismatch, anything after a terminal report) are ignored.
//
// Every change goes through a Draft (see draft.ts): `reduceTask` passes none,
// so it copies what it changes as before; a batch fold passes one so that the
// lists growing per event (updates, rejections) are appended to in place
// instead of being copied per event.

import { CORE_TYPES, TASK_MODE, TASK_TYPES } from "@/lib/macp/constants";
import {
  TaskAcceptPayloadSchema,
  TaskCompletePayloadSchema,
  TaskFailPayloadSchema,
  TaskRejectPayloadSchema,
  TaskRequestPayloadSchema,
  TaskUpdatePayloadSchema,
} from "@/lib/gen/macp/modes/task/v1/task_pb";
import { decodeAs } from "@/lib/macp/payloads";
import { appended, Draft, writable } from "@/lib/macp/projections/draft";
import { commitmentFromEvent, eventTimeMs, type CommitmentRecord, type SessionEvent } from "@/lib/macp/projections/types";

export type TaskPhase = "Pending" | "Requested" | "InProgress" | "Completed" | "Failed" | "Committed";
export type TaskStatus = "requested" | "accepted" | "rejected" | "in_progress" | "completed" | "failed";

export interface TaskRejection {
  taskId: string;
  /** The rejecting participant (payload assignee, or the sender when empty). */
  assignee: string;
  reason: string;
  sender: string;
  timestampMs: number;
  messageId: string;
}

export interface TaskUpdateRecord {
  status: string;
  progress: number;
  message: string;
  partialOutput: Uint8Array;
  sender: string;
  timestampMs: number;
  messageId: string;
  sequence?: number;
}

interface TerminalBase {
  assignee: string;
  sender: string;
  timestampMs: number;
  messageId: string;
}

export type TaskTerminalReport =
  | (TerminalBase & { kind: "complete"; output: Uint8Array; summary: string })
  | (TerminalBase & { kind: "fail"; errorCode: string; reason: string; retryable: boolean });

export interface TaskRecord {
  taskId: string;
  title: string;
  instructions: string;
  /** Empty when any participant other than the requester may take it. */
  requestedAssignee: string;
  input: Uint8Array;
  /** 0 when unset. Stored only, never enforced. */
  deadlineUnixMs: number;
  /** Sender of the TaskRequest (the initiator). */
  requester: string;
  requestedAt: number;
  requestMessageId: string;
  status: TaskStatus;
  activeAssignee?: string;
  rejections: readonly TaskRejection[];
  updates: readonly TaskUpdateRecord[];
  /** 0..1; copied from each TaskUpdate, set to 1 by TaskComplete. */
  latestProgress?: number;
  terminalReport?: TaskTerminalReport;
}

export interface TaskState {
  phase: TaskPhase;
  /** Task mode carries at most one task per session. */
  task?: TaskRecord;
  commitment?: CommitmentRecord;
}

export const initialTaskState: TaskState = Object.freeze({ phase: "Pending" }) as TaskState;

/** Fold one event into the task state. Returns a new object when anything changed. */
export function reduceTask(state: TaskState, event: SessionEvent): TaskState {
  return reduceTaskDraft(state, event, undefined);
}

/**
 * reduceTask within a batch: objects `draft` created earlier in the batch are
 * written in place, anything else is copied on first write. Without a draft
 * this is reduceTask.
 */
export function reduceTaskDraft(state: TaskState, event: SessionEvent, draft: Draft | undefined): TaskState {
  const env = event.envelope;
  if (env.mode !== "" && env.mode !== TASK_MODE) return state;
  switch (env.messageType) {
    case TASK_TYPES.Request:
      return onRequest(state, event, draft);
    case TASK_TYPES.Accept:
      return onAccept(state, event, draft);
    case TASK_TYPES.Reject:
      return onReject(state, event, draft);
    case TASK_TYPES.Update:
      return onUpdate(state, event, draft);
    case TASK_TYPES.Complete:
      return onComplete(state, event, draft);
    case TASK_TYPES.Fail:
      return onFail(state, event, draft);
    case CORE_TYPES.Commitment:
      return onCommitment(state, event, draft);
    default:
      return state;
  }
}

/** Fold a list of events from the initial state (in one batch: linear in the number of events). */
export function taskFromEvents(events: readonly SessionEvent[]): TaskState {
  const draft = new Draft();
  let state = initialTaskState;
  for (const event of events) state = reduceTaskDraft(state, event, draft);
  return state;
}

/** `state` (writable) with `task` (writable) in place of its task. */
function withTask(state: TaskState, task: TaskRecord, draft: Draft | undefined): TaskState {
  const next = writable(draft, state);
  next.task = task;
  return next;
}

function nextPhase(state: TaskState, phase: TaskPhase): TaskPhase {
  return state.phase === "Committed" ? "Committed" : phase;
}

/** The task, if the message's task_id matches it. */
function matching(state: TaskState, taskId: string): TaskRecord | undefined {
  return state.task && taskId !== "" && state.task.taskId === taskId ? state.task : undefined;
}

function onRequest(state: TaskState, event: SessionEvent, draft: Draft | undefined): TaskState {
  if (state.task) return state;
  const env = event.envelope;
  const p = decodeAs(TaskRequestPayloadSchema, env.payload);
  if (!p || p.taskId === "") return state;
  const task: TaskRecord = {
    taskId: p.taskId,
    title: p.title,
    instructions: p.instructions,
    requestedAssignee: p.requestedAssignee,
    input: p.input,
    deadlineUnixMs: Number(p.deadlineUnixMs),
    requester: env.sender,
    requestedAt: eventTimeMs(event),
    requestMessageId: env.messageId,
    status: "requested",
    rejections: [],
    updates: [],
  };
  const next = withTask(state, task, draft);
  next.phase = nextPhase(state, "Requested");
  return next;
}

function onAccept(state: TaskState, event: SessionEvent, draft: Draft | undefined): TaskState {
  const env = event.envelope;
  const p = decodeAs(TaskAcceptPayloadSchema, env.payload);
  const task = p && matching(state, p.taskId);
  if (!p || !task || task.activeAssignee !== undefined || task.terminalReport) return state;
  const assignee = p.assignee !== "" ? p.assignee : env.sender;
  const updated = writable(draft, task);
  updated.status = "accepted";
  updated.activeAssignee = assignee;
  const next = withTask(state, updated, draft);
  next.phase = nextPhase(state, "InProgress");
  return next;
}

function onReject(state: TaskState, event: SessionEvent, draft: Draft | undefined): TaskState {
  const env = event.envelope;
  const p = decodeAs(TaskRejectPayloadSchema, env.payload);
  const task = p && matching(state, p.taskId);
  if (!p || !task || task.terminalReport) return state;
  const assignee = p.assignee !== "" ? p.assignee : env.sender;
  const rejection: TaskRejection = {
    taskId: p.taskId,
    assignee,
    reason: p.reason,
    sender: env.sender,
    timestampMs: eventTimeMs(event),
    messageId: env.messageId,
  };
  const updated = writable(draft, task);
  updated.status = "rejected";
  updated.rejections = appended(draft, task.rejections, rejection);
  // An active assignee giving the task back (policy permitting) clears the assignment.
  if (task.activeAssignee !== undefined && task.activeAssignee === env.sender) delete updated.activeAssignee;
  return withTask(state, updated, draft);
}

function onUpdate(state: TaskState, event: SessionEvent, draft: Draft | undefined): TaskState {
  const env = event.envelope;
  const p = decodeAs(TaskUpdatePayloadSchema, env.payload);
  const task = p && matching(state, p.taskId);
  if (!p || !task || task.terminalReport) return state;
  const update: TaskUpdateRecord = {
    status: p.status,
    progress: p.progress,
    message: p.message,
    partialOutput: p.partialOutput,
    sender: env.sender,
    timestampMs: eventTimeMs(event),
    messageId: env.messageId,
  };
  if (event.sequence !== undefined) update.sequence = event.sequence;
  const updated = writable(draft, task);
  updated.status = "in_progress";
  updated.updates = appended(draft, task.updates, update);
  updated.latestProgress = clampProgress(p.progress);
  return withTask(state, updated, draft);
}

function onComplete(state: TaskState, event: SessionEvent, draft: Draft | undefined): TaskState {
  const env = event.envelope;
  const p = decodeAs(TaskCompletePayloadSchema, env.payload);
  const task = p && matching(state, p.taskId);
  if (!p || !task || task.terminalReport) return state;
  const report: TaskTerminalReport = {
    kind: "complete",
    assignee: p.assignee !== "" ? p.assignee : env.sender,
    output: p.output,
    summary: p.summary,
    sender: env.sender,
    timestampMs: eventTimeMs(event),
    messageId: env.messageId,
  };
  return withTerminalReport(state, task, report, draft);
}

function onFail(state: TaskState, event: SessionEvent, draft: Draft | undefined): TaskState {
  const env = event.envelope;
  const p = decodeAs(TaskFailPayloadSchema, env.payload);
  const task = p && matching(state, p.taskId);
  if (!p || !task || task.terminalReport) return state;
  const report: TaskTerminalReport = {
    kind: "fail",
    assignee: p.assignee !== "" ? p.assignee : env.sender,
    errorCode: p.errorCode,
    reason: p.reason,
    retryable: p.retryable,
    sender: env.sender,
    timestampMs: eventTimeMs(event),
    messageId: env.messageId,
  };
  return withTerminalReport(state, task, report, draft);
}

/** The task's terminal report; status, progress and phase follow from its kind. */
function withTerminalReport(state: TaskState, task: TaskRecord, report: TaskTerminalReport, draft: Draft | undefined): TaskState {
  const complete = report.kind === "complete";
  const updated = writable(draft, task);
  updated.status = complete ? "completed" : "failed";
  if (complete) updated.latestProgress = 1;
  updated.terminalReport = report;
  const next = withTask(state, updated, draft);
  next.phase = nextPhase(state, complete ? "Completed" : "Failed");
  return next;
}

function onCommitment(state: TaskState, event: SessionEvent, draft: Draft | undefined): TaskState {
  if (state.commitment) return state;
  const commitment = commitmentFromEvent(event);
  if (!commitment) return state;
  const next = writable(draft, state);
  next.phase = "Committed";
  next.commitment = commitment;
  return next;
}

function clampProgress(n: number): number {
  if (!Number.isFinite(n)) return 0;
  return Math.min(1, Math.max(0, n));
}

// ---------------------------------------------------------------------------
// Helpers (SDK names). `taskId`, when given, must match the session's task.

function taskOf(state: TaskState, taskId?: string): TaskRecord | undefined {
  if (!state.task) return undefined;
  return taskId === undefined || state.task.taskId === taskId ? state.task : undefined;
}

const ACTIVE_STATUSES: ReadonlySet<TaskStatus> = new Set<TaskStatus>(["requested", "accepted", "in_progress"]);

/** Tasks in `requested`, `accepted` or `in_progress` (0 or 1 in Task mode). */
export function activeTasks(state: TaskState): TaskRecord[] {
  return state.task && ACTIVE_STATUSES.has(state.task.status) ? [state.task] : [];
}

/** Whether an assignee currently holds the task (accepted and not given back). */
export function isAccepted(state: TaskState, taskId?: string): boolean {
  return taskOf(state, taskId)?.activeAssignee !== undefined;
}

export function isCompleted(state: TaskState, taskId?: string): boolean {
  return taskOf(state, taskId)?.terminalReport?.kind === "complete";
}

/** Alias of `isCompleted` (the SDK name). */
export const isComplete = isCompleted;

export function isFailed(state: TaskState, taskId?: string): boolean {
  return taskOf(state, taskId)?.terminalReport?.kind === "fail";
}

/** True when the task failed with `retryable: true`. */
export function isRetryable(state: TaskState, taskId?: string): boolean {
  const report = taskOf(state, taskId)?.terminalReport;
  return report?.kind === "fail" && report.retryable;
}

/** Progress 0..1 of the task, 0 when nothing was reported. */
export function progressOf(state: TaskState, taskId?: string): number {
  return taskOf(state, taskId)?.latestProgress ?? 0;
}

/** Latest reported progress, or undefined when no update or completion was seen. */
export function latestProgress(state: TaskState): number | undefined {
  return state.task?.latestProgress;
}

export function terminalReport(state: TaskState): TaskTerminalReport | undefined {
  return state.task?.terminalReport;
}

export function activeAssignee(state: TaskState): string | undefined {
  return state.task?.activeAssignee;
}

export function isCommitted(state: TaskState): boolean {
  return state.commitment !== undefined;
}

/** The commitment's outcome_positive (defaults kept), or undefined before a commitment. */
export function isPositiveOutcome(state: TaskState): boolean | undefined {
  return state.commitment?.outcomePositive;
}
