// The handoff watcher's options and what it reports (see watch.ts).
import type { WatchMode } from "./config";
import type { HandoffHistoryStore, ObservationSource, ObservedStep } from "./history";
import type { HandoffStatus } from "./record";
import type { Snapshot } from "./snapshot";

export interface WatcherOptions {
  /** Directories to watch (made absolute). A missing directory is watched for until it appears. */
  dirs: readonly string[];
  /** Default auto: poll on network filesystems, else fs.watch. */
  mode?: WatchMode;
  /** Polling interval (also how often a missing directory is looked for). Default 500 ms. */
  pollMs?: number;
  /** With fs.watch, a full rescan this often catches anything the notifications missed. Default 30 s. */
  rescanMs?: number;
  maxFiles?: number;
  maxBytes?: number;
  /** A file is read at most this often. Default 50 ms. */
  minReadIntervalMs?: number;
  /** Changes are recorded here, and the first scan compares with what it recorded before. */
  history?: HandoffHistoryStore;
  /** Called with errors the watcher recovers from (e.g. a directory that cannot be read). */
  onError?: (error: unknown, dir: string) => void;
  now?: () => number;
}

export interface HandoffChange {
  dir: string;
  name: string;
  /** The task_id of a valid snapshot, else the file name without `.json`. */
  taskId: string;
  kind: "added" | "changed" | "removed";
  /** The file as read (absent when removed). */
  snapshot?: Snapshot;
  /** The status of the last valid snapshot before this one. */
  previousStatus?: HandoffStatus;
  step?: ObservedStep;
  /** Why the step is a gap or illegal. */
  stepProblem?: string;
  observedAtMs: number;
  source: ObservationSource;
}

export interface DirectoryStatus {
  dir: string;
  /** How it is followed now; "missing" while the directory does not exist. */
  mode: "watch" | "poll" | "missing";
  tracked: number;
  /** Handoff files beyond `maxFiles` that are not tracked (as of the last full scan). */
  untracked: number;
  lastScanMs?: number;
  lastError?: string;
}

export type ChangeListener = (change: HandoffChange) => void;
