// Per-sender sliding-window rate limits (PROTOCOL.md §9.6). A limit of 0
// disables the window (benchmarks set that).
export class SlidingWindowLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
  ) {}

  /** Records a hit and returns true if it is within the limit. */
  tryAcquire(key: string, now: number): boolean {
    if (this.limit <= 0) return true;
    let list = this.hits.get(key);
    if (!list) {
      list = [];
      this.hits.set(key, list);
    }
    const cutoff = now - this.windowMs;
    let drop = 0;
    while (drop < list.length && (list[drop] as number) <= cutoff) drop++;
    if (drop) list.splice(0, drop);
    if (list.length >= this.limit) return false;
    list.push(now);
    return true;
  }
}
