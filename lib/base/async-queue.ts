// One single-consumer async queue for every layer: the runtime's subscriber
// streams, the gateway's browser streams, the agent's request frames.
// Producers push synchronously; one consumer iterates.
//
// Bounds, as each caller needs:
// - `capacity` / `maxBytes` (with `sizeOf`): a hard bound. When the consumer
//   (a network stream) falls further behind, the queue fails at once with a
//   QueueOverflowError and drops what it held, instead of growing. One item
//   is always accepted into an empty queue, whatever its size, so a single
//   large envelope cannot wedge a stream.
// - `waitBelow(n, bytes)`: backpressure for a producer that can wait (it
//   resolves once the consumer has drained the queue below the mark).
//
// Ending: `close()` ends after the queued items are consumed; `fail(e)` ends
// with `e` after them; `failNow(e)` and `discard()` drop them and end at once.
// Consumed items are not kept reachable from the queue.

export class QueueOverflowError extends Error {
  override name = "QueueOverflowError";
}

export interface AsyncQueueOptions<T> {
  /** Most items queued at once; one more fails the queue (default: unbounded). */
  capacity?: number;
  /** Most bytes queued at once, by `sizeOf`; more fails the queue (default: unbounded). */
  maxBytes?: number;
  /** Bytes an item holds, for `bytes`, `maxBytes` and `waitBelow` (default: 0). */
  sizeOf?: (item: T) => number;
}

interface DrainWaiter {
  below: number;
  belowBytes: number;
  resolve: () => void;
}

/** Compact the backing arrays once this many consumed slots lead them (and they are most of it). */
const COMPACT_AFTER = 1024;

export class AsyncQueue<T> implements AsyncIterable<T> {
  readonly capacity: number;
  private readonly maxBytes: number;
  private readonly sizeOf: ((item: T) => number) | null;
  private readonly items: (T | undefined)[] = [];
  private readonly sizes: number[] = [];
  private head = 0;
  private queuedBytes = 0;
  private waiter: (() => void) | null = null;
  private drainWaiters: DrainWaiter[] = [];
  private closed = false;
  private failure: { error: unknown } | null = null;
  private lastTaken = Date.now();

  constructor(options: AsyncQueueOptions<T> = {}) {
    this.capacity = options.capacity ?? Number.POSITIVE_INFINITY;
    this.maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    this.sizeOf = options.sizeOf ?? null;
  }

  /** Items queued. */
  get size(): number {
    return this.items.length - this.head;
  }

  /** Bytes queued (by `sizeOf`; 0 without it). */
  get bytes(): number {
    return this.queuedBytes;
  }

  /** When the consumer last took an item (or the queue was made). */
  get lastTakenAt(): number {
    return this.lastTaken;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Queue `item`. False when the queue has ended, or when this push overflowed it (it then fails). */
  push(item: T): boolean {
    if (this.closed) return false;
    const bytes = this.sizeOf ? this.sizeOf(item) : 0;
    if (this.size >= this.capacity) {
      this.failNow(new QueueOverflowError(`consumer fell more than ${this.capacity} items behind`));
      return false;
    }
    if (this.size > 0 && this.queuedBytes + bytes > this.maxBytes) {
      this.failNow(new QueueOverflowError(`consumer fell more than ${this.maxBytes} bytes behind`));
      return false;
    }
    this.items.push(item);
    this.sizes.push(bytes);
    this.queuedBytes += bytes;
    this.wake();
    return true;
  }

  /** End after the queued items are consumed. */
  close(): void {
    this.closed = true;
    this.wake();
    this.releaseDrainWaiters(true);
  }

  /** End with `error` once the queued items are consumed (ignored once the queue has ended). */
  fail(error: unknown): void {
    if (this.closed) return;
    this.failure = { error };
    this.close();
  }

  /** End now with `error`; queued items are dropped (ignored once the queue has failed). */
  failNow(error: unknown): void {
    if (this.failure) return;
    this.failure = { error };
    this.clear();
    this.close();
  }

  /** Drop everything queued and end (the consumer sees the end at once). */
  discard(): void {
    this.clear();
    this.close();
  }

  /** Resolves when fewer than `n` items and at most `bytes` bytes are queued (or the queue has ended). */
  waitBelow(n: number, bytes = Number.POSITIVE_INFINITY): Promise<void> {
    if (this.below(n, bytes) || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push({ below: n, belowBytes: bytes, resolve }));
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.size > 0) {
        const item = this.items[this.head] as T;
        this.queuedBytes -= this.sizes[this.head] as number;
        // Drop the reference now: a consumed item must not stay reachable from the queue.
        this.items[this.head] = undefined;
        this.head++;
        if (this.head > COMPACT_AFTER && this.head * 2 > this.items.length) {
          this.items.splice(0, this.head);
          this.sizes.splice(0, this.head);
          this.head = 0;
        }
        this.lastTaken = Date.now();
        this.releaseDrainWaiters();
        yield item;
        continue;
      }
      // Empty: release the backing arrays' slots.
      if (this.head > 0) this.clear();
      if (this.closed) {
        if (this.failure) throw this.failure.error;
        return;
      }
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  private clear(): void {
    this.items.length = 0;
    this.sizes.length = 0;
    this.head = 0;
    this.queuedBytes = 0;
  }

  private below(n: number, bytes: number): boolean {
    return this.size < n && this.queuedBytes <= bytes;
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  private releaseDrainWaiters(all = false): void {
    if (this.drainWaiters.length === 0) return;
    const keep: DrainWaiter[] = [];
    for (const w of this.drainWaiters) {
      if (all || this.below(w.below, w.belowBytes)) w.resolve();
      else keep.push(w);
    }
    this.drainWaiters = keep;
  }
}

/**
 * Bounds how many operations run at once. `acquire` waits for a slot and
 * returns its release function (idempotent); an abort while waiting rejects
 * with the signal's reason.
 */
export class Limiter {
  private active = 0;
  private waiting: { grant: () => void; onAbort?: () => void }[] = [];

  constructor(readonly max: number) {
    if (!(max >= 1)) throw new Error("Limiter needs max >= 1");
  }

  get running(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error("aborted"));
    if (this.active < this.max) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const entry: (typeof this.waiting)[number] = {
        grant: () => {
          if (signal && entry.onAbort) signal.removeEventListener("abort", entry.onAbort);
          this.active++;
          resolve(this.releaser());
        },
      };
      if (signal) {
        entry.onAbort = () => {
          this.waiting = this.waiting.filter((w) => w !== entry);
          reject(signal.reason ?? new Error("aborted"));
        };
        signal.addEventListener("abort", entry.onAbort, { once: true });
      }
      this.waiting.push(entry);
    });
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.active--;
      const next = this.waiting.shift();
      next?.grant();
    };
  }
}
