// The session list behind WatchSessionList.
//
// Reference-counted by list watchers. While at least one browser watches:
// - the shared LifecycleHub holds ONE upstream WatchSessions stream (its
//   initial sync + ListSessions form the snapshot; every event is an
//   idempotent upsert keyed by session_id);
// - every session's summary is folded from its envelopes with the shared
//   projection reducer (reduceSession). Each session is read through a
//   passive subscribe from the number of envelopes already folded; the
//   history length comes from GetSession metadata (1 + Σ message_count).
//   Terminal sessions: read the history, close the upstream stream and cache
//   the summary forever. OPEN/SUSPENDED sessions: keep one shared upstream
//   subscription for live envelopes while watched.
// - catch-up work (GetSession + history replay) runs at most `concurrency`
//   at a time; live subscriptions do not hold a slot.
// Watchers pull batches: changes are coalesced per session over `flushMs`
// (the latest summary of each changed session is always delivered; nothing
// is dropped). When the last watcher leaves, every upstream stream closes
// after `graceMs`.
import { setMaxListeners } from "node:events";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  HeartbeatSchema,
  WatchSessionListResponseSchema,
  type SessionSummary,
  type WatchSessionListResponse,
} from "@/lib/gen/baton/v1/console_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import type { SessionView } from "@/lib/macp/projections/session";
import { backoffMs, Limiter, linkedController, sleep } from "./async";
import { isAbortError, upstreamError } from "./errors";
import type { LifecycleHub, LifecycleUpdate } from "./lifecycle-hub";
import type { GatewayLogger } from "./logger";
import type { RuntimeReader } from "./runtime-client";
import { fresherMetadata, historyCount, isTerminalState, SessionFold, toSummary } from "./sequencer";

export interface SessionIndexOptions {
  logger: GatewayLogger;
  /** Close upstream streams this long after the last watcher leaves. Default 2000 ms. */
  graceMs?: number;
  /** Coalescing window for list changes. Default 25 ms. */
  flushMs?: number;
  /** Heartbeat interval on list streams. Default 15 000 ms. */
  heartbeatMs?: number;
  /** Concurrent upstream catch-up reads (GetSession + history). Default 16. */
  concurrency?: number;
  /** Rows per snapshot chunk. Default 250. */
  snapshotChunk?: number;
  /** Publish a session even if its history is still incomplete after this long. Default 10 000 ms. */
  settleTimeoutMs?: number;
}

interface Tracked {
  id: string;
  meta: SessionMetadata;
  fold: SessionFold;
  /** A summary may be shown: history folded (or reading it failed or timed out). */
  settled: boolean;
  /** Terminal and fully folded: the summary can never change again. */
  final: boolean;
  /** False once the runtime refused to let the console read the history. */
  readable: boolean;
  summary: SessionSummary | null;
  /** The running sync (catch-up then live), if any. */
  live: AbortController | null;
  retries: number;
  retryTimer: NodeJS.Timeout | null;
}

interface Activation {
  ac: AbortController;
  releaseHub: () => void;
  /** Sessions the runtime reported in this activation. */
  members: Set<string>;
  /** Sessions of the first ListSessions; the snapshot completes when all settled. */
  initial: Set<string> | null;
  loaded: boolean;
}

/**
 * A server-side consumer of the index (e.g. the inbox): it keeps the index
 * active like a browser watching the list, and gets every session's latest
 * metadata and folded view instead of list rows.
 */
export interface IndexObserver {
  /** A session's current state; `view` is undefined when its history cannot be read. */
  update(meta: SessionMetadata, view: SessionView | undefined): void;
  /** Every session known at activation has been delivered at least once. */
  loaded(): void;
  /** The runtime could not be reached before the first snapshot. */
  failed(err: ConnectError): void;
}

class ListWatcher {
  readonly pending = new Map<string, SessionSummary>();
  snapshotSent = false;
  failure: ConnectError | null = null;
  private wakeUp: (() => void) | null = null;

  offer(summary: SessionSummary): void {
    const id = summary.metadata?.sessionId ?? "";
    // Re-insert so the map's order follows the latest change.
    this.pending.delete(id);
    this.pending.set(id, summary);
    this.wake();
  }

