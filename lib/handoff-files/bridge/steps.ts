// One bridge step sent to the runtime: the Task-mode envelope (or the cancel)
// that mirrors a v0.1 file's change, as the identity mapping.ts named for it.
// Each step's message_id is fixed, so a resend is acknowledged as a duplicate.
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { TaskSession, type MacpClient } from "@/lib/agent";
import type { HandoffRecord } from "../record";
import { bridgeMessageId, type BridgeStep } from "./mapping";

export interface StepContext {
  sessionId: string;
  /** The session's time to live (start). */
  ttlMs: number;
  /** The commitment's id (commit). */
  commitmentId: string;
  /** The runtime client acting as `identity`. */
  client: (identity: string) => MacpClient;
}

export interface SentStep {
  duplicate: boolean;
  /** The envelope sent (none for a cancel). */
  envelope?: Envelope;
}

/** Send one step; throws what the runtime refused (MacpAckError) or a failed call. */
export async function sendStep(rec: HandoffRecord, step: BridgeStep, c: StepContext): Promise<SentStep> {
  const sid = c.sessionId;
  const messageId = bridgeMessageId(step.kind);
  const session = (identity: string) => new TaskSession(c.client(identity), { sessionId: sid });
  const title = titleOf(rec);
  const contextBytes = Object.keys(rec.context).length ? rec.context : undefined;
  let s: TaskSession | undefined;
  let duplicate = false;
  switch (step.kind) {
    case "start":
      s = session(rec.from_agent);
      duplicate = (
        await s.start({ intent: title, participants: [...step.participants], ttlMs: c.ttlMs, contextId: rec.task_id, messageId })
      ).duplicate;
      break;
    case "request":
      s = session(rec.from_agent);
      duplicate = (
        await s.request({
          taskId: rec.task_id,
          title,
          instructions: rec.description,
          requestedAssignee: step.requestedAssignee,
          ...(contextBytes ? { input: contextBytes } : {}),
          messageId,
        })
      ).duplicate;
      break;
    case "accept":
      s = session(step.as);
      duplicate = (await s.acceptTask({ taskId: rec.task_id, reason: "accepted in the v0.1 file", messageId })).duplicate;
      break;
    case "reject":
      s = session(step.as);
      duplicate = (await s.reject({ taskId: rec.task_id, reason: textOf(rec.context.reason) ?? "rejected in the v0.1 file", messageId }))
        .duplicate;
      break;
    case "complete":
      s = session(step.as);
      duplicate = (
        await s.complete({
          taskId: rec.task_id,
          summary: textOf(rec.context.macp_summary) ?? `completed in the v0.1 file by ${step.as}`,
          ...(contextBytes ? { output: contextBytes } : {}),
          messageId,
        })
      ).duplicate;
      break;
    case "fail":
      s = session(step.as);
      duplicate = (
        await s.fail({
          taskId: rec.task_id,
          errorCode: textOf(rec.context.macp_error_code) ?? "V01_FAILED",
          reason: textOf(rec.context.macp_reason) ?? textOf(rec.context.reason) ?? `failed in the v0.1 file at ${step.as}`,
          retryable: true, // v0.1 lets the offerer re-offer it
          messageId,
        })
      ).duplicate;
      break;
    case "commit":
      s = session(rec.from_agent);
      duplicate = (
        await s.commit({
          action: step.action,
          reason:
            step.action === "task.completed"
              ? `v0.1 handoff ${rec.task_id} completed by ${rec.to_agent}`
              : `v0.1 handoff ${rec.task_id} failed at ${rec.to_agent}`,
          authorityScope: "task",
          commitmentId: c.commitmentId,
          messageId,
        })
      ).duplicate;
      break;
    case "cancel":
      await c.client(rec.from_agent).cancelSession(sid, step.reason);
      break;
  }
  const envelope = s?.lastEnvelope;
  return { duplicate, ...(envelope ? { envelope } : {}) };
}

function textOf(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v : undefined;
}

/** A one-line title from the description (first line, at most 120 characters). */
function titleOf(rec: HandoffRecord): string {
  const line = rec.description.split(/\r?\n/, 1)[0]?.trim() ?? "";
  if (line === "") return `v0.1 handoff ${rec.task_id}`;
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}
