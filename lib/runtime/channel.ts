// A bounded, single-consumer async queue. Producers push synchronously; when
// the consumer (a network stream) falls more than `capacity` items, or more
// than `maxBytes` bytes (as measured by `sizeOf`), behind, the channel fails
// with an overflow error instead of growing without bound. One item is always
// accepted into an empty channel, whatever its size, so a single large
// envelope cannot wedge a stream.

export class ChannelOverflowError extends Error {
  override name = "ChannelOverflowError";
}

export interface ChannelLimits<T> {
  /** Most bytes queued at once (default: unbounded). */
  maxBytes?: number;
  /** Bytes an item holds (default: 0). */
  sizeOf?: (item: T) => number;
}

export class Channel<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private readonly sizes: number[] = [];
  private head = 0;
  private queuedBytes = 0;
  private waiter: (() => void) | null = null;
  private closed = false;
  private failure: Error | null = null;
  private readonly maxBytes: number;
  private readonly sizeOf: ((item: T) => number) | null;

  constructor(
    readonly capacity: number,
    limits: ChannelLimits<T> = {},
  ) {
    this.maxBytes = limits.maxBytes ?? Number.POSITIVE_INFINITY;
    this.sizeOf = limits.sizeOf ?? null;
  }

  get size(): number {
    return this.items.length - this.head;
  }

  /** Bytes currently queued (0 without `sizeOf`). */
  get bytes(): number {
    return this.queuedBytes;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Returns false (and fails the channel) when the consumer is too far behind. */
  push(item: T): boolean {
    if (this.closed) return false;
    const bytes = this.sizeOf ? this.sizeOf(item) : 0;
    if (this.size >= this.capacity) {
      this.fail(new ChannelOverflowError(`consumer fell more than ${this.capacity} items behind`));
      return false;
    }
    if (this.size > 0 && this.queuedBytes + bytes > this.maxBytes) {
      this.fail(new ChannelOverflowError(`consumer fell more than ${this.maxBytes} bytes behind`));
      return false;
    }
    this.items.push(item);
    this.sizes.push(bytes);
    this.queuedBytes += bytes;
    this.wake();
    return true;
  }

  /** End after the queued items are drained. */
  close(): void {
    this.closed = true;
    this.wake();
  }

  /** End now with an error; queued items are dropped. */
  fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.closed = true;
    this.items.length = 0;
    this.sizes.length = 0;
    this.head = 0;
    this.queuedBytes = 0;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.size > 0) {
        const item = this.items[this.head] as T;
        this.queuedBytes -= this.sizes[this.head] as number;
        // Drop the references now: a consumed item must not stay reachable from the queue.
        (this.items as (T | undefined)[])[this.head] = undefined;
        this.head++;
        if (this.head > 1024 && this.head * 2 > this.items.length) {
          this.items.splice(0, this.head);
          this.sizes.splice(0, this.head);
          this.head = 0;
        }
        yield item;
        continue;
      }
      if (this.head > 0) {
        // Empty: release the backing arrays' slots.
        this.items.length = 0;
        this.sizes.length = 0;
        this.head = 0;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }
}
