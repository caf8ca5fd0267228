// The console gateway: one runtime client, the session catalog and its feeder
// (the one upstream WatchSessions stream, and the read model behind the list,
// the summaries and the inbox), the per-person stream caps and the counters
// behind GetGatewayStats. The Connect routes (routes.ts) are a thin layer over
// this object.
import { CatalogFeeder } from "./catalog/feeder";
import { FileRowWriter, type FileRowSource, type PeopleNames } from "./catalog/file-rows";
import { ListService } from "./catalog/list-service";
import { SqliteCatalog } from "./catalog/sqlite";
import type { CatalogStore } from "./catalog/store";
import { silentLogger, type GatewayLogger } from "./logger";
import type { RuntimeReader } from "./runtime-client";
import type { SessionStreamDeps } from "./session-stream";
import { DEFAULT_MAX_STREAMS_PER_PERSON, StreamCaps } from "./stream-caps";

export interface GatewayOptions {
  runtime: RuntimeReader;
  logger?: GatewayLogger;
  /** The catalog (owned by the gateway from now on: closed with it). Default: an in-memory SQLite catalog. */
  catalog?: CatalogStore;
  /** Accepted for compatibility; upstream streams now live as long as the console. */
  graceMs?: number;
  /** Heartbeat interval on browser streams. Default 15 000 ms. */
  heartbeatMs?: number;
  /** Coalescing window for list change notices. Default 250 ms. */
  flushMs?: number;
  /** Concurrent upstream history reads of the catalog feeder. Default 8. */
  concurrency?: number;
  /** Concurrent browser streams per signed-in person (0 = unlimited). Default 32. */
  maxStreamsPerPerson?: number;
  /** SubscribeSession: bytes read ahead of a slow browser. Default 1 MiB. */
  streamBufferBytes?: number;
  /** SubscribeSession: a browser that reads nothing this long with a full buffer is cut off. Default 60 s. */
  streamStallMs?: number;
  /** The console's people by participant id (v0.1 file rows of the list name them). */
  people?: () => Promise<PeopleNames>;
  /** Shown in GetGatewayStats; defaults to the runtime client's address. */
  runtimeAddress?: string;
  /** The list's stuck threshold (BATON_STUCK_AFTER_MINUTES). Default 15 min. */
  stuckAfterMs?: number;
  /** Told when a browser stream ends (the console's stream collector: lib/server/stream-gc.ts). */
  browserStreamEnded?: () => void;
  /** Told the payload bytes of each envelope a browser's session stream took (the same collector). */
  browserStreamSent?: (payloadBytes: number) => void;
}

export interface GatewayStats {
  upstreamSubscriptions: number;
  browserStreams: number;
  runtimeKind: string;
  runtimeAddress: string;
}

export class Gateway {
  readonly runtime: RuntimeReader;
  readonly catalog: CatalogStore;
  readonly feeder: CatalogFeeder;
  readonly list: ListService;
  readonly caps: StreamCaps;
  readonly logger: GatewayLogger;
  readonly streamDeps: SessionStreamDeps;
  private browser = 0;
  private closed = false;
  private fileRows: FileRowWriter | null = null;
  private readonly runtimeAddress: string;
  private readonly browserStreamEnded: () => void;

  constructor(options: GatewayOptions) {
    this.browserStreamEnded = options.browserStreamEnded ?? (() => undefined);
    this.runtime = options.runtime;
    this.logger = options.logger ?? silentLogger;
    this.runtimeAddress = options.runtimeAddress ?? options.runtime.address;
    this.catalog = options.catalog ?? new SqliteCatalog({ path: ":memory:" });
    this.feeder = new CatalogFeeder({
      store: this.catalog,
      runtime: this.runtime,
      logger: this.logger,
      ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    });
    this.list = new ListService(this.catalog, this.feeder, {
      ...(options.flushMs !== undefined ? { coalesceMs: options.flushMs } : {}),
      ...(options.heartbeatMs !== undefined ? { heartbeatMs: options.heartbeatMs } : {}),
      ...(options.stuckAfterMs !== undefined ? { stuckAfterMs: options.stuckAfterMs } : {}),
      ...(options.people ? { people: options.people } : {}),
    });
    this.caps = new StreamCaps(options.maxStreamsPerPerson ?? DEFAULT_MAX_STREAMS_PER_PERSON);
    this.streamDeps = {
      runtime: this.runtime,
      hub: this.feeder,
      logger: this.logger,
      heartbeatMs: options.heartbeatMs,
      ...(options.streamBufferBytes !== undefined ? { bufferBytes: options.streamBufferBytes } : {}),
      ...(options.streamStallMs !== undefined ? { stallMs: options.streamStallMs } : {}),
      ...(options.browserStreamSent ? { sent: options.browserStreamSent } : {}),
    };
    this.feeder.start();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Count a browser-facing stream until it ends or the browser goes away;
   * with `person`, it also takes one of that person's stream slots (or the
   * stream is refused with RESOURCE_EXHAUSTED).
   */
  async *trackBrowserStream<T>(stream: AsyncIterable<T>, signal: AbortSignal, person?: string): AsyncGenerator<T> {
    const releaseSlot = person !== undefined ? this.caps.acquire(person) : () => undefined;
    this.browser++;
    let counted = true;
    const uncount = () => {
      if (!counted) return;
      counted = false;
      this.browser--;
      releaseSlot();
      this.browserStreamEnded();
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

  /**
   * Keep the catalog's v0.1 file rows in step with the watched directories
   * (BATON_HANDOFF_DIRS), so the session list shows them beside the sessions.
   */
  followFileHandoffs(source: FileRowSource): FileRowWriter {
    if (this.fileRows) return this.fileRows;
    this.fileRows = new FileRowWriter({ store: this.catalog, source, written: (v) => this.feeder.announce(v), logger: this.logger });
    return this.fileRows;
  }

  /** Stop every stream and close the runtime connection and the catalog. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.fileRows?.close();
    this.feeder.close();
    this.runtime.close();
    this.catalog.close();
  }
}

export function createGateway(options: GatewayOptions): Gateway {
  return new Gateway(options);
}