  fail(err: ConnectError): void {
    this.failure = err;
    this.wake();
  }

  wake(): void {
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  /** Wait until woken, `ms` elapse or `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener("abort", done, { once: true });
      this.wakeUp = done;
    });
  }
}

export class SessionIndex {
  private readonly tracked = new Map<string, Tracked>();
  private readonly watchers = new Set<ListWatcher>();
  private readonly observers = new Set<IndexObserver>();
  private activation: Activation | null = null;
  private graceTimer: NodeJS.Timeout | null = null;
  private readonly limiter: Limiter;
  private readonly graceMs: number;
  private readonly flushMs: number;
  private readonly heartbeatMs: number;
  private readonly chunk: number;
  private readonly settleTimeoutMs: number;
  private warnedUnreadable = false;
  private closed = false;

  constructor(
    private readonly runtime: RuntimeReader,
    private readonly hub: LifecycleHub,
    private readonly options: SessionIndexOptions,
  ) {
    this.limiter = new Limiter(options.concurrency ?? 16);
    this.graceMs = options.graceMs ?? 2_000;
    this.flushMs = options.flushMs ?? 25;
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.chunk = Math.max(1, options.snapshotChunk ?? 250);
    this.settleTimeoutMs = options.settleTimeoutMs ?? 10_000;
  }

  /** Number of browsers watching the list. */
  get watcherCount(): number {
    return this.watchers.size;
  }

  /**
   * Observe every session (see IndexObserver) until `signal` aborts. Sessions
   * already settled are delivered at once, then every change.
   */
  observe(observer: IndexObserver, signal: AbortSignal): void {
    if (this.closed) throw new ConnectError("console is shutting down", Code.Unavailable);
    if (signal.aborted) return;
    this.observers.add(observer);
    if (this.graceTimer) {
      clearTimeout(this.graceTimer);
      this.graceTimer = null;
    }
    const act = this.activation ?? this.activate();
    for (const id of act.members) {
      const t = this.tracked.get(id);
      if (t?.settled) observer.update(t.meta, t.readable ? t.fold.view : undefined);
    }
    if (act.loaded) observer.loaded();
    signal.addEventListener("abort", () => this.removeObserver(observer), { once: true });
  }

  private removeObserver(o: IndexObserver): void {
    if (!this.observers.delete(o)) return;
    this.maybeIdle();
  }

  private get consumers(): number {
    return this.watchers.size + this.observers.size;
  }

  /** Whether the index holds upstream streams (watchers present or in grace). */
  get active(): boolean {
    return this.activation !== null;
  }

  /**
   * The list stream for one browser: snapshot chunks (the last has
   * complete=true), then upserts, with heartbeats throughout. Ends when
   * `signal` aborts.
   */
  async *watch(signal: AbortSignal): AsyncGenerator<WatchSessionListResponse> {
    if (this.closed) throw new ConnectError("console is shutting down", Code.Unavailable);
    const w = new ListWatcher();
    this.addWatcher(w);
    // Leave on abort even if this generator is parked at a `yield` the
    // transport never resumes, so the upstream streams can close.
    const leave = () => this.removeWatcher(w);
    signal.addEventListener("abort", leave, { once: true });
    try {
      let nextHeartbeat = Date.now() + this.heartbeatMs;
      while (!signal.aborted) {
        if (w.failure) throw w.failure;
        const act = this.activation;
        const snapshotReady = !w.snapshotSent && act !== null && act.loaded;
        if (w.pending.size === 0 && !snapshotReady) {
          const wait = nextHeartbeat - Date.now();
          if (wait > 0) await w.wait(wait, signal);
          if (signal.aborted) return;
          if (Date.now() >= nextHeartbeat) {
            nextHeartbeat = Date.now() + this.heartbeatMs;
            yield heartbeat();
          }
          continue;
        }
        // Let a burst accumulate, then deliver the latest row of each session.
        if (this.flushMs > 0 && w.pending.size > 0) await sleep(this.flushMs, signal);
        if (signal.aborted) return;
        if (w.failure) throw w.failure;
        const rows = [...w.pending.values()];
        w.pending.clear();
        if (!w.snapshotSent) {
          const complete = this.activation?.loaded === true;
          if (rows.length === 0 && !complete) continue;
          for (let i = 0; i < rows.length || (i === 0 && complete); i += this.chunk) {
            const part = rows.slice(i, i + this.chunk);
            const last = i + this.chunk >= rows.length;
            yield create(WatchSessionListResponseSchema, {
              item: { case: "snapshot", value: { sessions: part, complete: complete && last } },
            });
          }
          if (complete) w.snapshotSent = true;
        } else {
          for (const row of rows) yield create(WatchSessionListResponseSchema, { item: { case: "upsert", value: row } });
        }
        if (Date.now() >= nextHeartbeat) {
          nextHeartbeat = Date.now() + this.heartbeatMs;
          yield heartbeat();
        }
      }
    } finally {
      signal.removeEventListener("abort", leave);
      this.removeWatcher(w);
    }
  }

  /**
   * A summary for one session: from the index when it is kept current, else
   * read once from the runtime (and cached forever if terminal). Throws
   * NOT_FOUND for unknown sessions.
   */
  async summary(sessionId: string, signal?: AbortSignal): Promise<SessionSummary> {
    const t = this.tracked.get(sessionId);
    if (t?.final && t.summary) return t.summary;
    if (t && this.activation?.members.has(sessionId) && t.settled && t.summary && t.live) return t.summary;
    const release = await this.limiter.acquire(signal);
    const ac = linkedController(signal);
    try {
      let meta: SessionMetadata;
      try {
        meta = await this.runtime.getSession(sessionId, ac.signal);
      } catch (err) {
        throw upstreamError(err, `session ${sessionId}`);
      }
      const fold = new SessionFold(sessionId, meta.mode);
      const head = historyCount(meta);
      const timer = setTimeout(() => ac.abort(), this.settleTimeoutMs);
      try {
        if (fold.count < head) {
          for await (const env of this.runtime.subscribeSession(sessionId, 0, ac.signal)) {
            fold.add(env);
            if (fold.count >= head) break;
          }
        }
      } catch (err) {
        if (signal?.aborted) throw upstreamError(err, `session ${sessionId}`);
        if (!ac.signal.aborted) {
          const ce = upstreamError(err, `session ${sessionId}`);
          if (ce.code !== Code.PermissionDenied) throw ce;
          return toSummary(meta, undefined, 0);
        }
        // Timed out: return what was folded.
      } finally {
        clearTimeout(timer);
      }
      const summary = toSummary(meta, fold.view, fold.count);
      if (isTerminalState(meta.state) && fold.count >= head) {
        const cached = this.tracked.get(sessionId) ?? this.newTracked(meta);
        if (!cached.final) {
          cached.meta = meta;
          cached.fold = fold;
          cached.settled = true;
          cached.final = true;
          cached.summary = summary;
          this.tracked.set(sessionId, cached);
        }
      }
      return summary;
    } finally {
      ac.abort();
      release();
    }
  }

  /** Stop everything now (server shutdown). */
  close(): void {
    this.closed = true;
    for (const w of this.watchers) w.fail(new ConnectError("console is shutting down", Code.Unavailable));
    for (const o of [...this.observers]) o.failed(new ConnectError("console is shutting down", Code.Unavailable));
    this.observers.clear();
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.graceTimer = null;
    this.deactivate();
  }

  // ------------------------------------------------------------ watchers

  private addWatcher(w: ListWatcher): void {
    this.watchers.add(w);
    if (this.graceTimer) {
      clearTimeout(this.graceTimer);
      this.graceTimer = null;
    }
    const act = this.activation ?? this.activate();
    for (const id of act.members) {
      const t = this.tracked.get(id);
      if (t?.settled && t.summary) w.pending.set(id, t.summary);
    }
    w.wake();
  }

  private removeWatcher(w: ListWatcher): void {
    if (!this.watchers.delete(w)) return;
    this.maybeIdle();
  }

  /** Close upstream streams (after the grace period) once nobody consumes the index. */
  private maybeIdle(): void {
    if (this.consumers > 0 || !this.activation) return;
    if (this.graceMs <= 0) this.deactivate();
    else if (!this.graceTimer) {
      this.graceTimer = setTimeout(() => {
        this.graceTimer = null;
        if (this.consumers === 0) this.deactivate();
      }, this.graceMs);
      this.graceTimer.unref?.();
    }
  }

  private activate(): Activation {
    const ac = new AbortController();
    // One listener per session sync hangs off this signal.
    setMaxListeners(0, ac.signal);
    const act: Activation = {
      ac,
      releaseHub: () => undefined,
      members: new Set(),
      initial: null,
      loaded: false,
    };
    this.activation = act;
    act.releaseHub = this.hub.acquire((u) => {
      if (this.activation === act) this.onLifecycle(act, u);
    });
    return act;
  }

  private deactivate(): void {
    const act = this.activation;
    if (!act) return;
    this.activation = null;
    act.ac.abort();
    act.releaseHub();
    for (const t of this.tracked.values()) {
      if (t.retryTimer) clearTimeout(t.retryTimer);
      t.retryTimer = null;
      t.live?.abort();
      t.live = null;
      // Not watched any more: an open session's summary will need a catch-up,
      // and a session the runtime refused to show us gets one more try.
      if (!t.final) {
        t.settled = false;
        t.readable = true;
      }
    }
  }

  // ------------------------------------------------------------ upstream

  private onLifecycle(act: Activation, u: LifecycleUpdate): void {
    if (u.kind === "event") {
      if (u.event.session) this.upsert(act, u.event.session);
      return;
    }
    if (u.kind === "list") {
      for (const m of u.sessions) this.upsert(act, m);
      if (act.initial === null) {
        act.initial = new Set(u.sessions.map((m) => m.sessionId));
        this.checkLoaded(act);
      }
      return;
    }
    if (!u.listed && act.initial === null) {
      // Never reached the runtime in this activation: tell the waiting browsers.
      const err = upstreamError(u.error, "session list");
      for (const w of this.watchers) if (!w.snapshotSent) w.fail(err);
      for (const o of [...this.observers]) o.failed(err);
    }
  }

  private newTracked(meta: SessionMetadata): Tracked {
    return {
      id: meta.sessionId,
      meta,
      fold: new SessionFold(meta.sessionId, meta.mode),
      settled: false,
      final: false,
      readable: true,
      summary: null,
      live: null,
      retries: 0,
      retryTimer: null,
    };
  }

  private upsert(act: Activation, incoming: SessionMetadata): void {
    const id = incoming.sessionId;
    if (id === "") return;
    let t = this.tracked.get(id);
    if (!t) {
      t = this.newTracked(incoming);
      this.tracked.set(id, t);
    }
    const isNew = !act.members.has(id);
    act.members.add(id);
    if (t.final) {
      if (isNew && t.summary) this.publish(t);
      return;
    }
    const before = t.meta;
    t.meta = fresherMetadata(t.meta, incoming);
    const changed = before !== t.meta;
    if (!t.live && !t.retryTimer) {
      if (t.readable) {
        this.startSync(act, t);
        return;
      }
      if (!t.settled) {
        this.settle(act, t);
        return;
      }
    }
    if (t.settled && (changed || isNew)) {
      if (this.maybeFinalize(t)) return;
      this.publish(t);
    }
  }

  /** Terminal and every envelope folded: cache forever and stop reading. */
  private maybeFinalize(t: Tracked): boolean {
    if (!t.settled || !isTerminalState(t.meta.state)) return false;
    if (t.readable && t.fold.count < historyCount(t.meta)) return false;
    t.final = t.readable;
    t.summary = this.summarize(t);
    this.publish(t, false);
    if (t.final) {
      t.live?.abort();
      t.live = null;
    }
    return true;
  }

  private summarize(t: Tracked): SessionSummary {
    return toSummary(t.meta, t.readable ? t.fold.view : undefined, t.fold.count);
  }

  private publish(t: Tracked, recompute = true): void {
    if (recompute || !t.summary) t.summary = this.summarize(t);
    const act = this.activation;
    if (!act || !act.members.has(t.id)) return;
    for (const w of this.watchers) w.offer(t.summary);
    for (const o of this.observers) o.update(t.meta, t.readable ? t.fold.view : undefined);
  }

  private settle(act: Activation, t: Tracked): void {
    if (t.settled) return;
    t.settled = true;
    if (!this.maybeFinalize(t)) this.publish(t);
    this.checkLoaded(act);
  }

  private checkLoaded(act: Activation): void {
    if (act.loaded || act.initial === null) return;
    for (const id of act.initial) {
      const t = this.tracked.get(id);
      if (t && act.members.has(id) && !t.settled) return;
    }
    act.loaded = true;
    for (const w of this.watchers) w.wake();
    for (const o of this.observers) o.loaded();
  }

  private scheduleRetry(act: Activation, t: Tracked): void {
    if (act.ac.signal.aborted || t.retryTimer || t.final) return;
    const delay = backoffMs(t.retries++, 500, 30_000);
    t.retryTimer = setTimeout(() => {
      t.retryTimer = null;
      if (this.activation === act && !t.live && !t.final) this.startSync(act, t);
    }, delay);
    t.retryTimer.unref?.();
  }

  private startSync(act: Activation, t: Tracked): void {
    const ac = linkedController(act.ac.signal);
    t.live = ac;
    void this.sync(act, t, ac).finally(() => {
      if (t.live === ac) t.live = null;
      ac.abort();
    });
  }

  /** Catch up on a session's history, then follow it live (unless terminal). */
  private async sync(act: Activation, t: Tracked, ac: AbortController): Promise<void> {
    const log = this.options.logger;
    let release: (() => void) | null = null;
    let settleTimer: NodeJS.Timeout | null = null;
    const caughtUp = () => {
      if (settleTimer) clearTimeout(settleTimer);
      settleTimer = null;
      release?.();
      release = null;
      this.settle(act, t);
    };
    try {
      release = await this.limiter.acquire(ac.signal);
      const meta = await this.runtime.getSession(t.id, ac.signal);
      t.meta = fresherMetadata(t.meta, meta);
      if (t.fold.count >= historyCount(t.meta)) {
        caughtUp();
        if (t.final || t.live !== ac) return;
      } else {
        settleTimer = setTimeout(() => {
          log.warn({ sessionId: t.id, folded: t.fold.count, expected: historyCount(t.meta) }, "session history incomplete; showing what arrived");
          caughtUp();
        }, this.settleTimeoutMs);
      }
      for await (const env of this.runtime.subscribeSession(t.id, t.fold.count, ac.signal)) {
        const changed = t.fold.add(env);
        if (!t.settled) {
          if (t.fold.count >= historyCount(t.meta)) caughtUp();
        } else if (changed && !this.maybeFinalize(t)) {
          this.publish(t);
        }
        if (t.final) return;
        t.retries = 0;
      }
      if (!ac.signal.aborted) {
        log.info({ sessionId: t.id }, "session subscription ended upstream; resubscribing");
        this.scheduleRetry(act, t);
      }
    } catch (err) {
      if (ac.signal.aborted || isAbortError(err)) return;
      const ce = upstreamError(err, `session ${t.id}`);
      if (ce.code === Code.NotFound) {
        // Evicted or never readable by id: leave it out of this activation.
        act.members.delete(t.id);
        this.checkLoaded(act);
        return;
      }
      if (ce.code === Code.PermissionDenied) {
        t.readable = false;
        if (!this.warnedUnreadable) {
          this.warnedUnreadable = true;
          log.warn({ sessionId: t.id, err }, "the console's runtime identity cannot read session history; list rows will show metadata only (use an observer identity)");
        }
        t.settled = false;
        caughtUp();
        return;
      }
      log.warn({ sessionId: t.id, err }, "session read failed; retrying");
      caughtUp();
      this.scheduleRetry(act, t);
    } finally {
      if (settleTimer) clearTimeout(settleTimer);
      (release as (() => void) | null)?.();
    }
  }
}

function heartbeat(): WatchSessionListResponse {
  return create(WatchSessionListResponseSchema, {
    item: { case: "heartbeat", value: create(HeartbeatSchema, { serverTimeUnixMs: BigInt(Date.now()) }) },
  });
}
