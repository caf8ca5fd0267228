// Result mapping shared by every action: the runtime's Ack (or a refusal the
// console makes itself) as an ActionResult, and the errors an action throws
// before anything is sent.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ActionResultSchema, type ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import type { Ack } from "@/lib/gen/macp/v1/envelope_pb";
import { ERROR_EXPLANATIONS, normalizeErrorCode, type MacpErrorCode } from "@/lib/macp/constants";
import type { HandoffRecord } from "@/lib/macp/projections/handoff";
import type { SessionView } from "@/lib/macp/projections/session";

/** Ids an action's result names besides the session and message. */
export type Extras = { handoffId?: string; taskId?: string; policyId?: string };

export interface ResultIds {
  sessionId: string;
  messageId: string;
}

export function explainCode(code: string): string {
  return (ERROR_EXPLANATIONS as Record<string, string | undefined>)[code] ?? "The runtime refused the message.";
}

/** An ActionResult from the runtime's Ack. */
export function resultFromAck(ack: Ack, ids: ResultIds, extras: Extras = {}): ActionResult {
  const base = {
    sessionId: ack.sessionId || ids.sessionId,
    messageId: ack.messageId || ids.messageId,
    sessionState: ack.sessionState,
    acceptedAtUnixMs: ack.acceptedAtUnixMs,
    ...extras,
  };
  if (ack.ok) return create(ActionResultSchema, { ok: true, duplicate: ack.duplicate, ...base });
  const code = normalizeErrorCode(ack.error?.code || "INTERNAL_ERROR");
  return create(ActionResultSchema, {
    ok: false,
    ...base,
    code,
    explanation: explainCode(code),
    message: ack.error?.message ?? "",
  });
}

/** A refusal the console answers itself (no Ack), in the runtime's words. */
export function refused(code: MacpErrorCode, message: string, ids: ResultIds): ActionResult {
  return create(ActionResultSchema, { ok: false, ...ids, code, explanation: explainCode(code), message });
}

/** decide() said no: PermissionDenied with the rule's code for the browser. */
export function denied(reason: string, code: string): ConnectError {
  return new ConnectError(reason, Code.PermissionDenied, { "x-baton-deny": code });
}

/** The newest offer still waiting for an answer. */
export function pendingOffer(view: SessionView): HandoffRecord | undefined {
  const pending = (view.handoff?.offers ?? []).filter((o) => o.status === "offered" || o.status === "context_sent");
  return pending[pending.length - 1];
}

/** The handoff / task ids an already-accepted message refers to. */
export function extrasFromHistory(view: SessionView, messageId: string): Extras {
  for (const o of view.handoff?.offers ?? []) {
    if (o.offerMessageId === messageId || o.responseMessageId === messageId || o.contexts.some((c) => c.messageId === messageId)) {
      return { handoffId: o.handoffId };
    }
  }
  const task = view.task?.task;
  return task ? { taskId: task.taskId } : {};
}
