// Giving memory back after large browser streams end.
//
// A session stream forwards envelopes of up to 1 MiB; a few browsers that
// read nothing leave tens of MiB of garbage behind when they are cut off or
// leave (README, "Console at scale"). Nothing references it any more, but V8
// collects its old generation only when that generation reaches its limit,
// so an idle console can keep it resident for minutes. This asks for one
// full collection once the streams have been quiet for a while, only if the
// heap and its buffers grew by `growthBytes` since the last one, and at most
// once per `minIntervalMs`: a rare pause of tens of milliseconds (logged),
// never on a busy path.
//
// It needs a full collection to call: `npm start` runs the console with
// `--expose-gc` (scripts/start.mjs); without it (dev, tests) it is off.
// BATON_IDLE_GC=0 turns it off.

export interface IdleCollectorOptions {
  /** A full, synchronous collection. */
  gc: () => void;
  /** Bytes held by V8's heap and by buffers outside it, as of now. */
  memory: () => number;
  /** Streams quiet this long before a check. Default 5 s. */
  quietMs?: number;
  /** At most one collection this often. Default 60 s. */
  minIntervalMs?: number;
  /** Growth since the last collection that makes one worth it. Default 32 MiB. */
  growthBytes?: number;
  now?: () => number;
  /** Told after each collection (what it freed, how long it took). */
  collected?: (report: { beforeBytes: number; afterBytes: number; ms: number }) => void;
}

export class IdleCollector {
  private readonly quietMs: number;
  private readonly minIntervalMs: number;
  private readonly growthBytes: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private lastAt = Number.NEGATIVE_INFINITY;
  private baseline: number;
  private closed = false;

  constructor(private readonly o: IdleCollectorOptions) {
    this.quietMs = o.quietMs ?? 5_000;
    this.minIntervalMs = o.minIntervalMs ?? 60_000;
    this.growthBytes = o.growthBytes ?? 32 * 1_048_576;
    this.now = o.now ?? Date.now;
    this.baseline = o.memory();
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
    if (before - this.baseline < this.growthBytes) return false;
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
    const t0 = performance.now();
    this.o.gc();
    const ms = performance.now() - t0;
    this.lastAt = at;
    this.baseline = this.o.memory();
    this.o.collected?.({ beforeBytes: before, afterBytes: this.baseline, ms });
    return true;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
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
