// Shared pieces of `npm run bench:runtime`: the IPC messages exchanged between
// the orchestrator (scripts/bench-runtime.ts) and its child processes
// (scripts/bench/runtime-server.ts, scripts/bench/runtime-load.ts), and small statistics
// helpers. Benchmark code only; nothing here is imported by the runtime.

export type ServerKind = "runtime-durable" | "runtime-connect" | "runtime-memory" | "connect-noop" | "grpcjs-noop";

/** Orchestrator -> server child. */
export type ServerCommand = { type: "sample-start"; id: number } | { type: "sample-stop"; id: number } | { type: "close"; id: number };

/** Server child -> orchestrator. */
export type ServerReply =
  | { type: "ready"; url: string; describe: string; pid: number }
  | { type: "sampled"; id: number; sample: ResourceSample }
  | { type: "sample-started"; id: number; rssBytes: number }
  | { type: "closed"; id: number }
  | { type: "failed"; error: string };

/** CPU and memory of one process over one measured phase. */
export interface ResourceSample {
  wallMs: number;
  /** user + system CPU time divided by wall time (1.0 = one core busy). */
  cpuCores: number;
  rssStartBytes: number;
  rssPeakBytes: number;
  heapUsedPeakBytes: number;
  /** Runtime only: kernel and store counters at the end of the phase. */
  extra?: Record<string, unknown>;
}

export interface SendsJob {
  type: "sends";
  id: number;
  url: string;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** Bytes of HandoffContextPayload.context. */
  contextBytes: number;
}

export interface FanoutJob {
  type: "fanout";
  id: number;
  url: string;
  subscribers: number;
  /** Subscribers per HTTP/2 connection. */
  subscribersPerConnection: number;
  /** "raw": lean node:http2 gRPC readers; "connect": one connect-node client per connection. */
  subscriberClient: "raw" | "connect";
  ratePerSecond: number;
  warmupMs: number;
  durationMs: number;
  contextBytes: number;
}

export type LoadCommand = SendsJob | FanoutJob | { type: "exit"; id: number };

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

export interface SendsResult {
  concurrency: number;
  okAcks: number;
  /** Every ok Ack of the job, setup and warm-up included (for CPU per Ack). */
  allOkAcks: number;
  failedAcks: number;
  errors: number;
  firstError?: string;
  measuredMs: number;
  sendsPerSecond: number;
  latency: LatencySummary;
  client: { cpuCores: number; eventLoopP99Ms: number };
}

export interface FanoutResult {
  subscribers: number;
  connections: number;
  sentInWindow: number;
  sendFailures: number;
  expectedDeliveries: number;
  deliveries: number;
  /** Every envelope that reached a subscriber, history and warm-up included. */
  allArrivals: number;
  missing: number;
  streamErrors: number;
  firstError?: string;
  subscribeSetupMs: number;
  /** Send start -> arrival at each subscriber, for envelopes sent in the window. */
  delivery: LatencySummary;
  /** Per envelope: send start -> arrival at its last subscriber. */
  lastSubscriber: LatencySummary;
  /** Envelope timestamp_unix_ms (ms clock) -> arrival, cross-check. */
  deliveryByTimestamp: LatencySummary;
  ackLatency: LatencySummary;
  client: { cpuCores: number; eventLoopP99Ms: number };
}

export type LoadReply =
  | { type: "ready"; pid: number }
  | { type: "sends-done"; id: number; result: SendsResult }
  | { type: "fanout-done"; id: number; result: FanoutResult }
  | { type: "failed"; id: number; error: string };

/** Latency summary of a sample (milliseconds). Sorts `xs` in place. */
export function summarize(xs: number[] | Float64Array): LatencySummary {
  const n = xs.length;
  if (n === 0) return { count: 0, p50Ms: NaN, p90Ms: NaN, p99Ms: NaN, maxMs: NaN, meanMs: NaN };
  const a = xs instanceof Float64Array ? xs : Float64Array.from(xs);
  a.sort();
  let sum = 0;
  for (let i = 0; i < n; i++) sum += a[i]!;
  // Nearest-rank percentile.
  const pct = (p: number) => a[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))]!;
  return { count: n, p50Ms: pct(50), p90Ms: pct(90), p99Ms: pct(99), maxMs: a[n - 1]!, meanMs: sum / n };
}

/** A growable Float64 buffer: latency samples without boxing. */
export class Samples {
  private buf = new Float64Array(1024);
  private n = 0;
  push(v: number): void {
    if (this.n === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = v;
  }
  get length(): number {
    return this.n;
  }
  values(): Float64Array {
    return this.buf.slice(0, this.n);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function errorText(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}
