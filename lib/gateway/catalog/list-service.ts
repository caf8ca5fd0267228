// The session list served from the catalog: ListSessionPage (one window of a
// filtered, sorted query), WatchSessionChanges (version, the query's total
// and the ids of changed rows, coalesced per watcher) and, until every
// browser uses those, WatchSessionList (the whole list as a snapshot in
// chunks, then upserts) read from the catalog rather than from memory.
import { create } from "@bufbuild/protobuf";
import {
  HeartbeatSchema,
  ListSessionPageResponseSchema,
  SessionListChangeSchema,
  WatchSessionChangesResponseSchema,
  WatchSessionListResponseSchema,
  type ListSessionPageResponse,
  type WatchSessionChangesResponse,
  type WatchSessionListResponse,
} from "@/lib/gen/baton/v1/console_pb";
import { DEFAULT_STUCK_AFTER_MS } from "@/lib/macp/projections/status";
import { sleep } from "@/lib/base/abort";
import type { CatalogFeeder } from "./feeder";
import { nameFileParties, type PeopleNames } from "./file-rows";
import { queryKey, type CatalogQuery } from "./query";
import type { CatalogStore } from "./store";

export interface ListServiceOptions {
  /** Changes are coalesced over this window per watcher. Default 250 ms. */
  coalesceMs?: number;
  heartbeatMs?: number;
  /** Changed ids per change message (the contract says at most 256). */
  maxIds?: number;
  /** The stuck threshold (BATON_STUCK_AFTER_MINUTES). Default 15 min. */
  stuckAfterMs?: number;
  /** A "stuck" watcher re-counts this often: rows become stuck as time passes, not only on writes. Default 5 s. */
  stuckRecountMs?: number;
  /** Clock (tests). */
  now?: () => number;
  /** Who the console's people are now (v0.1 file rows name them: from → to). */
  people?: () => Promise<PeopleNames>;
}

/** Signals from the feeder's writes, as an awaitable "something changed since you last looked". */
class ChangeSignal {
  private dirty = false;
  private waiter: (() => void) | null = null;

  notify(): void {
    this.dirty = true;
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  /** True when a change arrived; false when `ms` passed or `signal` aborted. */
  wait(ms: number, signal: AbortSignal): Promise<boolean> {
    if (this.dirty) {
      this.dirty = false;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const done = (changed: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.waiter = null;
        if (changed) this.dirty = false;
        resolve(changed);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), Math.max(0, ms));
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiter = () => done(true);
    });
  }
}

export class ListService {
  private readonly coalesceMs: number;
  private readonly heartbeatMs: number;
  private readonly maxIds: number;
  readonly stuckAfterMs: number;
  private readonly stuckRecountMs: number;
  private readonly now: () => number;
  private readonly people: (() => Promise<PeopleNames>) | undefined;
  /** Totals per query at a version, shared by watchers of the same query. */
  private readonly totals = new Map<string, { version: number; total: number }>();

  constructor(
    private readonly store: CatalogStore,
    private readonly feeder: CatalogFeeder,
    options: ListServiceOptions = {},
  ) {
    this.coalesceMs = options.coalesceMs ?? 250;
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.maxIds = Math.min(256, options.maxIds ?? 256);
    this.stuckAfterMs = options.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS;
    this.stuckRecountMs = options.stuckRecountMs ?? 5_000;
    this.now = options.now ?? Date.now;
    this.people = options.people;
  }

  /** The query as the store runs it now: "stuck" becomes a cut-off time (waiting since then or earlier). */
  private atNow(query: CatalogQuery): CatalogQuery {
    if (!query.stuck) return query;
    return { ...query, stuckBefore: this.now() - this.stuckAfterMs };
  }

  page(query: CatalogQuery, offset: number, limit: number): ListSessionPageResponse {
    // Rows still queued for writing are written first, so a page never lags behind a change notice.
    this.feeder.flush();
    const p = this.store.page(this.atNow(query), offset, limit);
    return create(ListSessionPageResponseSchema, {
      sessions: p.rows,
      offset,
      total: BigInt(p.total),
      version: BigInt(p.version),
      status: this.feeder.status(),
      stuckAfterMs: BigInt(this.stuckAfterMs),
    });
  }

  private total(query: CatalogQuery): number {
    // Stuck rows change with the clock, not only with writes: counted afresh.
    if (query.stuck) return this.store.count(this.atNow(query));
    const key = queryKey(query);
    const version = this.store.version;
    const hit = this.totals.get(key);
    if (hit && hit.version === version) return hit.total;
    const total = this.store.count(query);
    this.totals.delete(key);
    this.totals.set(key, { version, total });
    if (this.totals.size > 256) this.totals.delete(this.totals.keys().next().value as string);
    return total;
  }

