// What playing a scenario produces (per step and per session) and the check
// of each session's read-back against the scenario's expectations.
import type { HandoffProjection, SequencedEnvelope, TaskProjection } from "@/lib/agent";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import type { CommitmentRecord } from "@/lib/macp/projections/types";
import type { DemoMode, DemoStep, Scenario, SessionExpectation, StepExpectation } from "./types";

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

/** Every expectation the scenario states that the read-back sessions miss (none once a person deviated). */
export function checkExpectations(scenario: Scenario, outcomes: Record<string, SessionOutcome>): string[] {
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

function compare(alias: string, want: SessionExpectation, got: SessionOutcome): string[] {
  const p: string[] = [];
  const phase = got.handoff?.phase ?? got.task?.phase;
  if (got.state !== want.state) p.push(`session ${alias}: state ${got.state}, expected ${want.state}`);
  if (want.phase !== undefined && phase !== want.phase) p.push(`session ${alias}: phase ${phase}, expected ${want.phase}`);
  const c = got.commitment;
  if (want.action !== undefined && c?.action !== want.action)
    p.push(`session ${alias}: commitment ${c?.action ?? "none"}, expected ${want.action}`);
  if (want.outcomePositive !== undefined && c?.outcomePositive !== want.outcomePositive) {
    p.push(`session ${alias}: outcome_positive ${String(c?.outcomePositive)}, expected ${want.outcomePositive}`);
  }
  if (want.committedBy !== undefined && c?.sender !== want.committedBy) {
    p.push(`session ${alias}: committed by ${c?.sender ?? "nobody"}, expected ${want.committedBy}`);
  }
  return p;
}
