// One step of a scenario, played: narrate it, keep the scenario clock and the
// live sessions (one session object per actor), hand interactive human steps
// to human-step.ts, send the step through the agent layer (steps.ts), and
// judge the runtime's answer against the step's expectation.
import { HandoffProjection, HandoffSession, MacpError, TaskProjection, TaskSession } from "@/lib/agent";
import { explainError } from "@/lib/agent/errors";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { newSessionId } from "@/lib/macp/ids";
import { waitForHuman } from "./human-step";
import { describeStep, humanDuration } from "./narration";
import type { StepOutcome } from "./outcomes";
import type { PlayerContext } from "./player-options";
import { sendStep, substituteDeep, type LiveSession } from "./steps";
import type { DemoStep, Scenario, StepExpectation } from "./types";

function sessionObject(ctx: PlayerContext, live: LiveSession, actor: string): HandoffSession | TaskSession {
  let obj = live.objects.get(actor);
  if (!obj) {
    const common = { sessionId: live.sessionId, ...(live.policyVersion ? { policyVersion: live.policyVersion } : {}) };
    obj =
      live.mode === "handoff"
        ? new HandoffSession(ctx.clientFor(actor), { ...common, projection: live.projection as HandoffProjection })
        : new TaskSession(ctx.clientFor(actor), { ...common, projection: live.projection as TaskProjection });
    live.objects.set(actor, obj);
  }
  return obj;
}

export async function playStep(
  ctx: PlayerContext,
  scenario: Scenario,
  rawStep: DemoStep,
  index: number,
  sessions: Map<string, LiveSession>,
): Promise<StepOutcome> {
  const step = substituteDeep(rawStep, sessions);
  const alias = step.session ?? "main";
  const expected: StepExpectation = step.expect ?? "ok";
  let live = sessions.get(alias);
  const waitsForPerson =
    (step.action === "accept" || step.action === "decline") && step.human !== undefined && ctx.opts.interactive === true;
  if (waitsForPerson && step.human) ctx.log(`   ▸ ${step.human.prompt}`);
  else ctx.log(`   ▸ ${step.say ?? describeStep(step, live, sessions)}`);
  const outcome: StepOutcome = { index, actor: step.actor, action: step.action, session: alias, expected, result: "ok", matched: true };

  if (step.action === "wait") {
    ctx.advanceClock(step.args.ms);
    ctx.log(`     ⏱ scenario clock +${humanDuration(step.args.ms)} (envelope timestamps move; nobody waits)`);
    return outcome;
  }
  if (step.action === "start") {
    if (live) throw new Error(`step ${index}: session ${alias} was already started`);
    const projection = step.args.mode === "handoff" ? new HandoffProjection() : new TaskProjection();
    live = {
      alias,
      sessionId: newSessionId(),
      mode: step.args.mode,
      initiator: step.actor,
      projection,
      objects: new Map(),
      deviated: false,
      ...(step.args.policy ? { policyVersion: step.args.policy } : {}),
    };
    sessions.set(alias, live);
  }
  if (!live) throw new Error(`step ${index}: session ${alias} has not been started`);

  if (waitsForPerson && (step.action === "accept" || step.action === "decline") && live.mode === "handoff") {
    const answered = await waitForHuman(ctx, scenario, step, live);
    if (answered) {
      outcome.answeredBy = "human";
      outcome.messageId = answered.envelope.messageId;
      return outcome;
    }
    outcome.answeredBy = "script";
  }

  const obj = sessionObject(ctx, live, step.actor);
  try {
    const ack = await sendStep(step, obj, live, {
      timestampMs: ctx.now(),
      signal: ctx.opts.signal,
      runbookDir: ctx.opts.runbookDir,
      log: ctx.log,
    });
    outcome.messageId = ack.messageId;
    outcome.result = "ok";
    outcome.matched = expected === "ok";
    if (outcome.matched)
      ctx.log(
        `     ✓ accepted · session ${live.sessionId.slice(0, 8)}… is ${SessionState[ack.sessionState]?.replace("SESSION_STATE_", "")}`,
      );
    else ctx.log(`     ✗ accepted, but the script expected ${typeof expected === "object" ? expected.error : "acceptance"}`);
    stepPlayed(ctx, index, live.sessionId, step, "ok", "", "", outcome.matched);
  } catch (e) {
    if (!(e instanceof MacpError)) throw e;
    outcome.result = e.code;
    outcome.messageId = obj.lastEnvelope?.messageId;
    outcome.matched = typeof expected === "object" && expected.error === e.code;
    const why = explainError(e.code) ?? "";
    if (outcome.matched) ctx.log(`     ✓ refused as expected: ${e.code}: ${why} (runtime: ${e.runtimeMessage})`);
    else ctx.log(`     ✗ refused: ${e.code}: ${why} (runtime: ${e.runtimeMessage})`);
    stepPlayed(ctx, index, live.sessionId, step, e.code, e.runtimeMessage, why, outcome.matched);
  }
  return outcome;
}

function stepPlayed(
  ctx: PlayerContext,
  index: number,
  sessionId: string,
  step: DemoStep,
  result: string,
  runtimeMessage: string,
  explanation: string,
  asExpected: boolean,
): void {
  ctx.opts.onStepPlayed?.({
    index,
    sessionId,
    actor: step.actor,
    action: step.action,
    result,
    runtimeMessage,
    explanation,
    asExpected,
    atMs: ctx.now(),
  });
}
