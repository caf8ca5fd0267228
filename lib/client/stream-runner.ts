// A resilient server-stream loop used by both stream hooks: connect, read,
// reconnect with exponential backoff (with jitter) after a drop or after
// heartbeat silence, stop on a fatal error or when told the stream is done,
// and abort everything when the outer signal fires (unmount, tab close).
// The resume position is the caller's business: `connect` is called afresh
// for every attempt and reads it from the caller's state.

import { Code, ConnectError } from "@connectrpc/connect";

/** Server heartbeats are expected at least this often. */
export const HEARTBEAT_TIMEOUT_MS = 35_000;
/** How long to keep reading after a session turned terminal while live. */
export const END_DRAIN_MS = 3_000;

export type RunnerDirective = "continue" | "resync" | "end" | "end-soon";

export type RunnerStatus =
  | { phase: "connecting"; attempt: number }
  | { phase: "open"; attempt: number }
  | { phase: "waiting"; attempt: number; retryAt: number; error: string }
  | { phase: "ended"; error?: string; fatal: boolean };

export interface RunnerOptions<M> {
  /** Open one server stream. Called once per attempt. */
  connect(signal: AbortSignal): AsyncIterable<M>;
  /** Called before every attempt (reset per-connection state). */
  onConnect?(attempt: number): void;
  /**
   * Handle one message; return what to do next. Must not throw. May return a
   * promise (e.g. to yield to the browser after heavy work); the next message
   * is read only once it settles.
   */
  onMessage(message: M): RunnerDirective | Promise<RunnerDirective>;
  onStatus(status: RunnerStatus): void;
  heartbeatTimeoutMs?: number;
  endDrainMs?: number;
  backoffMs?(attempt: number): number;
  isFatal?(error: unknown): boolean;
  /** Injected for tests. */
  now?(): number;
}

/**
 * Delay before reconnect attempt `attempt` (1-based): 0.5 s doubling to a
 * 15 s cap, with ±20 % jitter from `random` so tabs do not stampede.
 */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(15_000, 500 * 2 ** Math.max(0, attempt - 1));
  const jitter = 1 + (random() * 0.4 - 0.2);
  return Math.round(base * jitter);
}

/** Errors after which retrying cannot help. */
export function isFatalStreamError(error: unknown): boolean {
  if (!(error instanceof ConnectError)) return false;
  return (
    error.code === Code.NotFound ||
    error.code === Code.InvalidArgument ||
    error.code === Code.PermissionDenied ||
    error.code === Code.Unauthenticated ||
    error.code === Code.Unimplemented
  );
}

const NETWORK_ERROR = /failed to fetch|networkerror|network error|load failed|err_/i;

export function describeStreamError(error: unknown): string {
  const raw = error instanceof ConnectError ? error.rawMessage : error instanceof Error ? error.message : "";
  if (NETWORK_ERROR.test(raw)) return "Network error: no connection to the console server";
  if (error instanceof ConnectError) {
    if (error.code === Code.NotFound) return "Not found";
    if (error.code === Code.Unavailable) return "Console server unavailable";
    if (error.code === Code.DeadlineExceeded) return "No heartbeat from the console server";
    return error.rawMessage || Code[error.code];
  }
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

class HeartbeatTimeout extends Error {
  constructor() {
    super("No heartbeat from the console server");
    this.name = "HeartbeatTimeout";
  }
}

function sleep(ms: number, signal: AbortSignal, wake: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || wake.aborted) return resolve();
    const done = (): void => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      wake.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    wake.addEventListener("abort", done, { once: true });
  });
}

export interface RunnerHandle {
  /** Skip the current backoff wait and reconnect now (e.g. on `online`). */
  retryNow(): void;
  /**
   * Apply a directive decided outside onMessage (e.g. by a deferred fold):
   * "resync" reconnects now, "end" stops, "end-soon" starts the drain timer.
   */
  command(directive: Exclude<RunnerDirective, "continue">): void;
  /** Resolves when the loop has stopped. */
  done: Promise<void>;
}

/** Run the stream until `signal` aborts, a fatal error, or an `end` directive. */
export function runResilientStream<M>(options: RunnerOptions<M>, signal: AbortSignal): RunnerHandle {
  const heartbeatMs = options.heartbeatTimeoutMs ?? HEARTBEAT_TIMEOUT_MS;
  const drainMs = options.endDrainMs ?? END_DRAIN_MS;
  const backoff = options.backoffMs ?? ((n: number) => backoffDelay(n));
  const fatal = options.isFatal ?? isFatalStreamError;
  const now = options.now ?? Date.now;
  let wake = new AbortController();
  /** Hook for command(): set per connection. */
  let current: ((d: Exclude<RunnerDirective, "continue">) => void) | undefined;

  const done = (async () => {
    let failures = 0;
    let attempt = 0;
    while (!signal.aborted) {
      attempt += 1;
      options.onConnect?.(attempt);
      options.onStatus({ phase: "connecting", attempt });
      const conn = new AbortController();
      const abortConn = (): void => conn.abort();
      signal.addEventListener("abort", abortConn, { once: true });
      // Mutated from callbacks (timers, command), so kept in a box.
      const box: { outcome: "ended" | "resync" | "dropped"; heartbeatLost: boolean } = { outcome: "dropped", heartbeatLost: false };
      let watchdog: ReturnType<typeof setTimeout> | undefined;
      let drain: ReturnType<typeof setTimeout> | undefined;
      const arm = (): void => {
        if (watchdog) clearTimeout(watchdog);
        watchdog = setTimeout(() => {
          box.heartbeatLost = true;
          conn.abort(new HeartbeatTimeout());
        }, heartbeatMs);
      };
      let error: unknown;
      const apply = (directive: RunnerDirective): boolean => {
        if (directive === "end" || directive === "resync") {
          box.outcome = directive === "end" ? "ended" : "resync";
          return true;
        }
        if (directive === "end-soon" && !drain) {
          drain = setTimeout(() => {
            box.outcome = "ended";
            conn.abort();
          }, drainMs);
        }
        return false;
      };
      current = (d) => {
        if (apply(d)) conn.abort();
      };
      try {
        arm();
        let opened = false;
        for await (const message of options.connect(conn.signal)) {
          arm();
          if (!opened) {
            opened = true;
            failures = 0;
            options.onStatus({ phase: "open", attempt });
          }
          const result = options.onMessage(message);
          const directive = typeof result === "string" ? result : await result;
          if (apply(directive) || conn.signal.aborted) break;
        }
      } catch (err) {
        error = box.heartbeatLost ? new HeartbeatTimeout() : err;
      } finally {
        current = undefined;
        if (watchdog) clearTimeout(watchdog);
        if (drain) clearTimeout(drain);
        signal.removeEventListener("abort", abortConn);
        conn.abort();
      }
      if (signal.aborted) return;
      if (box.outcome === "ended") {
        options.onStatus({ phase: "ended", fatal: false });
        return;
      }
      if (box.outcome === "resync") continue;
      if (error !== undefined && fatal(error)) {
        options.onStatus({ phase: "ended", fatal: true, error: describeStreamError(error) });
        return;
      }
      failures += 1;
      const delay = backoff(failures);
      options.onStatus({
        phase: "waiting",
        attempt,
        retryAt: now() + delay,
        error: error === undefined ? "The console server closed the stream" : describeStreamError(error),
      });
      wake = new AbortController();
      await sleep(delay, signal, wake.signal);
    }
  })();

  return {
    retryNow: () => wake.abort(),
    command: (d) => current?.(d),
    done,
  };
}
