// The one generic demo player: plays any declarative Scenario against a MACP
// runtime through the agent layer (one MacpClient per actor identity, one
// HandoffSession/TaskSession object per actor and session sharing a single
// projection), narrating each step, checking each step's expected result,
// and reading every session back over a passive subscription at the end.
//
// Time: pauses are scaled by `speed` ("instant" skips them). Scenario time
// ("wait" steps) moves envelope timestamps forward instead of sleeping, so a
// two-minute policy timeout costs nothing in tests.
//
// The pieces: steps.ts (each step action as the agent layer's call),
// narration.ts (what is printed), outcomes.ts (results and the expectation
// check). This file is the runner: clients, the scenario clock, the step
// loop, interactive human steps and the read-back.

import { Code, ConnectError } from "@connectrpc/connect";
import {
  Auth,
  HandoffProjection,
  HandoffSession,
  MacpClient,
  MacpError,
  sameRules,
  TaskProjection,
  TaskSession,
  type PolicyInit,
  type SequencedEnvelope,
} from "@/lib/agent";
import { explainError, MacpUsageError } from "@/lib/agent/errors";
import { sleep, linkedController } from "@/lib/base/abort";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_TYPES } from "@/lib/macp/constants";
import { newSessionId } from "@/lib/macp/ids";
import { decodePayloadToJson } from "@/lib/macp/payloads";
import { describeOutcome, describeStep, humanDuration, shortName, wrapText } from "./narration";
import { checkExpectations, type ScenarioResult, type SessionOutcome, type StepOutcome } from "./outcomes";
import { sendStep, substituteDeep, type LiveSession } from "./steps";
import type { DemoStep, Scenario, StepExpectation } from "./types";
import type { DemoControl } from "./control";

export type { ScenarioResult, SessionOutcome, StepOutcome } from "./outcomes";
export { shortName } from "./narration";
export { RUNBOOK_DIR } from "./steps";

const DEFAULT_PAUSE_MS = 1_200;
const DEFAULT_HUMAN_TIMEOUT_MS = 120_000;

export interface PlayerOptions {
  /** Runtime address (host:port or URL). */
  address: string;
  tls?: boolean;
  caPath?: string;
  /** identity → bearer token, for runtimes with token auth; dev identities otherwise. */
  tokens?: Readonly<Record<string, string>>;
  /** 1 = human pace, 2 = twice as fast, "instant" = no pauses. Default 1. */
  speed?: number | "instant";
  /** Wait for real people on `human` steps instead of playing their scripted answer. */
  interactive?: boolean;
  /** Overrides each human step's timeout. */
  humanTimeoutMs?: number;
  /** Narration sink (one line per call, no trailing newline). Default: stdout. */
  log?: (line: string) => void;
  signal?: AbortSignal;
  /** Where `context.file` names are looked up. */
  runbookDir?: string;
  /** Called when the player starts waiting for a person (tests answer from here). */
  onHumanPrompt?: (info: { scenario: string; sessionId: string; actor: string; handoffId: string }) => void;
  /** Called when a scenario's session has been started (the runtime accepted its SessionStart). */
  onSessionStarted?: (info: { scenario: string; alias: string; sessionId: string }) => void;
  /** Pause, step and pace from outside (the console's demo runner); its pace replaces `speed`. */
  control?: DemoControl;
  /** Called after each step with what the runtime answered (refusals included); `atMs` is on the scenario clock envelope timestamps use. */
  onStepPlayed?: (info: StepPlayed) => void;
}

/** One step as played, for onStepPlayed. */
export interface StepPlayed {
  index: number;
  sessionId: string;
  actor: string;
  action: string;
  /** "ok" or the MACP error code. */
  result: string;
  runtimeMessage: string;
  explanation: string;
  asExpected: boolean;
  atMs: number;
}

export class DemoPlayer {
  private readonly clients = new Map<string, MacpClient>();
  private readonly log: (line: string) => void;
  private readonly speed: number;
  private skewMs = 0;

  constructor(private readonly opts: PlayerOptions) {
    this.log = opts.log ?? ((line) => process.stdout.write(`${line}\n`));
    const s = opts.speed ?? 1;
    if (s !== "instant" && !(s > 0)) throw new MacpUsageError(`speed must be a positive number or "instant", got ${s}`);
    this.speed = s === "instant" ? Number.POSITIVE_INFINITY : s;
  }

