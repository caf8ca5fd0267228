// Event rows of the Task mode's messages: request, accept, reject, update,
// complete, fail.
import {
  TaskAcceptPayloadSchema,
  TaskCompletePayloadSchema,
  TaskFailPayloadSchema,
  TaskRejectPayloadSchema,
  TaskRequestPayloadSchema,
  TaskUpdatePayloadSchema,
} from "@/lib/gen/macp/modes/task/v1/task_pb";
import { TASK_TYPES } from "@/lib/macp/constants";
import { decodeAs } from "@/lib/macp/payloads";
import { formatPercent } from "@/lib/views/format";
import { nonEmpty, type EventDetails, type PayloadBlob, type RowContext } from "./model";

/** The row of a task message; undefined for another message type. */
export function taskDetails(c: RowContext): EventDetails | undefined {
  const { env, base, actor, who, seq, undecodable } = c;
  switch (env.messageType) {
    case TASK_TYPES.Request: {
      const p = decodeAs(TaskRequestPayloadSchema, env.payload);
      if (!p) return undecodable("Task request");
      const blobs: PayloadBlob[] = p.input.byteLength
        ? [{ label: "Input", contentType: "", bytes: p.input, stem: `task-input-${seq}` }]
        : [];
      const deadline = Number(p.deadlineUnixMs);
      return {
        ...base,
        title: "Task requested",
        icon: "inbox",
        tone: "info",
        summary: `${actor} requested “${p.title || "a task"}” from ${p.requestedAssignee ? who(p.requestedAssignee) : "any participant"}`,
        fields: nonEmpty([
          { label: "Title", value: p.title },
          { label: "Assignee", value: p.requestedAssignee || "any participant", mono: p.requestedAssignee !== "" },
          { label: "Instructions", value: p.instructions },
          { label: "Task id", value: p.taskId, mono: true },
          deadline > 0 && { label: "Deadline", value: new Date(deadline).toISOString() },
        ]),
        blobs,
      };
    }
    case TASK_TYPES.Accept: {
      const p = decodeAs(TaskAcceptPayloadSchema, env.payload);
      if (!p) return undecodable("Task accept");
      return {
        ...base,
        title: "Task accepted",
        icon: "check",
        tone: "success",
        summary: `${p.assignee ? who(p.assignee) : actor} took the task`,
        fields: nonEmpty([{ label: "Task id", value: p.taskId, mono: true }]),
        reason: p.reason,
      };
    }
    case TASK_TYPES.Reject: {
      const p = decodeAs(TaskRejectPayloadSchema, env.payload);
      if (!p) return undecodable("Task reject");
      return {
        ...base,
        title: "Task rejected",
        icon: "x",
        tone: "warning",
        summary: `${p.assignee ? who(p.assignee) : actor} turned the task down`,
        fields: nonEmpty([{ label: "Task id", value: p.taskId, mono: true }]),
        reason: p.reason,
      };
    }
    case TASK_TYPES.Update: {
      const p = decodeAs(TaskUpdatePayloadSchema, env.payload);
      if (!p) return undecodable("Task update");
      const progress = Number.isFinite(p.progress) ? Math.min(1, Math.max(0, p.progress)) : 0;
      return {
        ...base,
        title: "Progress",
        icon: "play",
        tone: "progress",
        summary: `${actor} reported ${formatPercent(progress)}${p.message ? `: ${p.message}` : ""}`,
        fields: nonEmpty([
          { label: "Status", value: p.status },
          { label: "Message", value: p.message },
        ]),
        progress,
        blobs: p.partialOutput.byteLength
          ? [{ label: "Partial output", contentType: "", bytes: p.partialOutput, stem: `partial-output-${seq}` }]
          : [],
      };
    }
    case TASK_TYPES.Complete: {
      const p = decodeAs(TaskCompletePayloadSchema, env.payload);
      if (!p) return undecodable("Task complete");
      return {
        ...base,
        title: "Task completed",
        icon: "check-circle",
        tone: "success",
        summary: `${p.assignee ? who(p.assignee) : actor} completed the task`,
        fields: nonEmpty([{ label: "Summary", value: p.summary }]),
        blobs: p.output.byteLength ? [{ label: "Output", contentType: "", bytes: p.output, stem: `task-output-${seq}` }] : [],
      };
    }
    case TASK_TYPES.Fail: {
      const p = decodeAs(TaskFailPayloadSchema, env.payload);
      if (!p) return undecodable("Task fail");
      return {
        ...base,
        title: "Task failed",
        icon: "alert",
        tone: "danger",
        summary: `${p.assignee ? who(p.assignee) : actor} failed the task${p.errorCode ? ` (${p.errorCode})` : ""}`,
        fields: nonEmpty([
          { label: "Error code", value: p.errorCode, mono: true },
          { label: "Retryable", value: p.retryable ? "yes" : "no" },
        ]),
        reason: p.reason,
      };
    }
  }
  return undefined;
}
