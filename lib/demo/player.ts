// The one generic demo player: plays any declarative Scenario against a MACP
// runtime through the agent layer (one MacpClient per actor identity, one
// HandoffSession/TaskSession object per actor and session sharing a single
// projection), narrating each step, checking each step's expected result,
// and reading every session back over a passive subscription at the end.
//
// Time: pauses are scaled by `speed` ("instant" skips them). Scenario time
// ("wait" steps) moves envelope timestamps forward instead of sleeping, so a
// two-minute policy timeout costs nothing in tests.

import path from "node:path";
import { fileURLToPath } from "node:url";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  Auth,
  HandoffProjection,
  HandoffSession,
  MacpClient,
  MacpError,
  readContextFile,
  sameRules,
  TaskProjection,
  TaskSession,
  formatBytes,
  type PolicyInit,
  type SequencedEnvelope,
} from "@/lib/agent";
import { explainError, MacpUsageError } from "@/lib/agent/errors";
import { sleep, linkedController } from "@/lib/agent/async";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_TYPES } from "@/lib/macp/constants";
import { newSessionId } from "@/lib/macp/ids";
import { decodePayloadToJson } from "@/lib/macp/payloads";
import type { CommitmentRecord } from "@/lib/macp/projections/types";
import type { DemoMode, DemoStep, Scenario, SessionExpectation, StepExpectation } from "./types";

export const RUNBOOK_DIR = fileURLToPath(new URL("./runbooks/", import.meta.url));
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
}

export interface StepOutcome {
  index: number;
  actor: string;
  action: DemoStep["action"];
  session: string;
  expected: StepExpectation;
  /** "ok", or the MACP error code the runtime answered with. */
  result: string;
  matched: boolean;
  messageId?: string;
  /** Set when a person answered instead of the script. */
  answeredBy?: "human" | "script";
}

export interface SessionOutcome {
  alias: string;
  sessionId: string;
  mode: DemoMode;
  state: string;
  metadata: SessionMetadata;
  /** Accepted history, numbered 1..n, as read back over a passive subscription. */
  events: SequencedEnvelope[];
  handoff?: HandoffProjection;
  task?: TaskProjection;
  commitment?: CommitmentRecord;
  /** True when a person's answer differed from the script (expectations are then not checked). */
  deviated: boolean;
}

export interface ScenarioResult {
  scenario: Scenario;
  passed: boolean;
  problems: string[];
  steps: StepOutcome[];
  sessions: Record<string, SessionOutcome>;
  durationMs: number;
}

interface LiveSession {
  alias: string;
  sessionId: string;
  mode: DemoMode;
  policyVersion?: string;
  initiator: string;
  projection: HandoffProjection | TaskProjection;
  objects: Map<string, HandoffSession | TaskSession>;
  deviated: boolean;
}

/** "agent://oncall/alice" → "alice". */
export function shortName(id: string): string {
  const tail = id.split("/").filter(Boolean).pop();
  return tail ?? id;
}

function substitute(text: string, sessions: ReadonlyMap<string, LiveSession>): string {
  return text.replace(/\{session:([A-Za-z0-9_-]+)\}/g, (m, alias: string) => sessions.get(alias)?.sessionId ?? m);
}

function substituteDeep<T>(value: T, sessions: ReadonlyMap<string, LiveSession>): T {
  if (typeof value === "string") return substitute(value, sessions) as T;
  if (Array.isArray(value)) return value.map((v) => substituteDeep(v, sessions)) as T;
  if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteDeep(v, sessions)])) as T;
  }
  return value;
}

function wrapText(text: string, indent: string, width = 92): string[] {
  const words = text.replace(/\s+/g, " ").trim().split(" ");
  const lines: string[] = [];
  let cur = "";
  for (const w of words) {
    if (cur !== "" && indent.length + cur.length + 1 + w.length > width) {
      lines.push(indent + cur);
      cur = w;
    } else cur = cur === "" ? w : `${cur} ${w}`;
  }
  if (cur) lines.push(indent + cur);
  return lines;
}

