// Admins' "Run demo": the RunDemo stream folded into what the page shows
// (narration lines, the sessions the scenario started, each step's answer,
// pause/step/pace as in force, the verdict). Pure.

import type { DemoStepPlayed, RunDemoResponse } from "@/lib/gen/baton/v1/actions_pb";
import type { LocalRefusal } from "@/lib/client/refusals";

export interface DemoRunState {
  lines: readonly string[];
  sessions: readonly { alias: string; sessionId: string }[];
  finished?: { passed: boolean; problems: readonly string[]; durationMs: number };
  /** For ControlDemo, once the server has said. */
  runId?: string;
  totalSteps: number;
  control?: { paused: boolean; played: number; speed: number; instant: boolean };
  /** Steps as played (the last MAX_STEPS), as the server sent them. */
  steps: readonly DemoStepPlayed[];
}

export const EMPTY_DEMO_RUN: DemoRunState = Object.freeze({ lines: [], sessions: [], totalSteps: 0, steps: [] });
/** Steps kept on the page (scenarios have a few dozen). */
const MAX_STEPS = 200;
/** Narration kept on the page (a whole scenario is far below this). */
const MAX_LINES = 500;

export function applyDemoMessage(s: DemoRunState, m: RunDemoResponse): DemoRunState {
  switch (m.item.case) {
    case "line": {
      const lines = s.lines.length >= MAX_LINES ? [...s.lines.slice(1), m.item.value] : [...s.lines, m.item.value];
      return { ...s, lines };
    }
    case "session":
      return { ...s, sessions: [...s.sessions, { alias: m.item.value.alias, sessionId: m.item.value.sessionId }] };
    case "finished":
      return {
        ...s,
        finished: { passed: m.item.value.passed, problems: m.item.value.problems, durationMs: Number(m.item.value.durationMs) },
      };
    case "started":
      return { ...s, runId: m.item.value.runId, totalSteps: m.item.value.steps };
    case "control": {
      const c = m.item.value;
      return { ...s, control: { paused: c.paused, played: c.played, speed: c.speed, instant: c.instant } };
    }
    case "step": {
      const step = m.item.value;
      return { ...s, steps: [...s.steps, step].slice(-MAX_STEPS) };
    }
    default:
      return s;
  }
}

export const DEMO_SPEEDS: readonly { value: string; label: string; speed: number; instant: boolean }[] = [
  { value: "0.5", label: "Slow (0.5×)", speed: 0.5, instant: false },
  { value: "1", label: "Human pace (1×)", speed: 1, instant: false },
  { value: "2", label: "Fast (2×)", speed: 2, instant: false },
  { value: "4", label: "Faster (4×)", speed: 4, instant: false },
  { value: "instant", label: "Instant (no pauses)", speed: 0, instant: true },
];

/** The pace option of a control state (for the select while a run plays). */
export function paceValueOf(c: { speed: number; instant: boolean }): string {
  if (c.instant) return "instant";
  return DEMO_SPEEDS.find((s) => !s.instant && s.speed === c.speed)?.value ?? String(c.speed);
}

/** A refused step as the timeline's local annotation (lib/client/refusals.ts). */
export function refusalOfStep(runId: string, step: DemoStepPlayed): LocalRefusal | null {
  if (step.result === "ok") return null;
  return {
    id: `demo-${runId}-${step.index}`,
    sessionId: step.sessionId,
    atMs: Number(step.atUnixMs),
    actor: step.actor,
    attempt: `${step.action} (demo step ${step.index}${step.asExpected ? ", refused as the script expects" : ""})`,
    code: step.result,
    explanation: [step.explanation, step.runtimeMessage ? `Runtime: ${step.runtimeMessage}` : ""].filter(Boolean).join(" "),
    source: "demo",
  };
}
