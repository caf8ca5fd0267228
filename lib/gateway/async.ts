// Small async building blocks for the gateway: a single-consumer queue with a
// high-water mark, an abortable sleep, a concurrency limiter and signal
// helpers. No protocol knowledge here.

/** Resolves when `signal` aborts (never rejects). */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

/** Sleep `ms`, or less if `signal` aborts first. Resolves true when the full time elapsed. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** An AbortController that also aborts when any of `parents` aborts. */
export function linkedController(...parents: (AbortSignal | undefined)[]): AbortController {
  const ac = new AbortController();
  for (const p of parents) {
    if (!p) continue;
    if (p.aborted) {
      ac.abort(p.reason);
      break;
    }
    const onAbort = () => ac.abort(p.reason);
    p.addEventListener("abort", onAbort, { once: true });
    ac.signal.addEventListener("abort", () => p.removeEventListener("abort", onAbort), { once: true });
  }
  return ac;
}

/** Exponential backoff with jitter: 1st attempt `base`, doubling up to `max`. */
export function backoffMs(attempt: number, base = 250, max = 10_000): number {
  const exp = Math.min(max, base * 2 ** Math.max(0, attempt));
  return Math.round(exp * (0.75 + Math.random() * 0.5));
}

/**
 * Unbounded single-consumer queue. Producers push synchronously; the consumer
 * iterates. `waitBelow(n)` lets a producer apply backpressure: it resolves
 * once the consumer has drained the queue below `n` items.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiter: (() => void) | null = null;
  private drainWaiters: { below: number; belowBytes: number; resolve: () => void }[] = [];
  private closed = false;
  private failure: { error: unknown } | null = null;
  private queuedBytes = 0;
  private lastTaken = Date.now();

  /** `sizeOf`: an item's size in bytes, for `bytes` and `waitBelow`'s byte bound. */
  constructor(private readonly sizeOf?: (item: T) => number) {}

  get size(): number {
    return this.items.length;
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

  push(item: T): void {
    if (this.closed) return;
    this.items.push(item);
    if (this.sizeOf) this.queuedBytes += this.sizeOf(item);
    this.wake();
  }

  /** End after queued items are consumed. */
  close(): void {
    this.closed = true;
    this.wake();
    this.releaseDrainWaiters(true);
  }

  /** Drop everything queued and end (the consumer sees the end at once). */
  discard(): void {
    this.items = [];
    this.queuedBytes = 0;
    this.close();
  }

  /** End with an error once queued items are consumed. */
  fail(error: unknown): void {
    if (this.closed) return;
    this.failure = { error };
    this.close();
  }

  /** Resolves when fewer than `n` items and at most `bytes` bytes are queued (or the queue is closed). */
  waitBelow(n: number, bytes = Infinity): Promise<void> {
    if (this.below(n, bytes) || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push({ below: n, belowBytes: bytes, resolve }));
  }

  private below(n: number, bytes: number): boolean {
    return this.items.length < n && this.queuedBytes <= bytes;
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  private releaseDrainWaiters(all = false): void {
    if (this.drainWaiters.length === 0) return;
    const keep: typeof this.drainWaiters = [];
    for (const w of this.drainWaiters) {
      if (all || this.below(w.below, w.belowBytes)) w.resolve();
      else keep.push(w);
    }
    this.drainWaiters = keep;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.items.length > 0) {
        const item = this.items.shift() as T;
        if (this.sizeOf) this.queuedBytes -= this.sizeOf(item);
        this.lastTaken = Date.now();
        this.releaseDrainWaiters();
        yield item;
        continue;
      }
      if (this.closed) {
        if (this.failure) throw this.failure.error;
        return;
      }
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }
}

/**
 * Bounds how many upstream operations run at once. `acquire` waits for a
 * slot and returns its release function (idempotent); an abort while waiting
 * rejects with the signal's reason.
 */
export class Limiter {
  private active = 0;
  private waiting: { grant: () => void; signal?: AbortSignal; onAbort?: () => void }[] = [];

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
        signal,
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
