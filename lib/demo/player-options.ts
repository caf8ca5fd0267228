// The demo player's options, what it reports after each step, and the
// context its step modules (play-step.ts, human-step.ts) play through: the
// player's clients, narration sink and scenario clock.
import type { MacpClient } from "@/lib/agent";
import type { DemoControl } from "./control";

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

/** What a step is played through: the player's options, narration, clients and scenario clock. */
export interface PlayerContext {
  readonly opts: PlayerOptions;
  /** Narration sink (one line per call). */
  readonly log: (line: string) => void;
  /** The client acting as `actor` (one per identity, reused). */
  clientFor(actor: string): MacpClient;
  /** Scenario clock: wall time plus the time "wait" steps skipped. */
  now(): number;
  /** Move the scenario clock forward (a "wait" step). */
  advanceClock(ms: number): void;
}
