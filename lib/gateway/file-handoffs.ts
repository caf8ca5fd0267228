// v0.1 file-based handoffs in the console process: the directories of
// BATON_HANDOFF_DIRS, followed by one HandoffWatcher that records every
// snapshot change in the SQLite history store ($BATON_DATA_DIR/
// handoff-files.sqlite), and a coalescing fan-out of those changes to browser
// streams. Memory: the watcher bounds what it tracks (maxFiles per
// directory); each browser stream holds at most MAX_PENDING changed names
// between two flushes (past that it sends `overflow`, and the browser reloads
// its page of the list). Lists, pages and timelines are read from the store.
import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import {
  FileHandoffDirectorySchema,
  FileHandoffSchema,
  WatchFileHandoffsResponseSchema,
  type FileHandoff,
  type FileHandoffDirectory,
  type WatchFileHandoffsResponse,
} from "@/lib/gen/baton/v1/files_pb";
import {
  HandoffDirectory,
  HandoffWatcher,
  SqliteHistoryStore,
  type HandoffChange,
  type HandoffSettings,
  type HandoffSummary,
  type Snapshot,
} from "@/lib/handoff-files";
import type { FileRowSource } from "./catalog/file-rows";
import { silentLogger, type GatewayLogger } from "./logger";

export interface FileHandoffsOptions {
  /** Absolute directories (BATON_HANDOFF_DIRS). */
  dirs: readonly string[];
  settings: HandoffSettings;
  /** The history store's file ($BATON_DATA_DIR/handoff-files.sqlite). */
  historyFile: string;
  heartbeatMs?: number;
  /** Changes arriving within this window go out in one message. Default 100 ms. */
  coalesceMs?: number;
  logger?: GatewayLogger;
  now?: () => number;
}

/** Changed names one browser stream holds between flushes before it sends `overflow`. */
export const MAX_PENDING = 256;
/** Description characters a list row carries. */
export const LIST_DESCRIPTION_CHARS = 500;

/** A directory's key in URLs: 12 hex characters of the sha256 of its absolute path. */
export function dirKeyOf(dir: string): string {
  return createHash("sha256").update(dir).digest("hex").slice(0, 12);
}

export interface WatchedDirectory {
  key: string;
  path: string;
  directory: HandoffDirectory;
}

export class FileHandoffs {
  readonly history: SqliteHistoryStore;
  readonly watcher: HandoffWatcher;
  /** Resolves when the first scan of every directory is recorded (never rejects). */
  readonly ready: Promise<void>;
  private readonly byKey = new Map<string, WatchedDirectory>();
  private readonly byPath = new Map<string, WatchedDirectory>();
  private readonly listeners = new Set<(dir: string, name: string) => void>();
  private readonly heartbeatMs: number;
  private readonly coalesceMs: number;
  private readonly log: GatewayLogger;
  private readonly unsubscribe: () => void;
  private readonly errorsLogged = new Map<string, number>();
  private closed = false;

  constructor(options: FileHandoffsOptions) {
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.coalesceMs = options.coalesceMs ?? 100;
    this.log = options.logger ?? silentLogger;
    this.history = new SqliteHistoryStore(options.historyFile);
    const s = options.settings;
    for (const path of options.dirs) {
      const key = dirKeyOf(path);
      const directory = new HandoffDirectory(path, {
        maxBytes: s.maxBytes,
        maxFiles: s.maxFiles,
        lockStaleMs: s.lockStaleMs,
        history: this.history,
        ...(options.now ? { now: options.now } : {}),
      });
      const w = { key, path, directory };
      this.byKey.set(key, w);
      this.byPath.set(path, w);
    }
    this.watcher = new HandoffWatcher({
      dirs: [...this.byPath.keys()],
      mode: s.watchMode,
      pollMs: s.pollMs,
      maxFiles: s.maxFiles,
      maxBytes: s.maxBytes,
      history: this.history,
      onError: (error, dir) => this.logError(error, dir),
    });
    this.unsubscribe = this.watcher.subscribe((c) => this.onChange(c));
    // The first scan of a large directory takes a while: the console serves meanwhile.
    this.ready = this.watcher.start().catch((e: unknown) => this.log.error({ err: e }, "v0.1 handoff watcher failed to start"));
  }

  get directories(): readonly WatchedDirectory[] {
    return [...this.byKey.values()];
  }

  dirByKey(key: string): WatchedDirectory | undefined {
    return this.byKey.get(key);
  }

  dirByPath(path: string): WatchedDirectory | undefined {
    return this.byPath.get(path);
  }

  directoryStatus(): FileHandoffDirectory[] {
    return this.watcher.status().map((st) =>
      create(FileHandoffDirectorySchema, {
        key: dirKeyOf(st.dir),
        path: st.dir,
        mode: st.mode,
        tracked: st.tracked,
        untracked: st.untracked,
        lastError: st.lastError ?? "",
      }),
    );
  }

  private logError(error: unknown, dir: string): void {
    // One line per directory a minute, however often it fails.
    const now = Date.now();
    const last = this.errorsLogged.get(dir) ?? 0;
    if (now - last < 60_000) return;
    this.errorsLogged.set(dir, now);
    this.log.warn({ dir, err: error instanceof Error ? error.message : String(error) }, "v0.1 handoff directory problem");
  }

