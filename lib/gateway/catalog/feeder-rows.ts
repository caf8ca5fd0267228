// The catalog fed by Baton's runtime: its list-row feed
// (baton.v1.RuntimeCatalogService.WatchListRows) streams every session's list
// row, kept by the runtime in the same transaction as its log. The console
// reads no history to build its list.
//
// - ONE upstream WatchListRows stream, from the catalog's cursor (the
//   runtime's store_id and the last change applied). Each response is applied
//   in one catalog transaction together with the cursor it reaches, so a
//   restart, a dropped connection or a RESOURCE_EXHAUSTED cut (a watcher too
//   slow for a burst) resumes exactly after what was written: nothing lost,
//   nothing sent twice. Reconnects use backoff with jitter.
// - A new store_id (the runtime's data was replaced) or `restarted` empties
//   the catalog's rows in the transaction that applies the first new ones.
// - Session streams learn lifecycle changes from the rows' metadata (no
//   WatchSessions stream).
// - The inbox needs the folded view of OPEN and SUSPENDED sessions (offers,
//   tasks, who acts next), which a row does not carry: those sessions, and
//   only those, are followed live through passive subscribes (feeder-open.ts),
//   at most `concurrency` catching up at once. They never write the catalog:
//   its rows come from the feed alone.
// - CatalogStatus (the UI's and the log's progress) compares the feed's head
//   with the cursor.
import { setMaxListeners } from "node:events";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { CatalogStatusSchema, type CatalogStatus, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import type { WatchListRowsResponse } from "@/lib/gen/baton/v1/runtime_catalog_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import type { SessionView } from "@/lib/macp/projections/session";
import { backoffMs, linkedController, sleep } from "@/lib/base/abort";
import { upstreamError } from "../errors";
import type { Feed, FeedHost } from "./feed";
import { OpenFollower } from "./feeder-open";
import type { CatalogWrite } from "./store";

export interface RowFeedOptions {
  /** Rows per WatchListRows response (one catalog transaction each). */
  maxRows: number;
  /** Open sessions catching up at once (the inbox's live views). */
  concurrency: number;
  /** An open session's read that delivers nothing for this long is retried later. */
  stallMs: number;
  /** Progress is logged this often while catching up. */
  progressMs: number;
}

/** Drop a response's decoded rows once they are applied (see the feed loop). */
export function releaseRows(res: WatchListRowsResponse): void {
  res.rows = [];
}

export class RowFeed implements Feed {
  readonly mode = "rows";
  private readonly run: AbortController;
  private readonly open: OpenFollower;
  /** Newest change in the runtime's store, as last reported. */
  private head = 0n;
  /** The current stream has sent every row stored when it began. */
  private caughtUp = false;
  private everCaughtUp = false;
  private message = "";
  private lastProgress = 0;
  private warnedBadRow = false;
  /** Rows applied to the catalog (tests, benchmark). */
  rowsApplied = 0;
  /** WatchListRows streams opened (1 + reconnects). */
  streamsOpened = 0;
  /** The runtime has answered with its feed at least once. */
  answered = false;

  constructor(
    private readonly host: FeedHost,
    private readonly options: RowFeedOptions,
    /** The runtime has no list-row feed (or refuses it to this identity): the feeder switches to histories. */
    private readonly unimplemented: () => void,
  ) {
    this.run = linkedController(host.signal);
    // Every followed session's subscription links to it.
    setMaxListeners(0, this.run.signal);
    this.open = new OpenFollower(host, this.run.signal, options.concurrency, options.stallMs);
  }

  start(): void {
    const cursor = this.host.store.cursor;
    this.open.seed(this.host.store);
    void this.loop(cursor?.change ?? 0n);
  }

  /** Open sessions followed for the inbox (history reads of open sessions). */
  get openReads(): number {
    return this.open.reads;
  }

  get followedCount(): number {
    return this.open.size;
  }

  get loaded(): boolean {
    return this.open.loadedSent;
  }

  *openViews(): Iterable<{ meta: SessionMetadata; view: SessionView }> {
    yield* this.open.views();
  }

  fresh(): SessionSummary | undefined {
    // Rows are written as they arrive: the catalog is never behind what the feeder holds.
    return undefined;
  }

  flush(): void {
    // Nothing is queued: every response is applied when it arrives.
  }

  status(): CatalogStatus {
    const { known } = this.host.store.counts();
    if (!this.answered) {
      // Not heard from the runtime yet: the stored rows answer, but how far behind they are is
      // unknown. The message says why once a connection attempt failed.
      return create(CatalogStatusSchema, {
        backfilling: true,
        sessionsKnown: BigInt(known),
        sessionsIndexed: BigInt(known),
        message: this.message,
      });
    }
    const position = this.host.store.cursor?.change ?? 0n;
    const behind = this.head > position ? this.head - position : 0n;
    const backfilling = !this.caughtUp && behind > 0n;
    // Changes still to read include superseded ones (a session's row moves to
    // its latest change): estimate the sessions by the rows per change so far.
    let remaining = 0;
    if (backfilling) {
      const ratio = position > 0n ? Math.min(1, known / Number(position)) : 1;
      remaining = Math.ceil(Number(behind) * ratio);
    }
    const message = this.message || (backfilling ? `reading the runtime's list rows: change ${position} of ${this.head}` : "");
    return create(CatalogStatusSchema, { backfilling, sessionsKnown: BigInt(known + remaining), sessionsIndexed: BigInt(known), message });
  }

  private async loop(startedAt: bigint): Promise<void> {
    const signal = this.run.signal;
    const { log } = this.host;
    let attempt = 0;
    let first = true;
    while (!signal.aborted) {
      const openedAt = Date.now();
      const cursor = this.host.store.cursor;
      let failure: unknown = null;
      let answered = false;
      this.caughtUp = false;
      try {
        this.streamsOpened++;
        const request = { afterChange: cursor?.change ?? 0n, storeId: cursor?.storeId ?? "", maxRows: this.options.maxRows };
        for await (const res of this.host.runtime.watchListRows(request, signal)) {
          if (!answered) {
            answered = true;
            this.answered = true;
            this.message = "";
            if (first) {
              first = false;
              log.info(
                { storeId: res.storeId, after: String(request.afterChange), head: String(res.head) },
                `session catalog: following the runtime's list rows from change ${startedAt} (head ${res.head})`,
              );
            }
          }
          this.apply(res);
          // Release the decoded rows now: the stream's async iteration (Connect's
          // generators and ours) keeps the last response reachable for a while after
          // it is applied, long enough under a fill's allocation rate for its rows
          // to survive two scavenges and be promoted to V8's old space, where
          // they stay until a major collection. Measured at 20,000 sessions, that
          // promoted garbage was most of the console's extra RSS while filling.
          releaseRows(res);
        }
      } catch (err) {
        failure = err;
      }
      this.caughtUp = false;
      if (signal.aborted) break;
      const refused = !answered && failure !== null ? ConnectError.from(failure) : null;
      if (refused?.code === Code.Unimplemented || refused?.code === Code.PermissionDenied) {
        if (refused.code === Code.Unimplemented) {
          log.info({}, "session catalog: the runtime has no list-row feed (a plain MACP runtime); reading session histories instead");
        } else {
          log.warn(
            { reason: refused.rawMessage },
            "session catalog: the runtime refused its list-row feed to the console's identity (not an observer); following WatchSessions and session histories instead",
          );
        }
        this.close();
        this.unimplemented();
        return;
      }
      attempt = Date.now() - openedAt > 10_000 ? 0 : attempt + 1;
      const at = String(this.host.store.cursor?.change ?? 0n);
      if (failure !== null) {
        const ce = upstreamError(failure, "WatchListRows");
        if (ce.code === Code.ResourceExhausted) {
          this.message = "";
          log.info(
            { attempt, cursor: at, reason: ce.rawMessage },
            "WatchListRows cut off (RESOURCE_EXHAUSTED); resuming from the stored cursor",
          );
        } else {
          this.message = `the runtime is unreachable (${ce.rawMessage}); retrying`;
          log.warn({ err: failure, attempt, cursor: at }, "WatchListRows failed; reconnecting from the stored cursor");
        }
        this.host.lifecycle({ kind: "error", error: failure, listed: this.host.store.counts().known > 0 });
      } else
        log.info({ cursor: at }, "WatchListRows ended (the runtime restarted or dropped the watcher); resuming from the stored cursor");
      await sleep(backoffMs(attempt, 250, 30_000), signal);
    }
  }

  /** One response: its rows and the cursor they reach, in one transaction. */
  private apply(res: WatchListRowsResponse): void {
    const { store, log } = this.host;
    if (res.storeId === "") throw new ConnectError("WatchListRows answered without a store_id", Code.Internal);
    const cursor = store.cursor;
    const reset = res.restarted || cursor?.storeId !== res.storeId;
    let position = reset ? 0n : (cursor?.change ?? 0n);
    const rows: CatalogWrite[] = [];
    const metas: SessionMetadata[] = [];
    for (const r of res.rows) {
      // Strictly increasing by contract: anything at or below the cursor is already applied.
      if (r.change <= position) continue;
      position = r.change;
      const summary = r.summary;
      const meta = summary?.metadata;
      if (!summary || !meta || meta.sessionId === "") {
        if (!this.warnedBadRow) log.warn({ change: String(r.change) }, "WatchListRows sent a row without a session; skipped");
        this.warnedBadRow = true;
        continue;
      }
      rows.push({ summary, folded: Number(summary.eventCount), final: r.final, needsRead: false, nextActors: [...r.nextActors] });
      metas.push(meta);
    }
    if (reset) {
      this.head = res.head;
      if (cursor || store.counts().known > 0) {
        log.info(
          { from: cursor?.storeId ?? "", to: res.storeId, restarted: res.restarted },
          "session catalog: the runtime's store was replaced (or its feed restarted); rebuilding the catalog from its list rows",
        );
      }
    } else if (res.head > this.head) this.head = res.head;
    if (rows.length > 0 || reset || position !== cursor?.change) {
      const before = store.version;
      let version: number;
      try {
        version = store.applyFeed(rows, { storeId: res.storeId, change: position }, reset);
      } catch (err) {
        this.message = `catalog write failed: ${(err as Error).message}`;
        log.error({ err, rows: rows.length }, "session catalog write failed");
        throw err; // the stream is reopened from the stored cursor
      }
      this.rowsApplied += rows.length;
      if (reset) this.open.reset();
      if (version !== before) this.host.written(version);
    }
    if (metas.length > 0) this.host.lifecycle({ kind: "list", sessions: metas });
    for (let i = 0; i < rows.length; i++) this.open.row(metas[i] as SessionMetadata, (rows[i] as CatalogWrite).final);
    if (res.caughtUp && !this.caughtUp) {
      this.caughtUp = true;
      if (!this.everCaughtUp) {
        this.everCaughtUp = true;
        log.info(
          { known: store.counts().known, change: String(position) },
          `session catalog complete: ${store.counts().known} sessions indexed from the runtime's list rows`,
        );
      }
      this.open.feedCaughtUp();
    } else if (!this.caughtUp && Date.now() - this.lastProgress >= this.options.progressMs) {
      this.lastProgress = Date.now();
      const st = this.status();
      log.info(
        { known: Number(st.sessionsIndexed), change: String(position), head: String(this.head) },
        `session catalog: ${st.sessionsIndexed} of about ${st.sessionsKnown} sessions indexed (list rows, change ${position} of ${this.head})`,
      );
    }
  }

  close(): void {
    if (this.run.signal.aborted) return;
    this.run.abort();
    this.open.close();
  }
}