function humanDuration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} minute${ms === 60_000 ? "" : "s"}`;
  if (ms >= 60_000) return `${Math.floor(ms / 60_000)}m ${Math.round((ms % 60_000) / 1000)}s`;
  return `${Math.round(ms / 1000)}s`;
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
          const outcome = await this.playStep(scenario, step, index + 1, sessions);
          steps.push(outcome);
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
    if (problems.length === 0) problems.push(...this.checkExpectations(scenario, outcomes));
    for (const o of Object.values(outcomes)) this.log(`   = ${this.describeOutcome(o)}`);
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

  private describeStep(step: DemoStep, live: LiveSession | undefined, sessions: ReadonlyMap<string, LiveSession>): string {
    const who = shortName(step.actor);
    switch (step.action) {
      case "start": {
        const a = step.args;
        const policy = a.policy ? `, policy ${a.policy}` : "";
        return `${who} starts a ${a.mode} session "${substitute(a.intent, sessions)}" with ${a.participants.map(shortName).join(", ")}${policy}`;
      }
      case "offer":
        return `${who} offers ${step.args.handoffId} to ${shortName(step.args.to)}: ${step.args.scope}`;
      case "context": {
        const a = step.args;
        const what = a.file ?? (a.json ? "a JSON note" : "a note");
        return `${who} attaches ${what} to ${a.handoffId ?? "the offer"}`;
      }
      case "accept":
        return live?.mode === "task"
          ? `${who} accepts task ${step.args?.taskId ?? ""}`.trimEnd()
          : `${who} accepts ${step.args?.handoffId ?? "the offer"}${step.args?.reason ? `: "${step.args.reason}"` : ""}`;
      case "decline":
        return `${who} declines ${step.args?.handoffId ?? "the offer"}${step.args?.reason ? `: "${step.args.reason}"` : ""}`;
      case "request":
        return `${who} asks ${step.args.to ? shortName(step.args.to) : "any participant"} to "${step.args.title}" (${step.args.taskId})`;
      case "reject":
        return `${who} rejects the task${step.args?.reason ? `: "${step.args.reason}"` : ""}`;
      case "update":
        return `${who} reports ${Math.round(step.args.progress * 100)}%${step.args.message ? `: ${step.args.message}` : ""}`;
      case "complete":
        return `${who} completes the task: ${step.args.summary}`;
      case "fail":
        return `${who} reports failure ${step.args.errorCode}${step.args.retryable ? " (retryable)" : ""}: ${step.args.reason}`;
      case "commit":
        return `${who} commits ${step.args?.action ?? "the outcome"}`;
      case "cancel":
        return `${who} cancels the session`;
      case "wait":
        return `${humanDuration(step.args.ms)} pass`;
    }
  }

  private async playStep(
    scenario: Scenario,
    rawStep: DemoStep,
    index: number,
    sessions: Map<string, LiveSession>,
  ): Promise<StepOutcome> {
    const step = substituteDeep(rawStep, sessions);
    const alias = step.session ?? "main";
    const expected: StepExpectation = step.expect ?? "ok";
    let live = sessions.get(alias);
    const waitsForPerson = (step.action === "accept" || step.action === "decline") && step.human !== undefined && this.opts.interactive === true;
    if (waitsForPerson && step.human) this.log(`   ▸ ${step.human.prompt}`);
    else this.log(`   ▸ ${step.say ?? this.describeStep(step, live, sessions)}`);
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
      const ack = await this.send(step, obj, live);
      outcome.messageId = ack.messageId;
      outcome.result = "ok";
      outcome.matched = expected === "ok";
      if (outcome.matched) this.log(`     ✓ accepted · session ${live.sessionId.slice(0, 8)}… is ${SessionState[ack.sessionState]?.replace("SESSION_STATE_", "")}`);
      else this.log(`     ✗ accepted, but the script expected ${typeof expected === "object" ? expected.error : "acceptance"}`);
    } catch (e) {
      if (!(e instanceof MacpError)) throw e;
      outcome.result = e.code;
      outcome.messageId = obj.lastEnvelope?.messageId;
      outcome.matched = typeof expected === "object" && expected.error === e.code;
      const why = explainError(e.code) ?? "";
      if (outcome.matched) this.log(`     ✓ refused as expected: ${e.code}: ${why} (runtime: ${e.runtimeMessage})`);
      else this.log(`     ✗ refused: ${e.code}: ${why} (runtime: ${e.runtimeMessage})`);
    }
    return outcome;
  }

  private async send(step: DemoStep, obj: HandoffSession | TaskSession, live: LiveSession) {
    const timestampMs = this.now();
    const signal = this.opts.signal;
    const base = { timestampMs, ...(signal ? { signal } : {}) };
    const h = obj instanceof HandoffSession ? obj : undefined;
    const t = obj instanceof TaskSession ? obj : undefined;
    const need = <T>(x: T | undefined, what: string): T => {
      if (x === undefined) throw new Error(`${step.action} is a ${what} action, but session ${live.alias} is a ${live.mode} session`);
      return x;
    };
    switch (step.action) {
      case "start":
        return obj.start({
          intent: step.args.intent,
          participants: step.args.participants,
          ttlMs: step.args.ttlMs ?? 3_600_000,
          ...(step.args.policy ? { policyVersion: step.args.policy } : {}),
          ...(step.args.contextId ? { contextId: step.args.contextId } : {}),
          ...base,
        });
      case "offer":
        return need(h, "handoff").offer({
          handoffId: step.args.handoffId,
          targetParticipant: step.args.to,
          scope: step.args.scope,
          reason: step.args.reason ?? "",
          ...base,
        });
      case "context": {
        const a = step.args;
        let contentType: string;
        let context: Uint8Array | string | object;
        if (a.file !== undefined) {
          const f = readContextFile(path.join(this.opts.runbookDir ?? RUNBOOK_DIR, a.file), a.contentType ? { contentType: a.contentType } : {});
          contentType = f.contentType;
          context = f.context;
          this.log(`     (${f.name}: ${f.contentType}, ${formatBytes(f.size)})`);
        } else if (a.json !== undefined) {
          contentType = a.contentType ?? "application/json";
          context = a.json;
        } else {
          contentType = a.contentType ?? "text/plain";
          context = a.text ?? "";
        }
        return need(h, "handoff").sendContext({ ...(a.handoffId ? { handoffId: a.handoffId } : {}), contentType, context, ...base });
      }
      case "accept":
        if (h) return h.acceptHandoff({ ...(step.args?.handoffId ? { handoffId: step.args.handoffId } : {}), reason: step.args?.reason ?? "", ...base });
        return need(t, "task").acceptTask({ ...(step.args?.taskId ? { taskId: step.args.taskId } : {}), reason: step.args?.reason ?? "", ...base });
      case "decline":
        return need(h, "handoff").decline({ ...(step.args?.handoffId ? { handoffId: step.args.handoffId } : {}), reason: step.args?.reason ?? "", ...base });
      case "request":
        return need(t, "task").request({
          taskId: step.args.taskId,
          title: step.args.title,
          instructions: step.args.instructions ?? "",
          requestedAssignee: step.args.to ?? "",
          ...(step.args.input !== undefined ? { input: step.args.input } : {}),
          ...base,
        });
      case "reject":
        return need(t, "task").reject({ ...(step.args?.taskId ? { taskId: step.args.taskId } : {}), reason: step.args?.reason ?? "", ...base });
      case "update":
        return need(t, "task").update({ ...(step.args.taskId ? { taskId: step.args.taskId } : {}), progress: step.args.progress, message: step.args.message ?? "", ...base });
      case "complete":
        return need(t, "task").complete({
          ...(step.args.taskId ? { taskId: step.args.taskId } : {}),
          summary: step.args.summary,
          ...(step.args.output !== undefined ? { output: step.args.output } : {}),
          ...base,
        });
      case "fail":
        return need(t, "task").fail({
          ...(step.args.taskId ? { taskId: step.args.taskId } : {}),
          errorCode: step.args.errorCode,
          reason: step.args.reason,
          retryable: step.args.retryable ?? false,
          ...base,
        });
      case "commit": {
        const action = step.args?.action ?? obj.suggestedAction();
        if (action === undefined) throw new Error(`nothing to commit yet in session ${live.alias}: no answer or report so far`);
        if (step.args?.action === undefined) this.log(`     (the session's projection shows the outcome: committing ${action})`);
        return obj.commit({
          action,
          reason: step.args?.reason ?? this.defaultReason(live, action),
          ...(step.args?.authorityScope ? { authorityScope: step.args.authorityScope } : {}),
          ...(step.args?.outcomePositive !== undefined ? { outcomePositive: step.args.outcomePositive } : {}),
          ...base,
        });
      }
      case "cancel":
        return obj.cancel(step.args?.reason ?? "", signal ? { signal } : {});
      case "wait":
        throw new Error("unreachable");
    }
  }

  private defaultReason(live: LiveSession, action: string): string {
    if (live.projection instanceof HandoffProjection) {
      const o = live.projection.acceptedOffer() ?? live.projection.lastOffer();
      if (!o) return action;
      return o.status === "accepted" ? `${o.acceptedBy ?? o.target} accepted ${o.handoffId}: ${o.scope}` : `${o.target} ${o.status} ${o.handoffId}`;
    }
    const r = live.projection.terminalReport();
    return r?.kind === "complete" ? `completed: ${r.summary}` : r?.kind === "fail" ? `failed: ${r.reason}` : action;
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
      this.log(`     ⌛ no answer within ${humanDuration(timeoutMs)}; playing the scripted answer for them: ${this.describeStep(step, live, new Map())}`);
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

  private checkExpectations(scenario: Scenario, outcomes: Record<string, SessionOutcome>): string[] {
    const problems: string[] = [];
    for (const [alias, want] of Object.entries(scenario.expect)) {
      const got = outcomes[alias];
      if (!got) {
        problems.push(`session ${alias} was never started`);
        continue;
      }
      if (got.deviated) continue;
      problems.push(...compare(alias, want, got));
    }
    return problems;
  }

  private describeOutcome(o: SessionOutcome): string {
    const phase = o.handoff?.phase ?? o.task?.phase ?? "?";
    const c = o.commitment;
    const commit = c ? `${c.action} (${c.outcomePositive ? "positive" : "negative"}) by ${shortName(c.sender)}` : "no commitment";
    let mode = "";
    if (o.handoff) {
      mode = o.handoff.offers.map((r) => `${r.handoffId}→${shortName(r.target)} ${r.status}`).join(", ");
    } else if (o.task?.task) {
      const tk = o.task.task;
      const pct = tk.latestProgress === undefined ? "" : ` ${Math.round(tk.latestProgress * 100)}%`;
      mode = `${tk.taskId} ${tk.status}${pct}${o.task.isRetryable() ? " (retryable)" : ""}`;
    }
    const alias = o.alias === "main" ? "" : `${o.alias} `;
    return `${alias}session ${o.sessionId}: ${o.state} · ${commit} · phase ${phase}${mode ? ` · ${mode}` : ""} · ${o.events.length} events`;
  }
}

function compare(alias: string, want: SessionExpectation, got: SessionOutcome): string[] {
  const p: string[] = [];
  const phase = got.handoff?.phase ?? got.task?.phase;
  if (got.state !== want.state) p.push(`session ${alias}: state ${got.state}, expected ${want.state}`);
  if (want.phase !== undefined && phase !== want.phase) p.push(`session ${alias}: phase ${phase}, expected ${want.phase}`);
  const c = got.commitment;
  if (want.action !== undefined && c?.action !== want.action) p.push(`session ${alias}: commitment ${c?.action ?? "none"}, expected ${want.action}`);
  if (want.outcomePositive !== undefined && c?.outcomePositive !== want.outcomePositive) {
    p.push(`session ${alias}: outcome_positive ${String(c?.outcomePositive)}, expected ${want.outcomePositive}`);
  }
  if (want.committedBy !== undefined && c?.sender !== want.committedBy) {
    p.push(`session ${alias}: committed by ${c?.sender ?? "nobody"}, expected ${want.committedBy}`);
  }
  return p;
}