  private onChange(c: HandoffChange): void {
    this.notify(c.dir, c.name);
  }

  /**
   * Every recorded change, as (directory, file name), after the history store
   * has it: the watcher's and Baton's own writes (recordSnapshot). The
   * catalog's file rows follow these (lib/gateway/catalog/file-rows.ts).
   */
  subscribe(listener: (dir: string, name: string) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** What the catalog's file rows are written from (Gateway.followFileHandoffs). */
  rowSource(): FileRowSource {
    return {
      find: (dir, name) => this.history.find(dir, name),
      toProto: (s) => this.toProto(s),
      keyOf: (dir) => this.keyOf(dir),
      onChange: (listener) => this.subscribe(listener),
      ready: this.ready,
    };
  }

  /** The key of a watched directory, by its path. */
  keyOf(dir: string): string | undefined {
    return this.byPath.get(dir)?.key;
  }

  private notify(dir: string, name: string): void {
    for (const l of this.listeners) l(dir, name);
  }

  /**
   * Record a snapshot Baton read or wrote itself (an action's result, a page
   * read ahead of the watcher), so the answer and the list agree at once. The
   * store keeps each change once, so the watcher's later read adds nothing.
   */
  recordSnapshot(dir: string, snapshot: Snapshot): void {
    try {
      const entry = this.history.record({ dir, name: snapshot.name, observedAtMs: Date.now(), source: "watch", snapshot });
      if (entry) this.notify(dir, snapshot.name);
    } catch (e) {
      this.logError(e, dir);
    }
  }

  /** The proto row of a stored handoff. `full`: the whole description (else clipped). */
  toProto(s: HandoffSummary, full = false): FileHandoff {
    const description = s.description ?? "";
    const clipped = !full && description.length > LIST_DESCRIPTION_CHARS;
    return create(FileHandoffSchema, {
      dirKey: dirKeyOf(s.dir),
      dir: s.dir,
      name: s.name,
      taskId: s.taskId,
      present: s.present,
      valid: s.valid,
      problem: s.problem ?? "",
      hash: s.hash ?? "",
      status: s.status ?? "",
      fromAgent: s.fromAgent ?? "",
      toAgent: s.toAgent ?? "",
      description: clipped ? description.slice(0, LIST_DESCRIPTION_CHARS) : description,
      descriptionTruncated: clipped,
      createdAt: s.createdAt ?? "",
      updatedAt: s.updatedAt ?? "",
      firstSeenUnixMs: BigInt(s.firstSeenMs),
      lastChangeUnixMs: BigInt(s.lastChangeMs),
      snapshots: s.snapshots,
      pruned: s.pruned,
    });
  }

  /**
   * Changes as a browser stream: every handoff that changed since the last
   * message, once (read from the store when the message goes out), at most
   * every `coalesceMs`; a heartbeat first, and whenever nothing changed for
   * `heartbeatMs`.
   */
  async *watch(signal: AbortSignal): AsyncGenerator<WatchFileHandoffsResponse> {
    const pending = new Map<string, { dir: string; name: string }>();
    let overflow = false;
    let wake: (() => void) | null = null;
    const listener = (dir: string, name: string): void => {
      const key = `${dir}\u0000${name}`;
      if (!pending.has(key)) {
        if (pending.size >= MAX_PENDING) overflow = true;
        else pending.set(key, { dir, name });
      }
      wake?.();
    };
    this.listeners.add(listener);
    const onAbort = (): void => wake?.();
    signal.addEventListener("abort", onAbort);
    try {
      // At once, so the browser knows the stream is open (and from when to count heartbeats).
      yield create(WatchFileHandoffsResponseSchema, { item: { case: "heartbeat", value: { serverTimeUnixMs: BigInt(Date.now()) } } });
      while (!signal.aborted && !this.closed) {
        if (pending.size === 0 && !overflow) {
          const changed = await new Promise<boolean>((resolve) => {
            const t = setTimeout(() => {
              wake = null;
              resolve(false);
            }, this.heartbeatMs);
            wake = () => {
              clearTimeout(t);
              wake = null;
              resolve(true);
            };
          });
          if (signal.aborted || this.closed) return;
          if (!changed) {
            yield create(WatchFileHandoffsResponseSchema, { item: { case: "heartbeat", value: { serverTimeUnixMs: BigInt(Date.now()) } } });
            continue;
          }
        }
        // Let a burst of writes settle into one message.
        await new Promise((r) => setTimeout(r, this.coalesceMs));
        if (signal.aborted || this.closed) return;
        const keys = [...pending.values()];
        const over = overflow;
        pending.clear();
        overflow = false;
        const changed: FileHandoff[] = [];
        if (!over) {
          for (const k of keys) {
            const s = this.history.find(k.dir, k.name);
            if (s) changed.push(this.toProto(s));
          }
        }
        yield create(WatchFileHandoffsResponseSchema, { item: { case: "changes", value: { changed, overflow: over } } });
      }
    } finally {
      this.listeners.delete(listener);
      signal.removeEventListener("abort", onAbort);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    this.watcher.stop();
    for (const l of [...this.listeners]) l("", "");
    this.listeners.clear();
    this.history.close();
  }
}
