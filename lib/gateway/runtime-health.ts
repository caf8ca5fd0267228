// Whether the console can reach its MACP runtime, watched all the time so
// that an outage is named as what it is: "the runtime at 10.0.0.5:50051 is
// unreachable", not "the console is down". One cheap unary call (ListModes)
// every few seconds, more often while it fails; the state changes only on a
// definite answer (a reply, or a transport failure), and every change is
// logged once. Pages read it from GET /status/runtime (lib/server/status-routes.ts).
import { ConnectError } from "@connectrpc/connect";
import type { GatewayLogger } from "./logger";
import type { RuntimeReader } from "./runtime-client";

export interface RuntimeHealthStatus {
  /** null until the first probe has answered. */
  reachable: boolean | null;
  kind: RuntimeReader["kind"];
  /** Address shown to people (host:port or URL). */
  address: string;
  /** When the current state began (Unix ms; 0 before the first answer). */
  sinceMs: number;
  /** Last probe's answer time (Unix ms). */
  checkedAtMs: number;
  /** Why the runtime is unreachable, in one line ("" when reachable). */
  error: string;
}

export interface RuntimeHealthOptions {
  runtime: RuntimeReader;
  /** Shown instead of runtime.address (e.g. the embedded runtime's agent address). */
  address?: string;
  logger: GatewayLogger;
  /** Probe interval while reachable. Default 5 s. */
  intervalMs?: number;
  /** Probe interval while unreachable. Default 2 s. */
  downIntervalMs?: number;
  /** A probe that takes longer counts as a failure. Default 3 s. */
  timeoutMs?: number;
  now?: () => number;
}

export class RuntimeHealth {
  private state: RuntimeHealthStatus;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly ac = new AbortController();
  private readonly listeners = new Set<(s: RuntimeHealthStatus) => void>();
  private readonly now: () => number;

  constructor(private readonly options: RuntimeHealthOptions) {
    this.now = options.now ?? Date.now;
    this.state = {
      reachable: null,
      kind: options.runtime.kind,
      address: options.address ?? options.runtime.address,
      sinceMs: 0,
      checkedAtMs: 0,
      error: "",
    };
  }

  status(): RuntimeHealthStatus {
    return { ...this.state };
  }

  /** Called on every change of `reachable`; returns the unsubscribe. */
  onChange(listener: (s: RuntimeHealthStatus) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Probe now and then keep probing until close(). */
  start(): void {
    void this.tick();
  }

  /** One probe; resolves with the status after it. */
  async probe(): Promise<RuntimeHealthStatus> {
    const { runtime, timeoutMs = 3_000 } = this.options;
    let error = "";
    try {
      await runtime.ping(this.ac.signal, timeoutMs);
    } catch (e) {
      if (this.ac.signal.aborted) return this.status();
      error = e instanceof ConnectError ? e.rawMessage : e instanceof Error ? e.message : String(e);
    }
    this.record(error === "", error.split("\n")[0]?.slice(0, 300) ?? "");
    return this.status();
  }

  close(): void {
    this.ac.abort();
    clearTimeout(this.timer);
    this.listeners.clear();
  }

  private async tick(): Promise<void> {
    if (this.ac.signal.aborted) return;
    const s = await this.probe();
    if (this.ac.signal.aborted) return;
    const delay = s.reachable ? (this.options.intervalMs ?? 5_000) : (this.options.downIntervalMs ?? 2_000);
    this.timer = setTimeout(() => void this.tick(), delay);
    this.timer.unref?.();
  }

  private record(reachable: boolean, error: string): void {
    const now = this.now();
    const changed = this.state.reachable !== reachable;
    this.state = { ...this.state, reachable, checkedAtMs: now, error: reachable ? "" : error, sinceMs: changed ? now : this.state.sinceMs };
    if (!changed) return;
    const { logger } = this.options;
    if (reachable) logger.info({ runtime: this.state.address }, "runtime reachable");
    else logger.warn({ runtime: this.state.address, err: error }, "runtime unreachable: the console keeps serving what it has and retries");
    for (const l of this.listeners) l(this.status());
  }
}
