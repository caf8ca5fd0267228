// A bounded, single-consumer async queue. Producers push synchronously; when
// the consumer (a network stream) falls more than `capacity` items behind,
// the channel fails with an overflow error instead of growing without bound.

export class ChannelOverflowError extends Error {
  override name = "ChannelOverflowError";
}

export class Channel<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private head = 0;
  private waiter: (() => void) | null = null;
  private closed = false;
  private failure: Error | null = null;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.items.length - this.head;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Returns false (and fails the channel) when the consumer is too far behind. */
  push(item: T): boolean {
    if (this.closed) return false;
    if (this.size >= this.capacity) {
      this.fail(new ChannelOverflowError(`consumer fell more than ${this.capacity} items behind`));
      return false;
    }
    this.items.push(item);
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
    this.head = 0;
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
        this.head++;
        if (this.head > 1024 && this.head * 2 > this.items.length) {
          this.items.splice(0, this.head);
          this.head = 0;
        }
        yield item;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }
}
