// Admins' "Run demo": the RunDemo stream folded into what the page shows
// (narration lines, the sessions the scenario started, the verdict). Pure.

import type { RunDemoResponse } from "@/lib/gen/baton/v1/actions_pb";

export interface DemoRunState {
  lines: readonly string[];
  sessions: readonly { alias: string; sessionId: string }[];
  finished?: { passed: boolean; problems: readonly string[]; durationMs: number };
}

export const EMPTY_DEMO_RUN: DemoRunState = Object.freeze({ lines: [], sessions: [] });
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
      return { ...s, finished: { passed: m.item.value.passed, problems: m.item.value.problems, durationMs: Number(m.item.value.durationMs) } };
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