  /** Scenario clock: wall time plus the time "wait" steps skipped. */
  private now(): number {
    return Date.now() + this.skewMs;
  }

  private async pause(ms: number): Promise<void> {
    const control = this.opts.control;
    if (control) {
      const wait = control.scaled(ms);
      if (wait > 0) await sleep(wait, this.opts.signal);
      return;
    }
    if (!Number.isFinite(this.speed)) return;
    await sleep(ms / this.speed, this.opts.signal);
  }

  private clientFor(actor: string): MacpClient {
    let c = this.clients.get(actor);
    if (!c) {
      const token = this.opts.tokens?.[actor];
      c = new MacpClient({
        address: this.opts.address,
        auth: token !== undefined ? Auth.bearer(token, { expectedSender: actor }) : Auth.devAgent(actor),
        tls: this.opts.tls ?? false,
        ...(this.opts.caPath !== undefined ? { caPath: this.opts.caPath } : {}),
        clientName: "baton-demo",
      });
      this.clients.set(actor, c);
    }
    return c;
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  /** Play scenarios one after another. */
  async playAll(scenarios: readonly Scenario[]): Promise<ScenarioResult[]> {
    const out: ScenarioResult[] = [];
    for (const [i, s] of scenarios.entries()) {
      if (this.opts.signal?.aborted) break;
      out.push(await this.play(s, { index: i + 1, of: scenarios.length }));
      if (i < scenarios.length - 1) this.log("");
    }
    return out;
  }

  async play(scenario: Scenario, position?: { index: number; of: number }): Promise<ScenarioResult> {
    const t0 = Date.now();
    this.skewMs = 0;
    const problems: string[] = [];
    const steps: StepOutcome[] = [];
    const sessions = new Map<string, LiveSession>();
    const label = position ? `${position.index}/${position.of}  ` : "";
    this.log(`━━ ${label}${scenario.title}  (${scenario.name})`);
    for (const line of wrapText(scenario.description, "   ")) this.log(line);
    this.log(`   Cast: ${scenario.actors.map((a) => `${a.id} (${a.role})`).join("; ")}`);

    try {
      for (const policy of scenario.policies ?? []) {
        const problem = await this.ensurePolicy(policy, scenario.actors[0]?.id ?? "baton-demo");
        if (problem) problems.push(problem);
      }
      if (problems.length === 0) {
        for (const [index, step] of scenario.steps.entries()) {
          if (this.opts.signal?.aborted) {
            problems.push("interrupted");
            break;
          }
          await this.pause(step.pauseMs ?? DEFAULT_PAUSE_MS);
          await this.opts.control?.gate(this.opts.signal);
          if (this.opts.signal?.aborted) {
            problems.push("interrupted");
            break;
          }
          const outcome = await this.playStep(scenario, step, index + 1, sessions);
          steps.push(outcome);
          this.opts.control?.played();
          if (step.action === "start" && outcome.result === "ok") {
            const started = sessions.get(outcome.session);
            if (started) this.opts.onSessionStarted?.({ scenario: scenario.name, alias: started.alias, sessionId: started.sessionId });
          }
          if (!outcome.matched) {
            problems.push(
              `step ${index + 1} (${shortName(step.actor)} ${step.action}): expected ${
                outcome.expected === "ok" ? "acceptance" : outcome.expected.error
              }, got ${outcome.result}`,
            );
            break;
          }
        }
      }
    } catch (e) {
      if (e instanceof ConnectError && e.code === Code.Unavailable) throw e;
      problems.push(e instanceof Error ? e.message : String(e));
    }

    const outcomes: Record<string, SessionOutcome> = {};
    for (const live of sessions.values()) {
      try {
        outcomes[live.alias] = await this.readBack(live);
      } catch (e) {
        problems.push(`could not read session ${live.alias} back: ${(e as Error).message}`);
      }
    }
    if (problems.length === 0) problems.push(...checkExpectations(scenario, outcomes));
    for (const o of Object.values(outcomes)) this.log(`   = ${describeOutcome(o)}`);
    const passed = problems.length === 0;
    const secs = ((Date.now() - t0) / 1000).toFixed(1);
    const deviated = Object.values(outcomes).some((o) => o.deviated);
    if (passed) this.log(`   PASS: ${deviated ? "played, following the person's choice" : "played as scripted"} (${secs}s)`);
    else for (const p of problems) this.log(`   FAIL: ${p}`);
    return { scenario, passed, problems, steps, sessions: outcomes, durationMs: Date.now() - t0 };
  }

  private async ensurePolicy(policy: PolicyInit, registrar: string): Promise<string | undefined> {
    const id = policy.policyId ?? "";
    const client = this.clientFor(registrar);
    const res = await client.registerPolicy(policy, { signal: this.opts.signal });
    if (res.ok) {
      this.log(`   ▸ registers policy ${id}: ${policy.description ?? ""}`);
      return undefined;
    }
    if (!/already registered/i.test(res.error)) return `policy ${id} could not be registered: ${res.error}`;
    const existing = await client.getPolicy(id, { signal: this.opts.signal });
    if (existing.mode !== policy.mode || !sameRules(existing.rules, policy.rules ?? "")) {
      return `policy ${id} is already registered with different rules (${existing.rules}); restart the runtime or rename the policy`;
    }
    this.log(`   ▸ policy ${id} is already registered with the same rules`);
    return undefined;
  }

  private sessionObject(live: LiveSession, actor: string): HandoffSession | TaskSession {
    let obj = live.objects.get(actor);
    if (!obj) {
      const common = { sessionId: live.sessionId, ...(live.policyVersion ? { policyVersion: live.policyVersion } : {}) };
      obj =
        live.mode === "handoff"
          ? new HandoffSession(this.clientFor(actor), { ...common, projection: live.projection as HandoffProjection })
          : new TaskSession(this.clientFor(actor), { ...common, projection: live.projection as TaskProjection });
      live.objects.set(actor, obj);
    }
    return obj;
  }

  private async playStep(scenario: Scenario, rawStep: DemoStep, index: number, sessions: Map<string, LiveSession>): Promise<StepOutcome> {
    const step = substituteDeep(rawStep, sessions);
    const alias = step.session ?? "main";
    const expected: StepExpectation = step.expect ?? "ok";
    let live = sessions.get(alias);
    const waitsForPerson =
      (step.action === "accept" || step.action === "decline") && step.human !== undefined && this.opts.interactive === true;
    if (waitsForPerson && step.human) this.log(`   ▸ ${step.human.prompt}`);
    else this.log(`   ▸ ${step.say ?? describeStep(step, live, sessions)}`);
    const outcome: StepOutcome = { index, actor: step.actor, action: step.action, session: alias, expected, result: "ok", matched: true };

    if (step.action === "wait") {
      this.skewMs += step.args.ms;
      this.log(`     ⏱ scenario clock +${humanDuration(step.args.ms)} (envelope timestamps move; nobody waits)`);
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
      const answered = await this.waitForHuman(scenario, step, live);
      if (answered) {
        outcome.answeredBy = "human";
        outcome.messageId = answered.envelope.messageId;
        return outcome;
      }
      outcome.answeredBy = "script";
    }

    const obj = this.sessionObject(live, step.actor);
    try {
      const ack = await sendStep(step, obj, live, {
        timestampMs: this.now(),
        signal: this.opts.signal,
        runbookDir: this.opts.runbookDir,
        log: this.log,
      });
      outcome.messageId = ack.messageId;
      outcome.result = "ok";
      outcome.matched = expected === "ok";
      if (outcome.matched)
        this.log(
          `     ✓ accepted · session ${live.sessionId.slice(0, 8)}… is ${SessionState[ack.sessionState]?.replace("SESSION_STATE_", "")}`,
        );
      else this.log(`     ✗ accepted, but the script expected ${typeof expected === "object" ? expected.error : "acceptance"}`);
      this.stepPlayed(index, live.sessionId, step, "ok", "", "", outcome.matched);
    } catch (e) {
      if (!(e instanceof MacpError)) throw e;
      outcome.result = e.code;
      outcome.messageId = obj.lastEnvelope?.messageId;
      outcome.matched = typeof expected === "object" && expected.error === e.code;
      const why = explainError(e.code) ?? "";
      if (outcome.matched) this.log(`     ✓ refused as expected: ${e.code}: ${why} (runtime: ${e.runtimeMessage})`);
      else this.log(`     ✗ refused: ${e.code}: ${why} (runtime: ${e.runtimeMessage})`);
      this.stepPlayed(index, live.sessionId, step, e.code, e.runtimeMessage, why, outcome.matched);
    }
    return outcome;
  }

  private stepPlayed(
    index: number,
    sessionId: string,
    step: DemoStep,
    result: string,
    runtimeMessage: string,
    explanation: string,
    asExpected: boolean,
  ): void {
    this.opts.onStepPlayed?.({
      index,
      sessionId,
      actor: step.actor,
      action: step.action,
      result,
      runtimeMessage,
      explanation,
      asExpected,
      atMs: this.now(),
    });
  }

  /**
   * Interactive human step: subscribe to the session and wait for the person
   * to accept or decline the offer, up to the timeout. Returns the envelope,
   * or undefined on timeout (the scripted answer is then played).
   */
  private async waitForHuman(
    scenario: Scenario,
    step: Extract<DemoStep, { action: "accept" | "decline" }>,
    live: LiveSession,
  ): Promise<SequencedEnvelope | undefined> {
    const handoffId = step.args?.handoffId ?? (live.projection as HandoffProjection).activeOffer()?.handoffId ?? "h1";
    const timeoutMs = this.opts.humanTimeoutMs ?? step.human?.timeoutMs ?? DEFAULT_HUMAN_TIMEOUT_MS;
    const sid = live.sessionId;
    this.log(`     ⏳ waiting up to ${humanDuration(timeoutMs)} for ${step.actor} to answer; from another terminal:`);
    this.log(`        npx baton --as ${step.actor} handoff accept --session ${sid} --handoff-id ${handoffId}`);
    this.log(`        npx baton --as ${step.actor} handoff decline --session ${sid} --handoff-id ${handoffId} --reason "…"`);
    this.log(`        (or open the session in the Baton console)`);
    const ac = linkedController(this.opts.signal);
    const timer = setTimeout(() => ac.abort(), timeoutMs);
    const observer = this.clientFor(live.initiator);
    let answer: SequencedEnvelope | undefined;
    try {
      this.opts.onHumanPrompt?.({ scenario: scenario.name, sessionId: sid, actor: step.actor, handoffId });
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
      if (this.opts.signal?.aborted) throw new Error("interrupted while waiting for a person");
      this.log(
        `     ⌛ no answer within ${humanDuration(timeoutMs)}; playing the scripted answer for them: ${describeStep(step, live, new Map())}`,
      );
      return undefined;
    }
    const decided = answer.envelope.messageType === HANDOFF_TYPES.Accept ? "accept" : "decline";
    const p = decodePayloadToJson(answer.envelope.mode, answer.envelope.messageType, answer.envelope.payload);
    const reason = typeof p?.reason === "string" && p.reason !== "" ? `: "${p.reason}"` : "";
    this.log(`     ✓ ${shortName(step.actor)} answered in person: ${decided}${reason}`);
    if (decided !== step.action) {
      live.deviated = true;
      this.log(`     (the script had "${step.action}"; the rest of the scenario follows the person's choice)`);
    }
    return answer;
  }

  private async readBack(live: LiveSession): Promise<SessionOutcome> {
    const client = this.clientFor(live.initiator);
    const signal = this.opts.signal;
    const metadata = await client.getSession(live.sessionId, signal ? { signal } : {});
    const events = await client.history(live.sessionId, signal ? { signal } : {});
    const outcome: SessionOutcome = {
      alias: live.alias,
      sessionId: live.sessionId,
      mode: live.mode,
      state: SessionState[metadata.state]?.replace("SESSION_STATE_", "") ?? String(metadata.state),
      metadata,
      events,
      deviated: live.deviated,
    };
    if (live.mode === "handoff") {
      outcome.handoff = HandoffProjection.from(events);
      if (outcome.handoff.commitment) outcome.commitment = outcome.handoff.commitment;
    } else {
      outcome.task = TaskProjection.from(events);
      if (outcome.task.commitment) outcome.commitment = outcome.task.commitment;
    }
    return outcome;
  }
}