  /** page() with the people among v0.1 file rows' agents named (ListSessionPage, the list's first view). */
  async pageNamed(query: CatalogQuery, offset: number, limit: number): Promise<ListSessionPageResponse> {
    const res = this.page(query, offset, limit);
    if (this.people && res.sessions.some((s) => s.fileHandoff)) nameFileParties(res.sessions, await this.people());
    return res;
  }

  private heartbeatOf<T>(make: (hb: ReturnType<typeof heartbeat>) => T): T {
    return make(heartbeat());
  }

  /** Change notices for one query until `signal` aborts. */
  async *watchChanges(query: CatalogQuery, signal: AbortSignal): AsyncGenerator<WatchSessionChangesResponse> {
    const changes = new ChangeSignal();
    const stop = this.feeder.onWrite(() => changes.notify());
    try {
      let seen = this.store.version;
      let lastTotal = this.total(query);
      yield create(WatchSessionChangesResponseSchema, {
        item: {
          case: "change",
          value: create(SessionListChangeSchema, { version: BigInt(seen), total: BigInt(lastTotal), status: this.feeder.status() }),
        },
      });
      let nextHeartbeat = Date.now() + this.heartbeatMs;
      let nextRecount = query.stuck ? Date.now() + this.stuckRecountMs : Infinity;
      while (!signal.aborted) {
        const changed = await changes.wait(Math.min(nextHeartbeat, nextRecount) - Date.now(), signal);
        if (signal.aborted) return;
        if (!changed && Date.now() >= nextRecount) {
          // Sessions became stuck (or stopped being) with time: a changed total means other rows; the browser reads its windows again.
          nextRecount = Date.now() + this.stuckRecountMs;
          const total = this.total(query);
          if (total !== lastTotal) {
            lastTotal = total;
            yield create(WatchSessionChangesResponseSchema, {
              item: {
                case: "change",
                value: create(SessionListChangeSchema, {
                  version: BigInt(this.store.version),
                  total: BigInt(total),
                  overflow: true,
                  status: this.feeder.status(),
                }),
              },
            });
          }
        }
        if (changed) {
          // Let a burst settle into one notice.
          await sleep(this.coalesceMs, signal);
          if (signal.aborted) return;
          const c = this.store.changedSince(seen, this.maxIds);
          if (c.version === seen) continue;
          seen = c.version;
          lastTotal = this.total(query);
          yield create(WatchSessionChangesResponseSchema, {
            item: {
              case: "change",
              value: create(SessionListChangeSchema, {
                version: BigInt(c.version),
                total: BigInt(lastTotal),
                sessionIds: c.ids,
                overflow: c.overflow,
                status: this.feeder.status(),
              }),
            },
          });
        }
        if (Date.now() >= nextHeartbeat) {
          nextHeartbeat = Date.now() + this.heartbeatMs;
          yield this.heartbeatOf((value) => create(WatchSessionChangesResponseSchema, { item: { case: "heartbeat", value } }));
        }
      }
    } finally {
      stop();
    }
  }

  /**
   * WatchSessionList from the catalog: the snapshot in chunks (the server
   * holds one chunk at a time), then the latest row of every changed session.
   */
  async *watchList(signal: AbortSignal, chunk = 250): AsyncGenerator<WatchSessionListResponse> {
    const changes = new ChangeSignal();
    const stop = this.feeder.onWrite(() => changes.notify());
    try {
      this.feeder.flush();
      let seen = this.store.version;
      let after = 0;
      for (;;) {
        const part = this.store.scan(after, chunk);
        const last = part.rows.length < chunk;
        yield create(WatchSessionListResponseSchema, { item: { case: "snapshot", value: { sessions: part.rows, complete: last } } });
        after = part.last;
        if (last || signal.aborted) break;
      }
      let nextHeartbeat = Date.now() + this.heartbeatMs;
      while (!signal.aborted) {
        const changed = await changes.wait(nextHeartbeat - Date.now(), signal);
        if (signal.aborted) return;
        if (changed) {
          await sleep(Math.min(this.coalesceMs, 25), signal);
          for (;;) {
            const c = this.store.changedSince(seen, 1_000);
            for (const id of c.ids) {
              const row = this.store.get(id);
              if (row) yield create(WatchSessionListResponseSchema, { item: { case: "upsert", value: row.summary } });
            }
            if (!c.overflow) {
              seen = c.version;
              break;
            }
            // Continue from just below the last listed version (a few rows may come twice: upserts are idempotent).
            seen = Math.max(seen, c.through - 1);
          }
        }
        if (Date.now() >= nextHeartbeat) {
          nextHeartbeat = Date.now() + this.heartbeatMs;
          yield this.heartbeatOf((value) => create(WatchSessionListResponseSchema, { item: { case: "heartbeat", value } }));
        }
      }
    } finally {
      stop();
    }
  }
}

function heartbeat() {
  return create(HeartbeatSchema, { serverTimeUnixMs: BigInt(Date.now()) });
}
