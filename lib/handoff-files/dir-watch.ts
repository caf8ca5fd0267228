// Watching handoff directories live. Each directory is followed with
// fs.watch (inotify, FSEvents, …) plus a periodic rescan as a safety net,
// or, on network filesystems (NFS, SMB/CIFS, FUSE, 9p, Ceph, …) where change
// notification is unreliable, by polling. Every change is read once, compared
// with the last snapshot, recorded in the history store (if one is given) and
// reported to listeners.
//
// Bounded: at most `maxFiles` files are tracked per directory (further files
// are counted, not stored); a file rewritten in a tight loop is read at most
// once per `minReadIntervalMs` and its pending changes collapse into one; a
// few files are read at a time per directory (8), never more than `maxBytes` of each;
// a polling pass stretches its interval so that it spends at most a fifth of
// the time scanning.
//
// This file follows one directory (DirWatch); watch.ts is the HandoffWatcher
// that owns one per directory, records changes and reports them.

import { watch as fsWatch, type FSWatcher } from "node:fs";
import { opendir, realpath, stat, statfs } from "node:fs/promises";
import path from "node:path";
import { observedStep, type HandoffHistoryStore, type ObservationSource, type ObservedStep } from "./history";
import type { HandoffStatus } from "./record";
import { isHandoffFileName, readSnapshot, type Snapshot } from "./snapshot";
import type { DirectoryStatus, HandoffChange, WatcherOptions } from "./watch-types";

/** What a DirWatch reports to: the HandoffWatcher that owns it. */
export interface DirWatchHost {
  readonly history?: HandoffHistoryStore;
  emit(change: HandoffChange, observation: Parameters<HandoffHistoryStore["record"]>[0] | undefined): void;
  reportError(error: unknown, dir: string): void;
}

/** A DirWatch's settings: the watcher's options with their defaults applied. */
export type DirWatchOptions = Required<Omit<WatcherOptions, "history" | "onError" | "dirs">>;

/** Files read at once per directory. */
const READERS = 8;

interface Entry {
  sig?: string;
  hash?: string;
  lastValidStatus?: HandoffStatus;
  lastReadMs: number;
  seen: number;
}

/** statfs magic numbers of filesystems where inotify-style notification misses remote changes. */
const NETWORK_FS = new Set<number>([
  0x6969, // NFS
  0x517b, // SMB
  0xff534d42, // CIFS
  0xfe534d42, // SMB2
  0x65735546, // FUSE (sshfs, rclone, …)
  0x01021997, // 9p
  0x00c36400, // Ceph
  0x73757245, // Coda
  0x5346414f, // AFS
  0x6b414653, // kAFS
  0x7461636f, // OCFS2
  0x01161970, // GFS2
  0x0bd00bd0, // Lustre
  0x786f4256, // VirtualBox shared folders
]);

/** Whether a statfs filesystem type (Linux magic number) is a network or FUSE filesystem. */
export function isNetworkFsType(type: number | bigint): boolean {
  return NETWORK_FS.has(Number(type) >>> 0);
}

/** Whether `dir` is on a network filesystem (Linux statfs magic), as far as can be told. */
export async function isNetworkFilesystem(dir: string): Promise<boolean> {
  if (process.platform !== "linux") return false;
  try {
    const st = await statfs(dir);
    return isNetworkFsType(st.type);
  } catch {
    return false;
  }
}

export class DirWatch {
  readonly entries = new Map<string, Entry>();
  readonly dirty = new Set<string>();
  mode: "watch" | "poll" | "missing" = "missing";
  untracked = 0;
  lastScanMs?: number;
  lastError?: string;
  private fsw?: FSWatcher;
  private timer?: NodeJS.Timeout;
  private drainTimer?: NodeJS.Timeout;
  private scanRun?: Promise<void>;
  private scanNext?: Promise<void>;
  private drainRun?: Promise<void>;
  private gen = 0;
  private stopped = false;
  private pollEveryMs: number;
  private first = true;
  private realDir: string;
  /** Device and inode of the directory fs.watch follows (a recreated directory is followed anew). */
  private dirId?: string;

  constructor(
    readonly dir: string,
    private readonly w: DirWatchHost,
    private readonly o: DirWatchOptions,
  ) {
    this.pollEveryMs = o.pollMs;
    this.realDir = dir;
  }

