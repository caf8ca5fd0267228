// Streaming subscriptions: how many each identity holds (StreamSession,
// WatchSessions, WatchSignals and WatchListRows calls), capped per identity, and what their
// buffers hold, for tests, logs and benchmarks.
//
// Each open stream costs at most its bounded buffer (MACP_SUBSCRIBER_BUFFER
// envelopes and MACP_SUBSCRIBER_BUFFER_BYTES bytes) plus one history page, so
// the cap bounds what one identity can make the runtime hold. Observers (the
// console's read identity) hold one stream per open session and per open
// browser page, so by default they are not capped here: the console caps its
// own users. A token entry's `max_subscriptions` overrides either default.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Identity } from "./auth";
import type { RuntimeConfig } from "./config";

/** What a stream's buffer reports. */
export interface BufferGauge {
  readonly size: number;
  readonly bytes: number;
}

export interface SubscriptionStats {
  /** Streams open now. */
  streams: number;
  /** Identities holding at least one. */
  identities: number;
  /** Items and bytes queued in their buffers now. */
  bufferedItems: number;
  bufferedBytes: number;
  /** Streams refused by the cap since start. */
  refused: number;
}

const ANONYMOUS = "(unauthenticated)";

export class Subscriptions {
  private readonly held = new Map<string, number>();
  private readonly buffers = new Set<BufferGauge>();
  private refused = 0;

  constructor(private readonly cfg: Pick<RuntimeConfig, "maxSubscriptions" | "observerMaxSubscriptions">) {}

  /** The cap for this identity; 0 means none. */
  limitFor(identity: Identity | null): number {
    if (identity?.maxSubscriptions !== undefined) return identity.maxSubscriptions;
    return identity?.isObserver ? this.cfg.observerMaxSubscriptions : this.cfg.maxSubscriptions;
  }

  /**
   * Count one more stream for `identity` (null: an unauthenticated caller,
   * where the RPC allows one) and return its release function; past the cap,
   * throw RESOURCE_EXHAUSTED.
   */
  acquire(identity: Identity | null, buffer?: BufferGauge): () => void {
    const key = identity?.sender ?? ANONYMOUS;
    const n = this.held.get(key) ?? 0;
    const limit = this.limitFor(identity);
    if (limit > 0 && n >= limit) {
      this.refused++;
      throw new ConnectError(
        `RESOURCE_EXHAUSTED: ${key} already has ${n} open subscriptions (StreamSession, WatchSessions, WatchSignals and WatchListRows ` +
          `streams count); the limit is ${limit} (MACP_MAX_SUBSCRIPTIONS${identity?.isObserver ? " / MACP_OBSERVER_MAX_SUBSCRIPTIONS" : ""}, ` +
          `or max_subscriptions on the identity's token). Close a stream before opening another.`,
        Code.ResourceExhausted,
      );
    }
    this.held.set(key, n + 1);
    if (buffer) this.buffers.add(buffer);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (buffer) this.buffers.delete(buffer);
      const left = (this.held.get(key) ?? 1) - 1;
      if (left <= 0) this.held.delete(key);
      else this.held.set(key, left);
    };
  }

  /** Streams `identity` holds now. */
  heldBy(sender: string): number {
    return this.held.get(sender) ?? 0;
  }

  stats(): SubscriptionStats {
    let streams = 0;
    for (const n of this.held.values()) streams += n;
    let bufferedItems = 0;
    let bufferedBytes = 0;
    for (const b of this.buffers) {
      bufferedItems += b.size;
      bufferedBytes += b.bytes;
    }
    return { streams, identities: this.held.size, bufferedItems, bufferedBytes, refused: this.refused };
  }
}
