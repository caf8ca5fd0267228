// Giving back the memory large browser streams leave behind, while they send
// and after they end.
//
// A session stream forwards envelopes of up to 1 MiB, and each one sent
// leaves a few copies of its payload behind (the upstream frame, protobuf's
// nested encodings, the Connect frame). V8 collects buffers outside its heap
// only once they grew by about 64 MiB since its last collection, so four
// browsers that read nothing left +60 to +91 MiB behind while connected,
// most of it garbage (README, "Console at scale"), and an idle console kept
// it resident for minutes after they left. So:
//
// - while streams send (`sent`): after every `busyStepBytes` of payload
//   sent, one full collection if the heap and its buffers grew by
//   `busyGrowthBytes` since the last one, at most once per `busyIntervalMs`
//   (a pause of about 10-30 ms on a heap of tens of MiB, only on a console
//   sending large payloads);
// - once streams end (`streamEnded`) and have been quiet for `quietMs`: one
//   full collection if they grew by `growthBytes`, at most once per
//   `minIntervalMs` (logged).
//
// It needs a full collection to call: `npm start` runs the console with
// `--expose-gc` (scripts/start.mjs); without it (dev, tests) it is off.
// BATON_IDLE_GC=0 turns it off.

export interface StreamCollectorOptions {
  /** A full, synchronous collection. */
  gc: () => void;
  /** Bytes held by V8's heap and by buffers outside it, as of now. */
  memory: () => number;
  /** Streams quiet this long before a check. Default 5 s. */
  quietMs?: number;
  /** At most one collection this often. Default 60 s. */
  minIntervalMs?: number;
  /** Growth since the last collection once streams ended that makes one worth it. Default 8 MiB (a collection at most once per `minIntervalMs`, so a low bar costs little). */
  growthBytes?: number;
  now?: () => number;
  /** While streams send: payload bytes between two looks at memory. Default 4 MiB; 0 = no collection while they send. */
  busyStepBytes?: number;
  /** While streams send: the growth since the last collection that makes one worth it. Default 16 MiB. */
  busyGrowthBytes?: number;
  /** While streams send: at most one collection this often (a look that comes sooner is made when the interval ends). Default 250 ms. */
  busyIntervalMs?: number;
  /** Told after each collection (what it freed, how long it took, and whether streams were still sending). */
  collected?: (report: CollectionReport) => void;
}

export interface CollectionReport {
  beforeBytes: number;
  afterBytes: number;
  ms: number;
  /** `sent` asked for it (streams were sending), not `streamEnded`. */
  busy: boolean;
}

export class StreamCollector {
  private readonly quietMs: number;
  private readonly minIntervalMs: number;
  private readonly growthBytes: number;
  private readonly busyStepBytes: number;
  private readonly busyGrowthBytes: number;
  private readonly busyIntervalMs: number;
  private readonly now: () => number;
  private sentSinceCheck = 0;
  private lastBusyAt = Number.NEGATIVE_INFINITY;
  private busyTimer: NodeJS.Timeout | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastAt = Number.NEGATIVE_INFINITY;
  /** Memory after the last collection of either kind: what `sent` measures growth from. */
  private baseline: number;
  /** Memory after the last collection once streams ended: what `streamEnded` measures from (collections while streams hold their buffers do not move it up, or those buffers would never count as growth). */
  private idleBaseline: number;
  private closed = false;

  constructor(private readonly o: StreamCollectorOptions) {
    this.quietMs = o.quietMs ?? 5_000;
    this.minIntervalMs = o.minIntervalMs ?? 60_000;
    this.growthBytes = o.growthBytes ?? 8 * 1_048_576;
    this.busyStepBytes = o.busyStepBytes ?? 2 * 1_048_576;
    this.busyGrowthBytes = o.busyGrowthBytes ?? 8 * 1_048_576;
    this.busyIntervalMs = o.busyIntervalMs ?? 250;
    this.now = o.now ?? Date.now;
    this.baseline = o.memory();
    this.idleBaseline = this.baseline;
  }

  /** A browser stream sent `payloadBytes` of envelope payload. Returns whether it collected. */
  sent(payloadBytes: number): boolean {
    if (this.closed || this.busyStepBytes <= 0) return false;
    this.sentSinceCheck += payloadBytes;
    if (this.sentSinceCheck < this.busyStepBytes) return false;
    this.sentSinceCheck = 0;
    const wait = this.lastBusyAt + this.busyIntervalMs - this.now();
    if (wait <= 0 && this.busyCheck()) return true;
    // Too soon after the last collection, or not grown enough yet: look once more when the
    // interval ends, since what was just sent keeps leaving garbage after the streams stop
    // sending (a browser that stops reading stops them at once).
    this.busyTimer ??= setTimeout(
      () => {
        this.busyTimer = null;
        this.busyCheck();
      },
      wait > 0 ? wait : this.busyIntervalMs,
    );
    this.busyTimer.unref();
    return false;
  }

  private busyCheck(): boolean {
    if (this.closed) return false;
    const before = this.o.memory();
    if (before - this.baseline < this.busyGrowthBytes) return false;
    this.lastBusyAt = this.now();
    this.collect(before, true);
    return true;
  }

  /** A browser stream ended: check once streams have been quiet for `quietMs`. */
  streamEnded(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.check();
    }, this.quietMs);
    this.timer.unref();
  }

  /** Collect now if memory grew enough since the last collection and none ran recently. Returns whether it did. */
  check(): boolean {
    if (this.closed) return false;
    const at = this.now();
    const before = this.o.memory();
    if (before - this.idleBaseline < this.growthBytes) return false;
    if (at - this.lastAt < this.minIntervalMs) {
      // Too soon: look again when the interval is over.
      if (!this.timer) {
        this.timer = setTimeout(
          () => {
            this.timer = null;
            this.check();
          },
          this.minIntervalMs - (at - this.lastAt),
        );
        this.timer.unref();
      }
      return false;
    }
    this.lastAt = at;
    this.collect(before, false);
    return true;
  }

  private collect(before: number, busy: boolean): void {
    const t0 = performance.now();
    this.o.gc();
    const ms = performance.now() - t0;
    this.baseline = this.o.memory();
    this.idleBaseline = busy ? Math.min(this.idleBaseline, this.baseline) : this.baseline;
    this.o.collected?.({ beforeBytes: before, afterBytes: this.baseline, ms, busy });
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.busyTimer) clearTimeout(this.busyTimer);
    this.timer = null;
    this.busyTimer = null;
  }
}

/** What V8's heap and the buffers outside it hold now. */
export function heapAndBuffers(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** The process's full collection, when Node was started with --expose-gc. */
export function exposedGc(): (() => void) | null {
  const gc = (globalThis as { gc?: unknown }).gc;
  return typeof gc === "function" ? () => (gc as () => void)() : null;
}
