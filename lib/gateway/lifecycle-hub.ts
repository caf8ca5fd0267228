// One shared upstream WatchSessions stream, reference-counted by its users
// (the session index while browsers watch the list, and every SubscribeSession
// that wants lifecycle changes of its session).
//
// WatchSessions events are ephemeral (PROTOCOL.md §8.2): on any stream end the
// hub reconnects with backoff and reconciles with ListSessions, which it also
// calls on the first connect. Listeners receive every event plus each
// ListSessions result; a listener that joins a running hub gets the current
// table as a synthetic list at once. When the last user releases, the stream
// is closed after a grace period.
import type { SessionLifecycleEvent, SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { backoffMs, sleep } from "./async";
import type { GatewayLogger } from "./logger";
import type { RuntimeReader } from "./runtime-client";
import { fresherMetadata } from "./sequencer";

export type LifecycleUpdate =
  | { kind: "event"; event: SessionLifecycleEvent }
  /** Every session the runtime holds (ListSessions, or the hub's table for a late joiner). */
  | { kind: "list"; sessions: SessionMetadata[] }
  /** The runtime could not be reached; `listed` is false until one ListSessions succeeded. */
  | { kind: "error"; error: unknown; listed: boolean };

export type LifecycleListener = (update: LifecycleUpdate) => void;

export interface LifecycleHubOptions {
  /** Keep the upstream open this long after the last release. Default 2000 ms. */
  graceMs?: number;
  logger: GatewayLogger;
}

export class LifecycleHub {
  private readonly listeners = new Set<LifecycleListener>();
  private readonly table = new Map<string, SessionMetadata>();
  private run: AbortController | null = null;
  private graceTimer: NodeJS.Timeout | null = null;
  private listed = false;
  private closed = false;
  private readonly graceMs: number;

  constructor(
    private readonly runtime: RuntimeReader,
    private readonly options: LifecycleHubOptions,
  ) {
    this.graceMs = options.graceMs ?? 2_000;
  }

  /** Whether the upstream loop is running. */
  get active(): boolean {
    return this.run !== null;
  }

  /** Latest metadata the hub has seen for a session (events and lists). */
  metadata(sessionId: string): SessionMetadata | undefined {
    return this.table.get(sessionId);
  }

  /** Start receiving updates; call the returned function to stop. */
  acquire(listener: LifecycleListener): () => void {
    if (this.closed) throw new Error("lifecycle hub is closed");
    this.listeners.add(listener);
    if (this.graceTimer) {
      clearTimeout(this.graceTimer);
      this.graceTimer = null;
    }
    if (!this.run) this.start();
    else if (this.listed) {
      const sessions = [...this.table.values()];
      queueMicrotask(() => {
        if (this.listeners.has(listener)) this.deliver(listener, { kind: "list", sessions });
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.run && !this.graceTimer) {
        if (this.graceMs <= 0) this.stop();
        else {
          this.graceTimer = setTimeout(() => {
            this.graceTimer = null;
            if (this.listeners.size === 0) this.stop();
          }, this.graceMs);
          this.graceTimer.unref?.();
        }
      }
    };
  }

  close(): void {
    this.closed = true;
    this.listeners.clear();
    if (this.graceTimer) clearTimeout(this.graceTimer);
    this.graceTimer = null;
    this.stop();
  }

  private start(): void {
    const ac = new AbortController();
    this.run = ac;
    this.listed = false;
    this.table.clear();
    void this.loop(ac.signal);
  }

  private stop(): void {
    this.run?.abort();
    this.run = null;
    this.listed = false;
  }

  private deliver(listener: LifecycleListener, update: LifecycleUpdate): void {
    try {
      listener(update);
    } catch (err) {
      this.options.logger.error({ err }, "lifecycle listener failed");
    }
  }

  private emit(update: LifecycleUpdate): void {
    for (const l of [...this.listeners]) this.deliver(l, update);
  }

  private remember(meta: SessionMetadata | undefined): void {
    if (!meta || meta.sessionId === "") return;
    this.table.set(meta.sessionId, fresherMetadata(this.table.get(meta.sessionId), meta));
  }

  private async loop(signal: AbortSignal): Promise<void> {
    const log = this.options.logger;
    let attempt = 0;
    while (!signal.aborted) {
      const conn = new AbortController();
      const onAbort = () => conn.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      const openedAt = Date.now();
      // Open the watch first, then list: the watch's initial sync plus the
      // list cover every session whatever the interleaving (§8.2 Races).
      const watched = (async (): Promise<unknown> => {
        try {
          for await (const event of this.runtime.watchSessions(conn.signal)) {
            this.remember(event.session);
            this.emit({ kind: "event", event });
          }
          return null;
        } catch (err) {
          return err;
        }
      })();
      try {
        const sessions = await this.runtime.listSessions(conn.signal);
        if (signal.aborted) break;
        for (const m of sessions) this.remember(m);
        this.listed = true;
        this.emit({ kind: "list", sessions: [...this.table.values()] });
      } catch (error) {
        conn.abort();
        await watched;
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) break;
        log.warn({ err: error, attempt }, "MACP runtime unreachable (ListSessions failed); retrying");
        this.emit({ kind: "error", error, listed: this.listed });
        await sleep(backoffMs(attempt++), signal);
        continue;
      }
      const err = await watched;
      conn.abort();
      signal.removeEventListener("abort", onAbort);
      if (signal.aborted) break;
      // A stream that lived a while was healthy; start the backoff over.
      attempt = Date.now() - openedAt > 10_000 ? 0 : attempt + 1;
      if (err) {
        log.warn({ err }, "WatchSessions failed; reconnecting");
        this.emit({ kind: "error", error: err, listed: this.listed });
      } else log.info({}, "WatchSessions ended (runtime dropped a slow watcher or restarted); reconnecting");
      await sleep(backoffMs(attempt), signal);
    }
  }
}
