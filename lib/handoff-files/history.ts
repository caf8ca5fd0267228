// The history store: a v0.1 file keeps no history, so Baton records every
// snapshot change it observes and gives each handoff a timeline. This is the
// interface; history-sqlite.ts implements it on SQLite. The console's read
// model lists and pages handoffs from here, next to MACP sessions.

import type { HandoffStatus, JsonObject } from "./record";
import type { Snapshot } from "./snapshot";
import { classifyStep, describeStep, type StepKind } from "./state-machine";

/** How an observation was made. */
export type ObservationSource = "initial" | "watch" | "poll";

export interface Observation {
  /** Absolute directory path. */
  dir: string;
  /** File name, `<task_id>.json`. */
  name: string;
  observedAtMs: number;
  source: ObservationSource;
  /** The file as read; undefined when it was removed. */
  snapshot?: Snapshot;
}

/**
 * `first`: the first snapshot (or the first after a removal); otherwise how
 * the status moved from the last valid snapshot (state-machine.ts).
 */
export type ObservedStep = StepKind | "first";

/** One handoff as the store knows it now (a row of the console's list). */
export interface HandoffSummary {
  id: number;
  dir: string;
  name: string;
  /** From the last valid snapshot, else the file name without `.json`. */
  taskId: string;
  /** The file exists (it was not removed). */
  present: boolean;
  /** The latest snapshot is valid and its step was not illegal. */
  valid: boolean;
  /** Why not, when not valid. */
  problem?: string;
  /** Hash of the latest snapshot: pass it as `expectHash` to act on exactly what was shown. */
  hash?: string;
  /** Fields of the last valid snapshot. */
  status?: HandoffStatus;
  fromAgent?: string;
  toAgent?: string;
  description?: string;
  createdAt?: string;
  updatedAt?: string;
  firstSeenMs: number;
  lastChangeMs: number;
  /** Snapshots recorded so far (the timeline's length before pruning). */
  snapshots: number;
  /** Oldest snapshots dropped to keep the timeline bounded. */
  pruned: number;
}

export interface HistoryEntry {
  handoffId: number;
  /** 1, 2, 3 … per handoff. */
  seq: number;
  observedAtMs: number;
  source: ObservationSource;
  kind: "snapshot" | "removed";
  valid: boolean;
  status?: HandoffStatus;
  toAgent?: string;
  step?: ObservedStep;
  /** Why the snapshot is invalid, or what is wrong with its step. */
  problem?: string;
  hash?: string;
  size?: number;
  /** The whole document, when it was valid JSON and at most HISTORY_CONTENT_LIMIT bytes. */
  document?: JsonObject;
}

export interface Page<T> {
  items: T[];
  /** Pass as `cursor` for the next page; absent on the last page. */
  next?: string;
}

export interface ListQuery {
  /** Only these directories (absolute). */
  dirs?: readonly string[];
  statuses?: readonly HandoffStatus[];
  /** Only handoffs whose to_agent is one of these ("" = offered to anyone): an inbox. */
  toAgentIn?: readonly string[];
  /** Include files that were removed. Default false. */
  includeRemoved?: boolean;
  /** Default 50, at most 500. */
  limit?: number;
  cursor?: string;
}

/** What the store last recorded for a file (to compare a new observation with). */
export interface LastRecorded {
  hash?: string;
  present: boolean;
  valid: boolean;
  /** Status of the last valid snapshot since the file (re)appeared. */
  lastValidStatus?: HandoffStatus;
}

export interface HandoffHistoryStore {
  /**
   * Record an observation. Returns the new entry, or undefined when it adds
   * nothing (same bytes as the last recorded snapshot, or a removal of a file
   * already recorded as removed). Safe when several processes record the
   * same directory: each change is stored once.
   */
  record(obs: Observation): HistoryEntry | undefined;
  last(dir: string, name: string): LastRecorded | undefined;
  /** Names recorded as present in `dir` (streamed from storage). */
  presentNames(dir: string): Iterable<string>;
  list(query?: ListQuery): Page<HandoffSummary>;
  get(id: number): HandoffSummary | undefined;
  find(dir: string, name: string): HandoffSummary | undefined;
  /** Handoffs with this task_id, in any watched directory. */
  findByTaskId(taskId: string): HandoffSummary[];
  /** The timeline, oldest first, `limit` entries after `cursor`. */
  history(handoffId: number, opts?: { cursor?: string; limit?: number }): Page<HistoryEntry>;
  close(): void;
}

/** Largest document kept in a history entry (bytes of JSON). */
export const HISTORY_CONTENT_LIMIT = 64 * 1024;

/** The step from the last valid status (undefined: none since the file appeared) to `snapshot`. */
export function observedStep(lastValidStatus: HandoffStatus | undefined, snapshot: Snapshot): { step?: ObservedStep; problem?: string } {
  if (!snapshot.valid) return {};
  if (lastValidStatus === undefined) return { step: "first" };
  const step = classifyStep(lastValidStatus, snapshot.record.status);
  const problem = describeStep(lastValidStatus, snapshot.record.status);
  return problem === undefined ? { step } : { step, problem };
}
