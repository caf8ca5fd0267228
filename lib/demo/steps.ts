// The player's steps: the state of a session being played, the
// {session:alias} substitution in step arguments, and each step action as the
// agent layer's call (HandoffSession / TaskSession).
import path from "node:path";
import { fileURLToPath } from "node:url";
import { HandoffProjection, HandoffSession, readContextFile, TaskSession, formatBytes, type TaskProjection } from "@/lib/agent";
import type { DemoMode, DemoStep } from "./types";

export const RUNBOOK_DIR = fileURLToPath(new URL("./runbooks/", import.meta.url));

/** A scenario's session while it is played: one projection shared by every actor's session object. */
export interface LiveSession {
  alias: string;
  sessionId: string;
  mode: DemoMode;
  policyVersion?: string;
  initiator: string;
  projection: HandoffProjection | TaskProjection;
  objects: Map<string, HandoffSession | TaskSession>;
  deviated: boolean;
}

/** Where and when a step is sent. */
export interface StepEnv {
  /** Envelope timestamp (the scenario clock). */
  timestampMs: number;
  signal: AbortSignal | undefined;
  runbookDir: string | undefined;
  log: (line: string) => void;
}

export function substitute(text: string, sessions: ReadonlyMap<string, LiveSession>): string {
  return text.replace(/\{session:([A-Za-z0-9_-]+)\}/g, (m, alias: string) => sessions.get(alias)?.sessionId ?? m);
}

export function substituteDeep<T>(value: T, sessions: ReadonlyMap<string, LiveSession>): T {
  if (typeof value === "string") return substitute(value, sessions) as T;
  if (Array.isArray(value)) return value.map((v) => substituteDeep(v, sessions)) as T;
  if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substituteDeep(v, sessions)])) as T;
  }
  return value;
}

/** Send one step as its actor; resolves to the runtime's Ack, throws MacpError when the runtime refuses. */
export async function sendStep(step: DemoStep, obj: HandoffSession | TaskSession, live: LiveSession, env: StepEnv) {
  const timestampMs = env.timestampMs;
  const signal = env.signal;
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
        const f = readContextFile(path.join(env.runbookDir ?? RUNBOOK_DIR, a.file), a.contentType ? { contentType: a.contentType } : {});
        contentType = f.contentType;
        context = f.context;
        env.log(`     (${f.name}: ${f.contentType}, ${formatBytes(f.size)})`);
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
      if (h)
        return h.acceptHandoff({
          ...(step.args?.handoffId ? { handoffId: step.args.handoffId } : {}),
          reason: step.args?.reason ?? "",
          ...base,
        });
      return need(t, "task").acceptTask({
        ...(step.args?.taskId ? { taskId: step.args.taskId } : {}),
        reason: step.args?.reason ?? "",
        ...base,
      });
    case "decline":
      return need(h, "handoff").decline({
        ...(step.args?.handoffId ? { handoffId: step.args.handoffId } : {}),
        reason: step.args?.reason ?? "",
        ...base,
      });
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
      return need(t, "task").reject({
        ...(step.args?.taskId ? { taskId: step.args.taskId } : {}),
        reason: step.args?.reason ?? "",
        ...base,
      });
    case "update":
      return need(t, "task").update({
        ...(step.args.taskId ? { taskId: step.args.taskId } : {}),
        progress: step.args.progress,
        message: step.args.message ?? "",
        ...base,
      });
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
      if (step.args?.action === undefined) env.log(`     (the session's projection shows the outcome: committing ${action})`);
      return obj.commit({
        action,
        reason: step.args?.reason ?? defaultReason(live, action),
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

function defaultReason(live: LiveSession, action: string): string {
  if (live.projection instanceof HandoffProjection) {
    const o = live.projection.acceptedOffer() ?? live.projection.lastOffer();
    if (!o) return action;
    return o.status === "accepted"
      ? `${o.acceptedBy ?? o.target} accepted ${o.handoffId}: ${o.scope}`
      : `${o.target} ${o.status} ${o.handoffId}`;
  }
  const r = live.projection.terminalReport();
  return r?.kind === "complete" ? `completed: ${r.summary}` : r?.kind === "fail" ? `failed: ${r.reason}` : action;
}
