// Task mode (PROTOCOL.md §5): one bounded task per session; the requester
// delegates, one participant takes it, reports progress and a terminal
// report, and a Commitment binds the outcome.
import { create } from "@bufbuild/protobuf";
import { MODE_VERSION, TASK_MODE, TASK_TYPES } from "@/lib/macp/constants";
import { ModeDescriptorSchema } from "@/lib/gen/macp/v1/core_pb";
import {
  TaskAcceptPayloadSchema,
  TaskCompletePayloadSchema,
  TaskFailPayloadSchema,
  TaskRejectPayloadSchema,
  TaskRequestPayloadSchema,
  TaskUpdatePayloadSchema,
} from "@/lib/gen/macp/modes/task/v1/task_pb";
import { MacpRejection, policyDenied, reject } from "../errors";
import { checkSchemaVersion, decodeOrReject, type ModeHandler, type SessionContext } from "./types";

export interface TaskState {
  readonly task?: { readonly taskId: string; readonly requestedAssignee: string; readonly requester: string };
  readonly activeAssignee: string;
  readonly rejectedBy: readonly string[];
  readonly updates: number;
  readonly terminal?: { readonly kind: "complete"; readonly hasOutput: boolean } | { readonly kind: "fail" };
}

const TYPES = new Set<string>(Object.values(TASK_TYPES));

function requireTask(state: TaskState, taskId: string): NonNullable<TaskState["task"]> {
  if (!state.task) return reject("INVALID_ENVELOPE", "no task has been requested in this session yet");
  if (taskId === "" || taskId !== state.task.taskId) {
    return reject("INVALID_ENVELOPE", `task_id "${taskId}" does not match the session's task "${state.task.taskId}"`);
  }
  return state.task;
}

/** May `sender` accept or reject a task that has no active assignee? */
function mayRespond(task: NonNullable<TaskState["task"]>, sender: string, ctx: SessionContext): boolean {
  return task.requestedAssignee !== "" ? sender === task.requestedAssignee : sender !== ctx.initiator;
}

