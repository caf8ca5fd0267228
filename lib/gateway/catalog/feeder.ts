// Feeds the console's catalog (lib/gateway/catalog/store.ts) from the runtime,
// incrementally, for the console's whole lifetime. Two upstream paths:
//
// - Rows (feeder-rows.ts): Baton's runtime streams every session's list row
//   (baton.v1.RuntimeCatalogService.WatchListRows), kept in the same
//   transaction as its log. The catalog applies them with its cursor; no
//   history is read for the list.
// - Histories (feeder-histories.ts): a plain MACP runtime answers that call
//   UNIMPLEMENTED (and a runtime refuses it, PERMISSION_DENIED, to an identity
//   that is not an observer); the console then follows WatchSessions and
//   folds each session's history itself.
//
// Rows are tried first at start; the first UNIMPLEMENTED (or PERMISSION_DENIED)
// switches to histories for the process's lifetime. Either way this class owns what the
// rest of the gateway listens to: catalog writes (the list), lifecycle
// changes (session streams) and the open sessions' folded views (the inbox).
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { CatalogStatusSchema, type CatalogStatus, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import type { SessionView } from "@/lib/macp/projections/session";
import { Limiter } from "@/lib/base/async-queue";
import { linkedController } from "@/lib/base/abort";
import { upstreamError } from "../errors";
import type { LifecycleListener, LifecycleSource, LifecycleUpdate } from "../lifecycle-hub";
import type { GatewayLogger } from "../logger";
import type { RuntimeReader } from "../runtime-client";
import { historyCount, leanEnvelope, SessionFold, toSummary } from "@/lib/macp/projections/summary";
import type { Feed, FeedHost } from "./feed";
import { HistoryFeed } from "./feeder-histories";
import { RowFeed } from "./feeder-rows";
import type { CatalogStore } from "./store";

export interface CatalogFeederOptions {
  store: CatalogStore;
  runtime: RuntimeReader;
  logger: GatewayLogger;
  /** Histories read at once (catch-up; followed open sessions hold no slot). Default 8. */
  concurrency?: number;
  /** History feed: writes are batched over this window (and at most `batchRows` rows). Default 50 ms. */
  flushMs?: number;
  batchRows?: number;
  /** A read that delivers nothing for this long is given up and retried later. Default 30 s. */
  stallMs?: number;
  /** Progress is logged this often while catching up. Default 5 s. */
  progressMs?: number;
  /** Row feed: rows per WatchListRows response, each applied in one transaction. Default 500. */
  maxRows?: number;
}

/**
 * What the inbox learns about open sessions: every followed session once it
 * is caught up, then after each change; `closed` when it left the open set.
 */
export interface OpenSessionObserver {
  update(meta: SessionMetadata, view: SessionView): void;
  /** The session is no longer open (terminal) or no longer followed. */
  closed(sessionId: string): void;
  /** Every open session known at start has been delivered at least once. */
  loaded(): void;
}

export class CatalogFeeder implements LifecycleSource {
  private readonly store: CatalogStore;
  private readonly runtime: RuntimeReader;
  private readonly log: GatewayLogger;
  private readonly options: CatalogFeederOptions;
  /** Reads for summary() of sessions the catalog does not have complete. */
  private readonly limiter: Limiter;
  private readonly run = new AbortController();
  private readonly lifecycleListeners = new Set<LifecycleListener>();
  private readonly writeListeners = new Set<(version: number) => void>();
  private readonly openObservers = new Set<OpenSessionObserver>();
  private feed: Feed | null = null;
  private rows: RowFeed | null = null;
  private histories: HistoryFeed | null = null;
  private started = false;

  constructor(options: CatalogFeederOptions) {
    this.options = options;
    this.store = options.store;
    this.runtime = options.runtime;
    this.log = options.logger;
    this.limiter = new Limiter(options.concurrency ?? 8);
  }

  private host(): FeedHost {
    return {
      store: this.store,
      runtime: this.runtime,
      log: this.log,
      signal: this.run.signal,
      written: (version) => {
        for (const l of [...this.writeListeners]) l(version);
      },
      lifecycle: (update) => this.emitLifecycle(update),
      openUpdate: (meta, view) => {
        for (const o of [...this.openObservers]) o.update(meta, view);
      },
      openClosed: (id) => {
        for (const o of [...this.openObservers]) o.closed(id);
      },
      openLoaded: () => {
        for (const o of [...this.openObservers]) o.loaded();
      },
    };
  }

  /** Start following the runtime (idempotent): list rows if it has them, else histories. */
  start(): void {
    if (this.started) return;
    this.started = true;
    const { known } = this.store.counts();
    const cursor = this.store.cursor;
    this.log.info(
      { known, storeId: cursor?.storeId ?? "", change: String(cursor?.change ?? 0n) },
      `session catalog: ${known} sessions stored${cursor ? `, list rows read up to change ${cursor.change}` : ""}`,
    );
    this.rows = new RowFeed(
      this.host(),
      {
        maxRows: this.options.maxRows ?? 500,
        concurrency: this.options.concurrency ?? 8,
        stallMs: this.options.stallMs ?? 30_000,
        progressMs: this.options.progressMs ?? 5_000,
      },
      () => this.useHistories(),
    );
    this.feed = this.rows;
    this.rows.start();
  }

  private useHistories(): void {
    if (this.isClosed || this.histories) return;
    // Observers of the row feed's open sessions start over from the history feed.
    for (const { meta } of this.rows?.openViews() ?? []) for (const o of [...this.openObservers]) o.closed(meta.sessionId);
    this.histories = new HistoryFeed(this.host(), {
      concurrency: this.options.concurrency ?? 8,
      flushMs: this.options.flushMs ?? 50,
      batchRows: this.options.batchRows ?? 500,
      stallMs: this.options.stallMs ?? 30_000,
      progressMs: this.options.progressMs ?? 5_000,
    });
    this.feed = this.histories;
    this.histories.start();
  }

  get isClosed(): boolean {
    return this.run.signal.aborted;
  }

  /** "rows" (the runtime's list-row feed), "histories" (a plain MACP runtime) or "starting". */
  get mode(): "rows" | "histories" | "starting" {
    if (this.histories) return "histories";
    return this.rows?.answered ? "rows" : "starting";
  }

  /** Upstream history reads for the list (passive subscribes of the history feed; 0 on the row feed). */
  get readsStarted(): number {
    return this.histories?.readsStarted ?? 0;
  }

  /** Open sessions read for the inbox by the row feed. */
  get openReads(): number {
    return this.rows?.openReads ?? 0;
  }

  /** List rows applied from the runtime's feed. */
  get rowsApplied(): number {
    return this.rows?.rowsApplied ?? 0;
  }

  /** WatchListRows streams opened (1 + reconnects). */
  get rowStreamsOpened(): number {
    return this.rows?.streamsOpened ?? 0;
  }

  /** Sessions whose history was read to its end and written final (history feed). */
  get sessionsFinalized(): number {
    return this.histories?.sessionsFinalized ?? 0;
  }

  /** Sessions followed or being read right now. */
  get followedCount(): number {
    return this.feed?.followedCount ?? 0;
  }

  status(): CatalogStatus {
    if (!this.feed)
      return create(CatalogStatusSchema, {
        backfilling: false,
        sessionsKnown: BigInt(this.store.counts().known),
        sessionsIndexed: BigInt(this.store.counts().known),
        message: "",
      });
    return this.feed.status();
  }

  // ------------------------------------------------------------ listeners

  acquire(listener: LifecycleListener): () => void {
    this.lifecycleListeners.add(listener);
    return () => void this.lifecycleListeners.delete(listener);
  }

  /** Called after every catalog write with the new version. */
  onWrite(listener: (version: number) => void): () => void {
    this.writeListeners.add(listener);
    return () => void this.writeListeners.delete(listener);
  }

  /**
   * A write by the catalog's other writer (v0.1 file rows, file-rows.ts):
   * the list's change notices and the webhooks hear it like the feed's own.
   */
  announce(version: number): void {
    if (this.isClosed) return;
    for (const l of [...this.writeListeners]) l(version);
  }

  /** Follow the open sessions (the inbox) until `signal` aborts. */
  observeOpen(observer: OpenSessionObserver, signal: AbortSignal): void {
    if (this.isClosed) throw new ConnectError("the console is shutting down", Code.Unavailable);
    if (signal.aborted) return;
    this.openObservers.add(observer);
    signal.addEventListener("abort", () => this.openObservers.delete(observer), { once: true });
    if (!this.feed) return;
    for (const { meta, view } of this.feed.openViews()) observer.update(meta, view);
    if (this.feed.loaded) observer.loaded();
  }

  private emitLifecycle(update: LifecycleUpdate): void {
    for (const l of [...this.lifecycleListeners]) {
      try {
        l(update);
      } catch (err) {
        this.log.error({ err }, "lifecycle listener failed");
      }
    }
  }

  // ------------------------------------------------------------ reads for RPCs

  /**
   * One session's list row: from the catalog when it is complete, else read
   * once from the runtime (not stored: the feeder will get to it). Throws
   * NOT_FOUND for unknown sessions.
   */
  async summary(sessionId: string, signal?: AbortSignal): Promise<SessionSummary> {
    const fresh = this.feed?.fresh(sessionId);
    if (fresh) return fresh;
    const row = this.store.get(sessionId);
    if (row && !row.needsRead) return row.summary;
    const release = await this.limiter.acquire(signal);
    const ac = linkedController(signal, this.run.signal);
    try {
      let meta: SessionMetadata;
      try {
        meta = await this.runtime.getSession(sessionId, ac.signal);
      } catch (err) {
        throw upstreamError(err, `session ${sessionId}`);
      }
      const fold = new SessionFold(sessionId, meta.mode);
      const head = historyCount(meta);
      const timer = setTimeout(() => ac.abort(), 10_000);
      try {
        for await (const env of this.runtime.subscribeSession(sessionId, 0, ac.signal)) {
          fold.add(leanEnvelope(env));
          if (fold.count >= head) break;
        }
      } catch (err) {
        if (signal?.aborted) throw upstreamError(err, `session ${sessionId}`);
        if (!ac.signal.aborted) {
          const ce = upstreamError(err, `session ${sessionId}`);
          if (ce.code !== Code.PermissionDenied) throw ce;
          return toSummary(meta, undefined, 0);
        }
      } finally {
        clearTimeout(timer);
      }
      return toSummary(meta, fold.view, fold.count);
    } finally {
      ac.abort();
      release();
    }
  }

  /** Write queued rows now. */
  flush(): void {
    this.feed?.flush();
  }

  /** Stop reading; write what is queued. */
  close(): void {
    if (this.isClosed) return;
    this.feed?.flush();
    this.rows?.close();
    this.histories?.close();
    this.run.abort();
    this.lifecycleListeners.clear();
    this.writeListeners.clear();
    this.openObservers.clear();
  }
}
