// The task family's in-session actions (request, accept/reject, update,
// complete, fail, commit) as specs for ActionCore.inSession.
import type { SessionView } from "@/lib/macp/projections/session";
import { CORE_TYPES, TASK_TYPES } from "@/lib/macp/constants";
import type {
  TaskCommitInput,
  TaskCompleteInput,
  TaskFailInput,
  TaskRequestInput,
  TaskRespondInput,
  TaskUpdateInput,
} from "../action-input";
import { invalidField } from "../action-input";
import type { SessionActionSpec } from "./core";
import { denied } from "./results";

const utf8 = new TextEncoder();

/** The session's task id, checked against the one the form names (if any). */
function taskIdOf(view: SessionView, given: string): string {
  const task = view.task?.task;
  if (!task) throw denied("No task has been requested yet.", "state");
  if (given !== "" && given !== task.taskId) throw invalidField("task_id", `is not this session's task (${task.taskId})`);
  return task.taskId;
}

export function taskRequestSpec(input: TaskRequestInput): SessionActionSpec {
  return {
    action: "taskRequest",
    messageType: TASK_TYPES.Request,
    sizeField: "input_json",
    decideExtra: () => ({ task: { requestedAssignee: input.assignee } }),
    build: ({ me }) => {
      if (input.assignee === me) throw invalidField("assignee", "you can't request a task from yourself");
      return {
        payload: {
          taskId: input.messageId,
          title: input.title,
          instructions: input.instructions,
          requestedAssignee: input.assignee,
          input: utf8.encode(input.inputJson),
          deadlineUnixMs: BigInt(input.deadlineUnixMs),
        },
        extras: { taskId: input.messageId },
      };
    },
  };
}

export function taskRespondSpec(kind: "taskAccept" | "taskReject", input: TaskRespondInput): SessionActionSpec {
  return {
    action: kind,
    messageType: kind === "taskAccept" ? TASK_TYPES.Accept : TASK_TYPES.Reject,
    sizeField: "reason",
    build: ({ view, me }) => {
      const taskId = taskIdOf(view, input.taskId);
      return { payload: { taskId, assignee: me, reason: input.reason }, extras: { taskId } };
    },
  };
}

export function taskUpdateSpec(input: TaskUpdateInput): SessionActionSpec {
  return {
    action: "taskUpdate",
    messageType: TASK_TYPES.Update,
    sizeField: "message",
    build: ({ view }) => {
      const taskId = taskIdOf(view, input.taskId);
      return { payload: { taskId, status: input.status, progress: input.progress, message: input.message }, extras: { taskId } };
    },
  };
}

export function taskCompleteSpec(input: TaskCompleteInput): SessionActionSpec {
  return {
    action: "taskComplete",
    messageType: TASK_TYPES.Complete,
    sizeField: "output",
    build: ({ view, me }) => {
      const taskId = taskIdOf(view, input.taskId);
      return { payload: { taskId, assignee: me, output: input.output, summary: input.summary }, extras: { taskId } };
    },
  };
}

export function taskFailSpec(input: TaskFailInput): SessionActionSpec {
  return {
    action: "taskFail",
    messageType: TASK_TYPES.Fail,
    sizeField: "reason",
    build: ({ view, me }) => {
      const taskId = taskIdOf(view, input.taskId);
      return {
        payload: { taskId, assignee: me, errorCode: input.errorCode, reason: input.reason, retryable: input.retryable },
        extras: { taskId },
      };
    },
  };
}

export function taskCommitSpec(input: TaskCommitInput): SessionActionSpec {
  return {
    action: "commit",
    messageType: CORE_TYPES.Commitment,
    sizeField: "reason",
    build: ({ loaded, view, nameOf }) => {
      const task = view.task?.task;
      if (!task) throw denied("This isn't a task session; use Commit for handoffs.", "wrong_mode");
      const report = task.terminalReport;
      if (input.positive && report?.kind === "fail") {
        throw invalidField("outcome", "the task failed, so it can only be committed as failed");
      }
      let reason = input.reason;
      if (reason === "" && report) {
        const by = `${nameOf(report.assignee)} (${report.assignee})`;
        reason =
          report.kind === "complete"
            ? report.summary || `Completed by ${by}.`
            : `Failed (${report.errorCode}) by ${by}${report.reason ? `: ${report.reason}` : "."}`;
      }
      if (reason === "") reason = input.positive ? "Task completed." : "Task failed.";
      return {
        payload: {
          commitmentId: input.messageId,
          action: input.positive ? "task.completed" : "task.failed",
          authorityScope: input.authorityScope || task.title || "task",
          reason,
          modeVersion: loaded.meta.modeVersion,
          policyVersion: loaded.meta.policyVersion,
          configurationVersion: loaded.meta.configurationVersion,
          outcomePositive: input.positive,
        },
        extras: { taskId: task.taskId },
      };
    },
  };
}
