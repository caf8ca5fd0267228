// Sliding-window counters for sign-in attempts. In memory, bounded.

export interface SlidingWindowOptions {
  /** Events allowed within the window. */
  limit: number;
  windowMs: number;
  /** Keys tracked at most; the least recently used are forgotten first. */
  maxKeys?: number;
  now?: () => number;
}

export interface LimitState {
  allowed: boolean;
  /** Milliseconds until one more event is allowed (0 when allowed). */
  retryAfterMs: number;
}

export class SlidingWindow {
  private readonly hits = new Map<string, number[]>();
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(options: SlidingWindowOptions) {
    if (!(options.limit >= 1) || !(options.windowMs > 0)) throw new Error("limit must be ≥ 1 and windowMs > 0");
    this.limit = options.limit;
    this.windowMs = options.windowMs;
    this.maxKeys = options.maxKeys ?? 50_000;
    this.now = options.now ?? Date.now;
  }

  private recent(key: string, now: number): number[] {
    const list = this.hits.get(key);
    if (!list) return [];
    const from = now - this.windowMs;
    let i = 0;
    while (i < list.length && (list[i] as number) <= from) i++;
    if (i > 0) list.splice(0, i);
    if (list.length === 0) this.hits.delete(key);
    return list;
  }

  check(key: string): LimitState {
    const now = this.now();
    const list = this.recent(key, now);
    if (list.length < this.limit) return { allowed: true, retryAfterMs: 0 };
    const oldest = list[list.length - this.limit] as number;
    return { allowed: false, retryAfterMs: Math.max(1, oldest + this.windowMs - now) };
  }

  hit(key: string): void {
    const now = this.now();
    const list = this.recent(key, now);
    list.push(now);
    if (list.length > this.limit) list.splice(0, list.length - this.limit);
    // Re-insert to keep Map order as least-recently-used first.
    this.hits.delete(key);
    this.hits.set(key, list);
    while (this.hits.size > this.maxKeys) {
      const first = this.hits.keys().next().value;
      if (first === undefined) break;
      this.hits.delete(first);
    }
  }

  reset(key: string): void {
    this.hits.delete(key);
  }

  get size(): number {
    return this.hits.size;
  }
}

/** Failed sign-ins per account and client address: 5 per 15 minutes. */
export const DEFAULT_PER_ACCOUNT_AND_ADDRESS = Object.freeze({ limit: 5, windowMs: 15 * 60_000 });
/**
 * Failed sign-ins per client address, any account: 250 per 15 minutes. Much
 * higher than the per-account limit on purpose: many people can share one
 * address (an office behind NAT, a proxy), and one of them guessing must not
 * lock the others out; it still stops one address from spraying passwords
 * across every account.
 */
export const DEFAULT_PER_ADDRESS = Object.freeze({ limit: 250, windowMs: 15 * 60_000 });

export interface LoginLimiterOptions {
  /** Failed attempts per username + client address. Default DEFAULT_PER_ACCOUNT_AND_ADDRESS. */
  perUserAndIp?: { limit: number; windowMs: number };
  /** Failed attempts per client address, any username. Default DEFAULT_PER_ADDRESS. */
  perIp?: { limit: number; windowMs: number };
  now?: () => number;
}

/**
 * Failed sign-ins are counted per (username, address) and per address. A
 * success clears the (username, address) counter only, so spraying many
 * usernames from one address is still slowed down. The address must be the
 * real client address (client-address.ts), never a value the client chose.
 */
export class LoginLimiter {
  private readonly userIp: SlidingWindow;
  private readonly ip: SlidingWindow;

  constructor(options: LoginLimiterOptions = {}) {
    this.userIp = new SlidingWindow({ ...(options.perUserAndIp ?? DEFAULT_PER_ACCOUNT_AND_ADDRESS), now: options.now });
    this.ip = new SlidingWindow({ ...(options.perIp ?? DEFAULT_PER_ADDRESS), now: options.now });
  }

  private static key(username: string, ip: string): string {
    return `${username}\u0000${ip}`;
  }

  check(username: string, ip: string): LimitState {
    const a = this.userIp.check(LoginLimiter.key(username, ip));
    const b = this.ip.check(ip);
    if (a.allowed && b.allowed) return a;
    return { allowed: false, retryAfterMs: Math.max(a.retryAfterMs, b.retryAfterMs) };
  }

  failed(username: string, ip: string): void {
    this.userIp.hit(LoginLimiter.key(username, ip));
    this.ip.hit(ip);
  }

  succeeded(username: string, ip: string): void {
    this.userIp.reset(LoginLimiter.key(username, ip));
  }
}
