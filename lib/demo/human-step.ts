// Interactive human steps: instead of playing a person's scripted accept or
// decline, the player prints how to answer from another terminal (or the
// console), watches the session for their answer, and falls back to the
// script when nobody answers in time.
import type { HandoffProjection, SequencedEnvelope } from "@/lib/agent";
import { linkedController } from "@/lib/base/abort";
import { HANDOFF_TYPES } from "@/lib/macp/constants";
import { decodePayloadToJson } from "@/lib/macp/payloads";
import { describeStep, humanDuration, shortName } from "./narration";
import type { PlayerContext } from "./player-options";
import type { LiveSession } from "./steps";
import type { DemoStep, Scenario } from "./types";

const DEFAULT_HUMAN_TIMEOUT_MS = 120_000;

/**
 * Interactive human step: subscribe to the session and wait for the person
 * to accept or decline the offer, up to the timeout. Returns the envelope,
 * or undefined on timeout (the scripted answer is then played).
 */
export async function waitForHuman(
  ctx: PlayerContext,
  scenario: Scenario,
  step: Extract<DemoStep, { action: "accept" | "decline" }>,
  live: LiveSession,
): Promise<SequencedEnvelope | undefined> {
  const handoffId = step.args?.handoffId ?? (live.projection as HandoffProjection).activeOffer()?.handoffId ?? "h1";
  const timeoutMs = ctx.opts.humanTimeoutMs ?? step.human?.timeoutMs ?? DEFAULT_HUMAN_TIMEOUT_MS;
  const sid = live.sessionId;
  ctx.log(`     ⏳ waiting up to ${humanDuration(timeoutMs)} for ${step.actor} to answer; from another terminal:`);
  ctx.log(`        npx baton --as ${step.actor} handoff accept --session ${sid} --handoff-id ${handoffId}`);
  ctx.log(`        npx baton --as ${step.actor} handoff decline --session ${sid} --handoff-id ${handoffId} --reason "…"`);
  ctx.log(`        (or open the session in the Baton console)`);
  const ac = linkedController(ctx.opts.signal);
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const observer = ctx.clientFor(live.initiator);
  let answer: SequencedEnvelope | undefined;
  try {
    ctx.opts.onHumanPrompt?.({ scenario: scenario.name, sessionId: sid, actor: step.actor, handoffId });
    for await (const ev of observer.subscribe(sid, 0, { signal: ac.signal })) {
      live.projection.apply(ev);
      const env = ev.envelope;
      if ((env.messageType === HANDOFF_TYPES.Accept || env.messageType === HANDOFF_TYPES.Decline) && env.sender === step.actor) {
        const p = decodePayloadToJson(env.mode, env.messageType, env.payload);
        if (p?.handoff_id === handoffId) {
          answer = ev;
          break;
        }
      }
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  if (!answer) {
    if (ctx.opts.signal?.aborted) throw new Error("interrupted while waiting for a person");
    ctx.log(
      `     ⌛ no answer within ${humanDuration(timeoutMs)}; playing the scripted answer for them: ${describeStep(step, live, new Map())}`,
    );
    return undefined;
  }
  const decided = answer.envelope.messageType === HANDOFF_TYPES.Accept ? "accept" : "decline";
  const p = decodePayloadToJson(answer.envelope.mode, answer.envelope.messageType, answer.envelope.payload);
  const reason = typeof p?.reason === "string" && p.reason !== "" ? `: "${p.reason}"` : "";
  ctx.log(`     ✓ ${shortName(step.actor)} answered in person: ${decided}${reason}`);
  if (decided !== step.action) {
    live.deviated = true;
    ctx.log(`     (the script had "${step.action}"; the rest of the scenario follows the person's choice)`);
  }
  return answer;
}