  async start(): Promise<void> {
    await this.scan();
    await this.drain("initial");
    this.first = false;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  stop(): void {
    this.stopped = true;
    this.fsw?.close();
    this.fsw = undefined;
    clearTimeout(this.timer);
    clearTimeout(this.drainTimer);
  }

  status(): DirectoryStatus {
    const s: DirectoryStatus = { dir: this.dir, mode: this.mode, tracked: this.entries.size, untracked: this.untracked };
    if (this.lastScanMs !== undefined) s.lastScanMs = this.lastScanMs;
    if (this.lastError !== undefined) s.lastError = this.lastError;
    return s;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    await this.scan();
    await this.drain(this.mode === "watch" ? "watch" : "poll");
  }

  /** Start fs.watch, or decide to poll. */
  private async follow(): Promise<void> {
    if (this.mode !== "missing" || this.stopped) return;
    let mode: "watch" | "poll" = this.o.mode === "poll" ? "poll" : "watch";
    if (this.o.mode === "auto" && (await isNetworkFilesystem(this.dir))) mode = "poll";
    if (mode === "watch") {
      try {
        const fsw = fsWatch(this.dir, { persistent: false }, (_event, filename) => this.onEvent(filename));
        fsw.on("error", (e) => {
          this.w.reportError(e, this.dir);
          this.fsw?.close();
          this.fsw = undefined;
          // The directory went away or notification broke: fall back to scanning.
          this.mode = "missing";
          this.schedule(0);
        });
        this.fsw = fsw;
      } catch (e) {
        this.w.reportError(e, this.dir);
        mode = "poll";
      }
    }
    this.mode = mode;
  }

  private onEvent(filename: string | Buffer | null): void {
    if (this.stopped) return;
    const name = filename === null ? null : filename.toString();
    if (name === null) {
      this.schedule(0); // the kernel could not say which file: rescan
      return;
    }
    if (!isHandoffFileName(name)) return;
    // New names wait in `dirty` until read; a burst of creations cannot queue more than maxFiles of them.
    if (!this.entries.has(name) && (this.entries.size >= this.o.maxFiles || this.dirty.size >= this.o.maxFiles)) {
      this.untracked = Math.max(this.untracked, 1);
      if (this.entries.size < this.o.maxFiles) this.schedule(this.o.pollMs); // room left: a scan picks it up
      return;
    }
    this.dirty.add(name);
    this.kickDrain(5);
  }

  private kickDrain(ms: number): void {
    if (this.drainTimer || this.stopped) return;
    this.drainTimer = setTimeout(() => {
      this.drainTimer = undefined;
      void this.drain(this.mode === "poll" ? "poll" : "watch");
    }, ms);
    this.drainTimer.unref?.();
  }

  /**
   * Full pass over the directory: stat each tracked file, find new and
   * removed ones. Resolves when a pass that started after the call is done
   * (a call during a pass waits for it and one more).
   */
  scan(): Promise<void> {
    if (!this.scanRun) {
      this.scanRun = this.scanOnce().finally(() => (this.scanRun = undefined));
      return this.scanRun;
    }
    this.scanNext ??= this.scanRun.then(() => {
      this.scanNext = undefined;
      return this.scan();
    });
    return this.scanNext;
  }

  private async scanOnce(): Promise<void> {
    const started = this.o.now();
    try {
      let exists = true;
      try {
        this.realDir = await realpath(this.dir);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT" && (e as NodeJS.ErrnoException).code !== "ENOTDIR") throw e;
        exists = false;
      }
      if (!exists) {
        if (this.mode !== "missing") {
          this.fsw?.close();
          this.fsw = undefined;
          this.mode = "missing";
        }
        for (const name of this.entries.keys()) this.dirty.add(name);
        if (this.first && this.w.history) for (const name of this.w.history.presentNames(this.dir)) this.dirty.add(name);
        this.lastError = "the directory does not exist";
        return;
      }
      const st = await stat(this.dir);
      const id = `${st.dev}:${st.ino}`;
      if (this.dirId !== undefined && this.dirId !== id && this.mode !== "missing") {
        this.fsw?.close();
        this.fsw = undefined;
        this.mode = "missing";
      }
      this.dirId = id;
      await this.follow();
      const gen = ++this.gen;
      let total = 0;
      const d = await opendir(this.dir, { bufferSize: 256 });
      for await (const ent of d) {
        if (this.stopped) return;
        if (!isHandoffFileName(ent.name)) continue;
        total++;
        let e = this.entries.get(ent.name);
        if (!e) {
          if (this.entries.size >= this.o.maxFiles) continue;
          e = { lastReadMs: 0, seen: gen };
          this.entries.set(ent.name, e);
        }
        e.seen = gen;
        if (e.sig === undefined) {
          this.dirty.add(ent.name); // new (or never read): read it, no stat needed first
          continue;
        }
        const sig = await signature(path.join(this.dir, ent.name));
        if (sig !== e.sig) this.dirty.add(ent.name);
      }
      for (const [name, e] of this.entries) if (e.seen !== gen) this.dirty.add(name);
      if (this.first && this.w.history) {
        for (const name of this.w.history.presentNames(this.dir)) if (!this.entries.has(name)) this.dirty.add(name);
      }
      this.untracked = Math.max(0, total - this.entries.size);
      this.lastError = undefined;
    } catch (e) {
      this.lastError = e instanceof Error ? e.message : String(e);
      this.w.reportError(e, this.dir);
    } finally {
      const took = this.o.now() - started;
      this.lastScanMs = took;
      // Polling spends at most a fifth of the time scanning.
      this.pollEveryMs = Math.max(this.o.pollMs, took * 4);
      this.schedule(this.mode === "watch" ? this.o.rescanMs : this.pollEveryMs);
    }
  }

  /** Read every dirty file once and report what changed. A call during a pass waits for that pass. */
  drain(source: ObservationSource): Promise<void> {
    this.drainRun ??= this.drainOnce(source).finally(() => (this.drainRun = undefined));
    return this.drainRun;
  }

  private async drainOnce(source: ObservationSource): Promise<void> {
    let wait = Infinity;
    const names = [...this.dirty];
    let next = 0;
    // A few reads at a time (the file system answers them in parallel); never more than READERS × maxBytes in memory.
    const reader = async () => {
      while (next < names.length && !this.stopped) {
        const name = names[next++] as string;
        const e = this.entries.get(name);
        const now = this.o.now();
        if (e && now - e.lastReadMs < this.o.minReadIntervalMs) {
          wait = Math.min(wait, this.o.minReadIntervalMs - (now - e.lastReadMs));
          continue;
        }
        this.dirty.delete(name);
        await this.readOne(name, source);
      }
    };
    await Promise.all(Array.from({ length: Math.min(READERS, names.length) }, reader));
    if (this.dirty.size && !this.stopped) this.kickDrain(Number.isFinite(wait) ? Math.max(1, wait) : 5);
  }

  private async readOne(name: string, source: ObservationSource): Promise<void> {
    const prior = this.entries.get(name);
    let snap: Snapshot | undefined;
    let sig: string | undefined;
    try {
      snap = this.mode === "missing" ? undefined : await readSnapshot(this.dir, name, { maxBytes: this.o.maxBytes, realDir: this.realDir });
      sig = snap?.sig ?? (snap ? await signature(path.join(this.dir, name)) : undefined);
    } catch (e) {
      this.w.reportError(e, this.dir);
      return;
    }
    const now = this.o.now();
    const reported = prior?.hash !== undefined;
    if (!snap) {
      if (prior) this.entries.delete(name);
      const last = this.w.history?.last(this.dir, name);
      if (!reported && !last?.present) return;
      this.w.emit(
        {
          dir: this.dir,
          name,
          taskId: name.slice(0, -5),
          kind: "removed",
          observedAtMs: now,
          source,
          ...(prior?.lastValidStatus ? { previousStatus: prior.lastValidStatus } : {}),
        },
        undefined,
      );
      return;
    }
    let e = prior;
    if (!e) {
      if (this.entries.size >= this.o.maxFiles) {
        this.untracked++;
        return;
      }
      e = { lastReadMs: 0, seen: this.gen };
      this.entries.set(name, e);
    }
    e.lastReadMs = now;
    e.sig = sig;
    let known: { hash?: string; lastValidStatus?: HandoffStatus; present: boolean } | undefined =
      prior?.hash !== undefined
        ? { hash: prior.hash, present: true, ...(prior.lastValidStatus ? { lastValidStatus: prior.lastValidStatus } : {}) }
        : undefined;
    if (!known && this.w.history) known = this.w.history.last(this.dir, name);
    if (known?.present && known.hash === snap.hash) {
      e.hash = snap.hash;
      if (known.lastValidStatus) e.lastValidStatus = known.lastValidStatus;
      if (source === "initial")
        this.w.emit(
          { dir: this.dir, name, taskId: taskIdOf(snap, name), kind: "added", snapshot: snap, observedAtMs: now, source },
          undefined,
        );
      return;
    }
    const previousStatus = known?.present ? known.lastValidStatus : undefined;
    e.hash = snap.hash;
    const stepNow = step(previousStatus, snap);
    // An illegal step does not move the baseline (see the history store).
    if (snap.valid && stepNow.step !== "illegal") e.lastValidStatus = snap.record.status;
    const change: HandoffChange = {
      dir: this.dir,
      name,
      taskId: taskIdOf(snap, name),
      kind: reported || known?.present ? "changed" : "added",
      snapshot: snap,
      observedAtMs: now,
      source,
      ...(previousStatus ? { previousStatus } : {}),
      ...stepNow,
    };
    this.w.emit(change, { dir: this.dir, name, observedAtMs: now, source, snapshot: snap });
  }
}

function step(prev: HandoffStatus | undefined, snap: Snapshot): { step?: ObservedStep; stepProblem?: string } {
  const r = observedStep(prev, snap);
  return { ...(r.step ? { step: r.step } : {}), ...(r.problem ? { stepProblem: r.problem } : {}) };
}

function taskIdOf(snap: Snapshot, name: string): string {
  return snap.valid ? snap.record.task_id : name.slice(0, -5);
}

async function signature(file: string): Promise<string | undefined> {
  try {
    const st = await stat(file);
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  } catch {
    return undefined;
  }
}
