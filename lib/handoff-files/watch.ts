// Watching handoff directories live: the HandoffWatcher follows each
// directory with a DirWatch (dir-watch.ts: fs.watch plus a rescan, or polling
// on network filesystems; bounded reads), records every change in the
// history store (if one is given) and reports it to listeners.

import path from "node:path";
import { DIRECTORY_DEFAULTS } from "./directory";
import { DirWatch } from "./dir-watch";
import type { HandoffHistoryStore } from "./history";
import type { ChangeListener, DirectoryStatus, HandoffChange, WatcherOptions } from "./watch-types";

export { isNetworkFilesystem, isNetworkFsType } from "./dir-watch";
export type { ChangeListener, DirectoryStatus, HandoffChange, WatcherOptions } from "./watch-types";

export class HandoffWatcher {
  readonly history?: HandoffHistoryStore;
  private readonly dirs: DirWatch[];
  private readonly listeners = new Set<ChangeListener>();
  private readonly onError?: (error: unknown, dir: string) => void;

  constructor(options: WatcherOptions) {
    const o = {
      mode: options.mode ?? "auto",
      pollMs: options.pollMs ?? 500,
      rescanMs: options.rescanMs ?? 30_000,
      maxFiles: options.maxFiles ?? DIRECTORY_DEFAULTS.maxFiles,
      maxBytes: options.maxBytes ?? DIRECTORY_DEFAULTS.maxBytes,
      minReadIntervalMs: options.minReadIntervalMs ?? 50,
      now: options.now ?? Date.now,
    };
    if (options.history) this.history = options.history;
    if (options.onError) this.onError = options.onError;
    const unique = [...new Set(options.dirs.map((d) => path.resolve(d)))];
    this.dirs = unique.map((d) => new DirWatch(d, this, o));
  }

  /** Receive every change (including, on start, one `added` per file already there). Returns an unsubscribe function. */
  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Scan every directory once (reporting what is there), then follow changes. */
  async start(): Promise<void> {
    await Promise.all(this.dirs.map((d) => d.start()));
  }

  stop(): void {
    for (const d of this.dirs) d.stop();
  }

  status(): DirectoryStatus[] {
    return this.dirs.map((d) => d.status());
  }

  /** A full pass now, resolving once every change it found has been read and reported. */
  async rescan(): Promise<void> {
    await Promise.all(
      this.dirs.map(async (d) => {
        await d.scan();
        await d.drain("poll");
        // Files read moments ago wait out their minimum interval, then are read.
        while (d.dirty.size > 0 && !d.isStopped) {
          await new Promise((r) => setTimeout(r, 10));
          await d.drain("poll");
        }
      }),
    );
  }

  /** @internal */
  emit(change: HandoffChange, observation: Parameters<HandoffHistoryStore["record"]>[0] | undefined): void {
    let c = change;
    if (this.history && (observation || change.kind === "removed")) {
      try {
        const entry = this.history.record(
          observation ?? { dir: change.dir, name: change.name, observedAtMs: change.observedAtMs, source: change.source },
        );
        if (entry?.step) {
          // The store's view of the previous state is authoritative (it survives restarts).
          c = { ...c, step: entry.step };
          delete c.stepProblem;
          if (entry.problem && (entry.step === "gap" || entry.step === "illegal")) c.stepProblem = entry.problem;
        }
      } catch (e) {
        this.reportError(e, change.dir);
      }
    }
    for (const l of this.listeners) {
      try {
        l(c);
      } catch (e) {
        this.reportError(e, change.dir);
      }
    }
  }

  /** @internal */
  reportError(error: unknown, dir: string): void {
    this.onError?.(error, dir);
  }
}
