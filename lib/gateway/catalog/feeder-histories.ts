// The catalog fed by folding session histories: the path for a plain MACP
// runtime, which has no list-row feed (WatchListRows answers UNIMPLEMENTED).
//
// - ONE upstream WatchSessions stream (reconnected with backoff and jitter).
//   Its initial sync (one event per session, streamed by the runtime a page at
//   a time) and every later event are upserts of a session's metadata into the
//   catalog. ListSessions is never called: it answers every session in one
//   message, which grows with history.
// - Sessions whose summary must be (re)read are marked in the catalog
//   (`needs_read`), not held in memory. A scheduler scans those rows (open
//   and suspended ones first) and reads each history through a passive
//   subscribe, at most `concurrency` at a time, folding it with the shared
//   pure reducer (SessionFold) into the list row. Context bytes are dropped
//   before folding, so a session of 300 × 1 MB contexts folds in kilobytes.
// - A terminal session folded to its end is written `final` and never read
//   again, by this process or after a restart. OPEN and SUSPENDED sessions
//   stay followed live (one upstream subscription each, holding no slot once
//   caught up): they are what is in use, and the only sessions held in memory.
// - A restart resumes from the stored rows: final rows are skipped, open ones
//   are read again from their start (the fold state is not persisted), so a
//   restart costs what is open, not what ever happened. Against an external
//   runtime with history, the first start fills the catalog in the
//   background; ListSessionPage answers meanwhile and CatalogStatus (and the
//   log, every few seconds) says how far it got.
// - Failed reads are put off with exponential backoff and jitter, per session,
//   in the catalog (no retry storms, nothing in memory).
import { setMaxListeners } from "node:events";
import { Code, type ConnectError } from "@connectrpc/connect";
import type { CatalogStatus, SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import type { SessionView } from "@/lib/macp/projections/session";
import { Limiter } from "@/lib/base/async-queue";
import { backoffMs, linkedController, sleep } from "@/lib/base/abort";
import { isAbortError, upstreamError } from "../errors";
import { historyCount, isTerminalState, leanEnvelope, SessionFold, toSummary } from "@/lib/macp/projections/summary";
import { fresherMetadata } from "../sequencer";
import { OPEN_STATES, type Feed, type FeedHost } from "./feed";
import { WriteBatch } from "./feeder-histories-batch";
import { HistoryProgress } from "./feeder-histories-progress";
import { followedRow, metadataRow, unreadableRow, type Followed } from "./feeder-histories-rows";
import type { CatalogWrite } from "./store";

export interface HistoryFeedOptions {
  /** Histories read at once (catch-up; followed open sessions hold no slot). */
  concurrency: number;
  /** Writes are batched over this window (and at most `batchRows` rows). */
  flushMs: number;
  batchRows: number;
  /** A read that delivers nothing for this long is given up and retried later. */
  stallMs: number;
  /** Progress is logged this often while reads are pending. */
  progressMs: number;
}

export class HistoryFeed implements Feed {
  readonly mode = "histories";
  private readonly limiter: Limiter;
  private readonly run: AbortController;
  /** Sessions being read or followed: the only per-session state in memory. */
  private readonly followed = new Map<string, Followed>();
  /** Consecutive failed reads per session (only sessions failing right now). */
  private readonly failures = new Map<string, number>();
  private readonly writes: WriteBatch;
  private kick: (() => void) | null = null;
  private kicked = false;
  private openScanDone = false;
  private openLoaded = false;
  private watching = false;
  private readonly progress: HistoryProgress;
  /** Upstream reads started (passive subscribes), for tests and the benchmark. */
  readsStarted = 0;
  /** Sessions whose history was read to its end and written final. */
  sessionsFinalized = 0;

  constructor(
    private readonly host: FeedHost,
    private readonly options: HistoryFeedOptions,
  ) {
    this.limiter = new Limiter(options.concurrency);
    this.progress = new HistoryProgress(host, this.limiter, options.progressMs);
    this.writes = new WriteBatch(options, (rows) => this.store(rows));
    this.run = linkedController(host.signal);
    // Every followed session's subscription links to it.
    setMaxListeners(0, this.run.signal);
  }

  private get isClosed(): boolean {
    return this.run.signal.aborted;
  }

  start(): void {
    const { store, log } = this.host;
    // Rows written from now on are not covered by a list-row feed cursor.
    store.clearCursor();
    const reset = store.resetUnfinished();
    const { known, pending } = store.counts();
    log.info({ known, pending, unfinished: reset }, `session catalog: ${known} sessions stored, ${pending} to read (open or unfinished)`);
    void this.watchLoop();
    void this.scheduleLoop();
  }

  get followedCount(): number {
    return this.followed.size;
  }

  status(): CatalogStatus {
    return this.progress.status();
  }

  *openViews(): Iterable<{ meta: SessionMetadata; view: SessionView }> {
    for (const f of this.followed.values()) {
      if (f.caughtUp && OPEN_STATES.has(f.meta.state)) yield { meta: f.meta, view: f.fold.view };
    }
  }

  get loaded(): boolean {
    return this.openLoaded;
  }

  fresh(sessionId: string): SessionSummary | undefined {
    const f = this.followed.get(sessionId);
    if (f?.caughtUp) return toSummary(f.meta, f.fold.view, f.fold.count);
    const pending = this.writes.get(sessionId);
    if (pending && !pending.needsRead) return pending.summary;
    return undefined;
  }

  // ------------------------------------------------------------ writes

  private queueWrite(w: CatalogWrite): void {
    if (this.isClosed) return;
    this.writes.queue(w);
  }

  /** Write queued rows now. */
  flush(): void {
    this.writes.flush();
  }

  /** Store a batch of rows (WriteBatch's flush). */
  private store(rows: CatalogWrite[]): void {
    let version: number;
    try {
      version = this.host.store.write(rows);
    } catch (err) {
      this.host.log.error({ err, rows: rows.length }, "session catalog write failed");
      this.progress.message = `catalog write failed: ${(err as Error).message}`;
      return;
    }
    this.host.written(version);
    this.progress.report();
  }

  /** The current row of a session (queued write first). */
  private current(id: string): CatalogWrite | undefined {
    return this.writes.get(id) ?? this.host.store.get(id);
  }

  // ------------------------------------------------------------ upstream: lifecycle

  private async watchLoop(): Promise<void> {
    const signal = this.run.signal;
    let attempt = 0;
    while (!signal.aborted) {
      const openedAt = Date.now();
      let failure: unknown = null;
      try {
        for await (const event of this.host.runtime.watchSessions(signal)) {
          if (!this.watching) {
            this.watching = true;
            this.progress.message = "";
          }
          if (event.session) this.onMetadata(event.session);
          this.host.lifecycle({ kind: "event", event });
        }
      } catch (err) {
        failure = err;
      }
      this.watching = false;
      if (signal.aborted) break;
      attempt = Date.now() - openedAt > 10_000 ? 0 : attempt + 1;
      if (failure) {
        const ce = upstreamError(failure, "WatchSessions");
        this.progress.message = `the runtime is unreachable (${ce.rawMessage}); retrying`;
        this.host.log.warn({ err: failure, attempt }, "WatchSessions failed; reconnecting");
        this.host.lifecycle({ kind: "error", error: failure, listed: this.host.store.counts().known > 0 });
      } else this.host.log.info({}, "WatchSessions ended (runtime dropped a slow watcher or restarted); reconnecting");
      await sleep(backoffMs(attempt, 250, 30_000), signal);
    }
  }

  private onMetadata(incoming: SessionMetadata): void {
    const id = incoming.sessionId;
    if (id === "" || this.isClosed) return;
    const f = this.followed.get(id);
    if (f) {
      const before = f.meta;
      f.meta = fresherMetadata(f.meta, incoming);
      if (before !== f.meta && f.caughtUp) this.afterChange(f);
      return;
    }
    const next = metadataRow(this.current(id), incoming);
    if (!next) return;
    this.queueWrite(next.write);
    if (next.read) this.wake();
  }

  // ------------------------------------------------------------ upstream: histories

  private wake(): void {
    this.kicked = true;
    const k = this.kick;
    this.kick = null;
    k?.();
  }

  private async scheduleLoop(): Promise<void> {
    const signal = this.run.signal;
    while (!signal.aborted) {
      this.kicked = false;
      // Open and suspended sessions first (the inbox waits for them), then the rest.
      for (const openOnly of [true, false]) {
        let after = 0;
        for (;;) {
          if (signal.aborted) return;
          this.flush();
          const batch = this.host.store.pendingReads(after, Date.now(), 64, openOnly);
          if (batch.length === 0) break;
          for (const p of batch) {
            after = p.position;
            if (this.followed.has(p.sessionId)) continue;
            let release: () => void;
            try {
              release = await this.limiter.acquire(signal);
            } catch {
              return;
            }
            if (signal.aborted) {
              release();
              return;
            }
            if (this.followed.has(p.sessionId)) {
              release();
              continue;
            }
            this.startRead(p.sessionId, release);
          }
        }
        if (openOnly && !this.openScanDone) {
          this.openScanDone = true;
          this.checkOpenLoaded();
        }
      }
      this.progress.report(true);
      if (this.kicked) continue;
      // Idle until something new is due: a kick, or the earliest deferred read.
      const next = this.host.store.nextDeferred();
      const wait = next === undefined ? 60_000 : Math.max(50, next - Date.now());
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          this.kick = null;
          resolve();
        };
        const timer = setTimeout(done, wait);
        signal.addEventListener("abort", done, { once: true });
        this.kick = done;
        if (this.kicked) done();
      });
    }
  }

  private checkOpenLoaded(): void {
    if (this.openLoaded || !this.openScanDone) return;
    for (const f of this.followed.values()) if (!f.caughtUp && OPEN_STATES.has(f.meta.state)) return;
    this.openLoaded = true;
    this.host.openLoaded();
  }

  private startRead(id: string, release: () => void): void {
    const row = this.current(id);
    const meta = row?.summary.metadata;
    if (!meta) {
      release();
      return;
    }
    const f: Followed = { id, meta, fold: new SessionFold(id, meta.mode), ac: linkedController(this.run.signal), caughtUp: false };
    this.followed.set(id, f);
    void this.read(f, release).finally(() => {
      f.ac.abort();
      if (this.followed.get(id) === f) this.followed.delete(id);
      // No longer followed (closed, or to be read again): observers drop what they knew of it.
      this.host.openClosed(id);
      this.checkOpenLoaded();
    });
  }

  /** A change of a caught-up session: write it, tell the inbox, stop when final. */
  private afterChange(f: Followed): boolean {
    const row = followedRow(f, false);
    this.queueWrite(row);
    if (OPEN_STATES.has(f.meta.state)) this.host.openUpdate(f.meta, f.fold.view);
    if (row.final) {
      this.sessionsFinalized++;
      f.ac.abort();
      return true;
    }
    return false;
  }

  private async read(f: Followed, slot: () => void): Promise<void> {
    let release: (() => void) | null = slot;
    const free = () => {
      release?.();
      release = null;
    };
    let stall: NodeJS.Timeout | null = null;
    let stalled = false;
    const arm = () => {
      if (stall) clearTimeout(stall);
      stall = f.caughtUp
        ? null
        : setTimeout(() => {
            stalled = true;
            f.ac.abort();
          }, this.options.stallMs);
    };
    try {
      // The row's metadata (from WatchSessions, kept current by its events)
      // says how long the history is: no GetSession per read.
      const caughtUpNow = () => {
        f.caughtUp = true;
        this.failures.delete(f.id);
        if (stall) clearTimeout(stall);
        stall = null;
        const final = this.afterChange(f);
        // An open session stays followed without holding a slot; a final one frees its slot once its stream is closed.
        if (!final) free();
        return final;
      };
      this.readsStarted++;
      arm();
      if (f.fold.count >= historyCount(f.meta) && caughtUpNow()) return;
      for await (const env of this.host.runtime.subscribeSession(f.id, 0, f.ac.signal)) {
        const changed = f.fold.add(leanEnvelope(env));
        if (!f.caughtUp) {
          arm();
          if (f.fold.count >= historyCount(f.meta) && caughtUpNow()) return;
        } else if (changed && this.afterChange(f)) return;
      }
      if (!f.ac.signal.aborted) {
        this.host.log.info({ sessionId: f.id }, "session subscription ended upstream; reading it again");
        this.retryLater(f, null);
      }
    } catch (err) {
      if (this.run.signal.aborted) return;
      if (stalled) {
        this.host.log.warn(
          { sessionId: f.id, folded: f.fold.count, expected: historyCount(f.meta) },
          "session history read stalled; retrying later",
        );
        this.retryLater(f, null);
        return;
      }
      if (f.ac.signal.aborted || isAbortError(err)) return;
      const ce = upstreamError(err, `session ${f.id}`);
      if (ce.code === Code.NotFound || ce.code === Code.PermissionDenied) {
        // Gone, or not readable by the console's identity: the row keeps the metadata only.
        if (ce.code === Code.PermissionDenied) this.progress.warnUnreadable(f.id);
        const terminal = isTerminalState(f.meta.state);
        this.queueWrite(unreadableRow(f.meta, ce.code === Code.NotFound));
        if (!terminal && ce.code !== Code.NotFound) this.retryLater(f, ce, 300_000);
        return;
      }
      this.host.log.warn({ sessionId: f.id, err }, "session read failed; retrying later");
      this.retryLater(f, ce);
    } finally {
      if (stall) clearTimeout(stall);
      free();
    }
  }

  /** Keep what was folded, and read the session again after a backoff. */
  private retryLater(f: Followed, err: ConnectError | null, minMs = 0): void {
    const n = (this.failures.get(f.id) ?? 0) + 1;
    this.failures.set(f.id, n);
    if (this.failures.size > 10_000) this.failures.delete(this.failures.keys().next().value as string);
    if (f.fold.count > 0) this.queueWrite({ ...followedRow(f, true), needsRead: true, final: false });
    this.flush();
    this.host.store.deferRead(f.id, Date.now() + Math.max(minMs, backoffMs(n - 1, 500, 60_000)));
    if (err) this.progress.message = `some session reads failed (${err.rawMessage}); retrying`;
    this.wake();
  }

  /** Stop reading; write what is queued. */
  close(): void {
    if (this.isClosed) return;
    this.flush();
    this.run.abort();
    this.kick?.();
  }
}