export const taskMode: ModeHandler<TaskState> = {
  descriptor: create(ModeDescriptorSchema, {
    mode: TASK_MODE,
    modeVersion: MODE_VERSION,
    title: "Task Mode",
    description: "Bounded delegation of one task with progress updates and a terminal report.",
    determinismClass: "structural-only",
    participantModel: "orchestrated",
    messageTypes: ["SessionStart", "TaskRequest", "TaskAccept", "TaskReject", "TaskUpdate", "TaskComplete", "TaskFail", "Commitment"],
    terminalMessageTypes: ["Commitment"],
    schemaUris: { protobuf: "buf.build/multiagentcoordinationprotocol/macp" },
  }),

  initialState: () => ({ activeAssignee: "", rejectedBy: [], updates: 0 }),

  validateStart(initiator, participants) {
    if (participants.size < 2) return "task sessions need at least 2 participants";
    if (!participants.has(initiator)) return "the initiator must be one of the participants";
    return null;
  },

  knowsType: (t) => TYPES.has(t),

  senderAllowed(type, sender, ctx) {
    if (type === TASK_TYPES.Request) return sender === ctx.initiator;
    return ctx.participants.has(sender);
  },

  apply(state, env, ctx) {
    const sender = env.sender;
    const allowReassign = ctx.policy.rules.assignment.allowReassignmentOnReject;
    switch (env.messageType) {
      case TASK_TYPES.Request: {
        const p = decodeOrReject(TaskRequestPayloadSchema, env.payload, "TaskRequestPayload");
        if (state.task) reject("INVALID_ENVELOPE", "this session already has a task; one TaskRequest per session");
        if (p.taskId.trim() === "") reject("INVALID_ENVELOPE", "task_id must not be empty");
        if (p.requestedAssignee !== "" && !ctx.participants.has(p.requestedAssignee)) {
          reject("INVALID_ENVELOPE", `requested_assignee "${p.requestedAssignee}" is not a declared participant`);
        }
        return { ...state, task: { taskId: p.taskId, requestedAssignee: p.requestedAssignee, requester: sender } };
      }
      case TASK_TYPES.Accept: {
        const p = decodeOrReject(TaskAcceptPayloadSchema, env.payload, "TaskAcceptPayload");
        const task = requireTask(state, p.taskId);
        if (state.activeAssignee !== "") reject("INVALID_ENVELOPE", `the task was already accepted by ${state.activeAssignee}`);
        if (state.rejectedBy.length > 0 && !allowReassign) policyDenied("task was rejected and the policy does not allow reassignment");
        if (p.assignee !== "" && p.assignee !== sender) reject("INVALID_ENVELOPE", "assignee must equal the sender");
        if (!mayRespond(task, sender, ctx)) throw new MacpRejection("FORBIDDEN", "this participant may not accept the task");
        return { ...state, activeAssignee: sender };
      }
      case TASK_TYPES.Reject: {
        const p = decodeOrReject(TaskRejectPayloadSchema, env.payload, "TaskRejectPayload");
        const task = requireTask(state, p.taskId);
        const wasActive = state.activeAssignee !== "" && state.activeAssignee === sender;
        if (wasActive && !allowReassign) policyDenied("the active assignee may not reject under this policy");
        if (state.activeAssignee !== "" && !wasActive) reject("INVALID_ENVELOPE", `the task is assigned to ${state.activeAssignee}`);
        if (p.assignee !== "" && p.assignee !== sender) reject("INVALID_ENVELOPE", "assignee must equal the sender");
        if (state.activeAssignee === "" && !mayRespond(task, sender, ctx)) {
          throw new MacpRejection("FORBIDDEN", "this participant may not reject the task");
        }
        if (state.rejectedBy.includes(sender)) reject("INVALID_ENVELOPE", `${sender} already rejected this task`);
        return { ...state, rejectedBy: [...state.rejectedBy, sender], activeAssignee: wasActive ? "" : state.activeAssignee };
      }
      case TASK_TYPES.Update: {
        const p = decodeOrReject(TaskUpdatePayloadSchema, env.payload, "TaskUpdatePayload");
        requireTask(state, p.taskId);
        if (state.terminal || sender !== state.activeAssignee) {
          throw new MacpRejection(
            "FORBIDDEN",
            state.terminal ? "the task already has a terminal report" : "only the active assignee may report progress",
          );
        }
        return { ...state, updates: state.updates + 1 };
      }
      case TASK_TYPES.Complete:
      case TASK_TYPES.Fail: {
        const complete = env.messageType === TASK_TYPES.Complete;
        const p = complete
          ? decodeOrReject(TaskCompletePayloadSchema, env.payload, "TaskCompletePayload")
          : decodeOrReject(TaskFailPayloadSchema, env.payload, "TaskFailPayload");
        requireTask(state, p.taskId);
        if (state.terminal || sender !== state.activeAssignee) {
          throw new MacpRejection(
            "FORBIDDEN",
            state.terminal ? "the task already has a terminal report" : "only the active assignee may finish the task",
          );
        }
        if (p.assignee !== "" && p.assignee !== sender) reject("INVALID_ENVELOPE", "assignee must equal the sender");
        return {
          ...state,
          terminal: "output" in p ? { kind: "complete", hasOutput: p.output.length > 0 } : { kind: "fail" },
        };
      }
      default:
        return reject("INVALID_ENVELOPE", `unknown task message type ${env.messageType}`);
    }
  },

  commit(state, _env, _commitment, ctx) {
    if (!state.terminal) reject("INVALID_ENVELOPE", "a task can only be committed after TaskComplete or TaskFail");
    if (ctx.policy.rules.completion.requireOutput && !(state.terminal?.kind === "complete" && state.terminal.hasOutput)) {
      policyDenied("the policy requires a TaskComplete with non-empty output");
    }
    const denied = checkSchemaVersion(ctx.policy);
    if (denied) policyDenied(denied);
    return state;
  },
};
