// The console gateway: one runtime client, the shared lifecycle hub, the
// session index and the counters behind GetGatewayStats. The Connect routes
// (routes.ts) are a thin layer over this object.
import type { LifecycleHubOptions } from "./lifecycle-hub";
import { LifecycleHub } from "./lifecycle-hub";
import { silentLogger, type GatewayLogger } from "./logger";
import type { RuntimeReader } from "./runtime-client";
import { SessionIndex, type SessionIndexOptions } from "./session-index";
import type { SessionStreamDeps } from "./session-stream";

export interface GatewayOptions {
  runtime: RuntimeReader;
  logger?: GatewayLogger;
  /** Keep upstream streams this long after the last browser leaves. Default 2000 ms. */
  graceMs?: number;
  /** Heartbeat interval on browser streams. Default 15 000 ms. */
  heartbeatMs?: number;
  /** Coalescing window for list upserts. Default 25 ms. */
  flushMs?: number;
  /** Concurrent upstream catch-up reads. Default 16. */
  concurrency?: number;
  /** Shown in GetGatewayStats; defaults to the runtime client's address. */
  runtimeAddress?: string;
}

export interface GatewayStats {
  upstreamSubscriptions: number;
  browserStreams: number;
  runtimeKind: string;
  runtimeAddress: string;
}

export class Gateway {
  readonly runtime: RuntimeReader;
  readonly hub: LifecycleHub;
  readonly index: SessionIndex;
  readonly logger: GatewayLogger;
  readonly streamDeps: SessionStreamDeps;
  private browser = 0;
  private closed = false;
  private readonly runtimeAddress: string;

  constructor(options: GatewayOptions) {
    this.runtime = options.runtime;
    this.logger = options.logger ?? silentLogger;
    this.runtimeAddress = options.runtimeAddress ?? options.runtime.address;
    const hubOptions: LifecycleHubOptions = { logger: this.logger, graceMs: options.graceMs };
    this.hub = new LifecycleHub(this.runtime, hubOptions);
    const indexOptions: SessionIndexOptions = {
      logger: this.logger,
      graceMs: options.graceMs,
      heartbeatMs: options.heartbeatMs,
      flushMs: options.flushMs,
      concurrency: options.concurrency,
    };
    this.index = new SessionIndex(this.runtime, this.hub, indexOptions);
    this.streamDeps = { runtime: this.runtime, hub: this.hub, logger: this.logger, heartbeatMs: options.heartbeatMs };
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Count a browser-facing stream until it ends or the browser goes away. */
  async *trackBrowserStream<T>(stream: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
    this.browser++;
    let counted = true;
    const uncount = () => {
      if (!counted) return;
      counted = false;
      this.browser--;
    };
    signal.addEventListener("abort", uncount, { once: true });
    try {
      yield* stream;
    } finally {
      signal.removeEventListener("abort", uncount);
      uncount();
    }
  }

  stats(): GatewayStats {
    return {
      upstreamSubscriptions: this.runtime.openStreams,
      browserStreams: this.browser,
      runtimeKind: this.runtime.kind,
      runtimeAddress: this.runtimeAddress,
    };
  }

  /** Stop every stream and close the runtime connection. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.index.close();
    this.hub.close();
    this.runtime.close();
  }
}

export function createGateway(options: GatewayOptions): Gateway {
  return new Gateway(options);
}
