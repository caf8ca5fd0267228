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
// play-step.ts (one step played and judged), human-step.ts (waiting for a
// real person), narration.ts (what is printed), outcomes.ts (results and the
// expectation check), player-options.ts (options and the step context). This
// file is the runner: clients, the scenario clock, pacing, the step loop and
// the read-back.

import { Code, ConnectError } from "@connectrpc/connect";
import { Auth, HandoffProjection, MacpClient, sameRules, TaskProjection, type PolicyInit } from "@/lib/agent";
import { MacpUsageError } from "@/lib/agent/errors";
import { sleep } from "@/lib/base/abort";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { describeOutcome, shortName, wrapText } from "./narration";
import { checkExpectations, type ScenarioResult, type SessionOutcome, type StepOutcome } from "./outcomes";
import { playStep } from "./play-step";
import type { PlayerContext, PlayerOptions } from "./player-options";
import type { LiveSession } from "./steps";
import type { Scenario } from "./types";

export type { ScenarioResult, SessionOutcome, StepOutcome } from "./outcomes";
export type { PlayerOptions, StepPlayed } from "./player-options";
export { shortName } from "./narration";
export { RUNBOOK_DIR } from "./steps";

const DEFAULT_PAUSE_MS = 1_200;

export class DemoPlayer {
  private readonly clients = new Map<string, MacpClient>();
  private readonly log: (line: string) => void;
  private readonly speed: number;
  private skewMs = 0;
  /** What play-step.ts and human-step.ts play through. */
  private readonly ctx: PlayerContext;

  constructor(private readonly opts: PlayerOptions) {
    this.log = opts.log ?? ((line) => process.stdout.write(`${line}\n`));
    const s = opts.speed ?? 1;
    if (s !== "instant" && !(s > 0)) throw new MacpUsageError(`speed must be a positive number or "instant", got ${s}`);
    this.speed = s === "instant" ? Number.POSITIVE_INFINITY : s;
    this.ctx = {
      opts,
      log: this.log,
      clientFor: (actor) => this.clientFor(actor),
      now: () => this.now(),
      advanceClock: (ms) => {
        this.skewMs += ms;
      },
    };
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
          const outcome = await playStep(this.ctx, scenario, step, index + 1, sessions);
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
