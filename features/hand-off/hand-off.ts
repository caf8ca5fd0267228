// "Hand off…" as one attempt of three messages: SessionStart, the handoff
// Offer, then the runbook as Context, sent in that order through the
// ActionService as the signed-in person. Pure bookkeeping plus one async
// runner over a sender (the ActionService client in the browser and in the
// integration test; a double in unit tests).
//
// Idempotency: every id is fixed when the attempt starts. The attempt id is a
// UUID v4; each step's message_id is that UUID with its last byte XOR-ed with
// the step's number (still a valid v4 UUID, distinct per step). The console
// derives the session id from the SessionStart's message_id
// (lib/gateway/actions/start.ts) and the handoff_id from the Offer's, and the
// Context names that handoff_id. Retrying the attempt therefore re-sends the
// very same envelopes, which the runtime answers as duplicates (PROTOCOL.md
// §2.5: ok, duplicate=true, nothing appended) and the console answers from
// the session's history: one click never makes two sessions or two offers.

import { create } from "@bufbuild/protobuf";
import { ActionResultSchema, EscalationStepKind, type ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import type { EscalationStepInput } from "@/lib/actions/rules";
import type { StartFields } from "@/lib/client/action-forms";
import { isCsrfRefusal, outcomeOfError, outcomeOfResult, outcomeSentence, type ActionOutcome } from "@/lib/views/action-attempt";

export const HAND_OFF_STEPS = ["start", "offer", "context", "escalate"] as const;
export type HandOffStep = (typeof HAND_OFF_STEPS)[number];

const STEP_NUMBER: Readonly<Record<HandOffStep, number>> = { start: 1, offer: 2, context: 3, escalate: 4 };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The message_id of one step of an attempt: the attempt's UUID with its last byte XOR-ed with the step number. */
export function stepMessageId(attemptId: string, step: HandOffStep): string {
  const id = attemptId.toLowerCase();
  if (!UUID.test(id)) throw new Error(`a hand-off attempt id must be a UUID v4, got "${attemptId}"`);
  const last = parseInt(id.slice(-2), 16) ^ STEP_NUMBER[step];
  return `${id.slice(0, -2)}${last.toString(16).padStart(2, "0")}`;
}

/** What one attempt sends. Fixed for the attempt's life. */
export interface HandOffPlan {
  attemptId: string;
  start: StartFields;
  offer: { target: string; scope: string; reason: string };
  /** Markdown; "" sends no Context (two steps). */
  runbook: string;
  /** An escalation chain set up last (StartEscalation); absent or empty: none. */
  escalation?: readonly EscalationStepInput[];
}

export function stepsOf(plan: HandOffPlan): HandOffStep[] {
  const steps: HandOffStep[] = plan.runbook === "" ? ["start", "offer"] : ["start", "offer", "context"];
  if ((plan.escalation ?? []).length > 0) steps.push("escalate");
  return steps;
}

/** What the ActionService must offer the runner (the generated client satisfies it). */
export interface HandOffSender {
  startSession(req: StartFields & { messageId: string }): Promise<ActionResult>;
  offer(req: { sessionId: string; messageId: string; target: string; scope: string; reason: string }): Promise<ActionResult>;
  attachContext(req: {
    sessionId: string;
    messageId: string;
    handoffId: string;
    content: { case: "markdown"; value: string };
  }): Promise<ActionResult>;
  startEscalation(req: {
    sessionId: string;
    messageId: string;
    steps: { kind: EscalationStepKind; afterMinutes: number; participants: string[] }[];
  }): Promise<{ originSessionId: string }>;
}

export interface HandOffProgress {
  attemptId: string;
  /** Known once SessionStart was accepted. */
  sessionId: string;
  /** Steps the runtime accepted (duplicates included), in order. */
  done: HandOffStep[];
  /** Steps that were already accepted before (a retry re-sent them and nothing happened twice). */
  duplicates: HandOffStep[];
  /** The step that stopped the attempt, with why. */
  failed?: { step: HandOffStep; outcome: ActionOutcome };
}

export function newProgress(attemptId: string): HandOffProgress {
  return { attemptId, sessionId: "", done: [], duplicates: [] };
}

export function isComplete(plan: HandOffPlan, p: HandOffProgress): boolean {
  return stepsOf(plan).every((s) => p.done.includes(s));
}

/** Something was sent, something was not: the dialog offers to finish. */
export function isPartial(plan: HandOffPlan, p: HandOffProgress): boolean {
  return p.done.length > 0 && !isComplete(plan, p);
}

function send(plan: HandOffPlan, step: HandOffStep, sessionId: string, sender: HandOffSender): Promise<ActionResult> {
  const messageId = stepMessageId(plan.attemptId, step);
  switch (step) {
    case "start":
      return sender.startSession({ ...plan.start, messageId });
    case "offer":
      return sender.offer({ sessionId, messageId, ...plan.offer });
    case "context":
      return sender.attachContext({
        sessionId,
        messageId,
        handoffId: stepMessageId(plan.attemptId, "offer"),
        content: { case: "markdown", value: plan.runbook },
      });
    case "escalate":
      // Idempotent on the server: the same chain again answers the one kept.
      return sender
        .startEscalation({
          sessionId,
          messageId,
          steps: (plan.escalation ?? []).map((s) => ({
            kind: s.kind === "notify" ? EscalationStepKind.NOTIFY : EscalationStepKind.REOFFER,
            afterMinutes: s.afterMinutes,
            participants: [...s.participants],
          })),
        })
        .then((e) => create(ActionResultSchema, { ok: true, sessionId: e.originSessionId, messageId }));
  }
}

async function outcomeOf(call: () => Promise<ActionResult>): Promise<ActionOutcome> {
  try {
    return outcomeOfResult(await call());
  } catch (e) {
    return outcomeOfError(e);
  }
}

export interface RunOptions {
  /** A CSRF refusal: refresh the token, then the step is tried once more with the same id. */
  refreshCsrf?: () => Promise<void>;
  /** Told before each step is sent (for a live "Sending the offer…" line). */
  onStep?: (step: HandOffStep) => void;
}

/**
 * Send what `progress` has not done yet, in order, stopping at the first
 * step that is not accepted. Steps already done are not sent again.
 */
export async function runHandOff(
  plan: HandOffPlan,
  progress: HandOffProgress,
  sender: HandOffSender,
  options: RunOptions = {},
): Promise<HandOffProgress> {
  if (progress.attemptId !== plan.attemptId) throw new Error("this progress belongs to another hand-off attempt");
  let p: HandOffProgress = { ...progress, done: [...progress.done], duplicates: [...progress.duplicates] };
  delete p.failed;
  for (const step of stepsOf(plan)) {
    if (p.done.includes(step)) continue;
    options.onStep?.(step);
    const call = () => send(plan, step, p.sessionId, sender);
    let outcome = await outcomeOf(call);
    if (isCsrfRefusal(outcome) && options.refreshCsrf) {
      await options.refreshCsrf();
      outcome = await outcomeOf(call);
    }
    if (outcome.kind !== "ok") return { ...p, failed: { step, outcome } };
    p = {
      ...p,
      ...(step === "start" ? { sessionId: outcome.result.sessionId } : {}),
      done: [...p.done, step],
      duplicates: outcome.duplicate ? [...p.duplicates, step] : p.duplicates,
    };
  }
  return p;
}

const DONE: Readonly<Record<HandOffStep, string>> = {
  start: "Session started",
  offer: "Offer sent",
  context: "Runbook attached",
  escalate: "Escalation set up",
};
const NOT_DONE: Readonly<Record<HandOffStep, string>> = {
  start: "Session not started",
  offer: "Offer not sent",
  context: "Runbook not attached",
  escalate: "Escalation not set up",
};

/** Each step's line, e.g. ["Session started.", "Offer sent.", "Runbook not attached: <reason>"]. */
export function progressLines(
  plan: HandOffPlan,
  p: HandOffProgress,
): { step: HandOffStep; state: "done" | "failed" | "waiting"; text: string }[] {
  return stepsOf(plan).map((step) => {
    if (p.done.includes(step)) return { step, state: "done", text: `${DONE[step]}.` };
    if (p.failed?.step === step)
      return { step, state: "failed", text: `${NOT_DONE[step]}: ${outcomeSentence(p.failed.outcome, DONE[step])}` };
    return { step, state: "waiting", text: `${NOT_DONE[step]} yet.` };
  });
}

/** The whole outcome in one sentence, for the announcer and the result line. */
export function progressSentence(plan: HandOffPlan, p: HandOffProgress, targetName: string): string {
  if (isComplete(plan, p)) {
    const dup = p.duplicates.length === stepsOf(plan).length ? " (it had already gone through; nothing was sent twice)" : "";
    return plan.runbook === ""
      ? `Handed off to ${targetName}: offer sent${dup}.`
      : `Handed off to ${targetName}: offer sent with the runbook${dup}.`;
  }
  const lines = progressLines(plan, p).filter((l) => l.state !== "waiting" || p.done.length > 0);
  return lines.map((l) => l.text).join(" ");
}
