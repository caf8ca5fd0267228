// Per-person cap on the console's concurrent browser streams (SubscribeSession,
// WatchSessionChanges, WatchSessionList, WatchInbox): one signed-in person may
// hold at most `max` at once (BATON_MAX_STREAMS_PER_PERSON); past it a new
// stream is refused with RESOURCE_EXHAUSTED naming the limit. Streams opened
// without a sign-in (reads open to anyone) are not counted per person.
import { Code, ConnectError, createContextKey } from "@connectrpc/connect";

export const DEFAULT_MAX_STREAMS_PER_PERSON = 32;

/**
 * Set by the console's HTTP server on every Connect call: ends the browser's
 * connection. A server stream parked on a browser that never reads cannot end
 * any other way (the call's own signal only aborts when the connection does).
 */
export const kCutOffConnection = createContextKey<((reason: string) => void) | undefined>(undefined, {
  description: "cut off the browser connection",
});

export class StreamCaps {
  private readonly open = new Map<string, number>();

  /** `max` 0 = unlimited. */
  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 0) throw new Error("max streams per person must be a non-negative integer");
  }

  /** Streams `person` holds now. */
  count(person: string): number {
    return this.open.get(person) ?? 0;
  }

  /** Take a slot for `person` or throw RESOURCE_EXHAUSTED; returns the (idempotent) release. */
  acquire(person: string): () => void {
    const n = this.count(person);
    if (this.max > 0 && n >= this.max) {
      throw new ConnectError(
        `You have ${n} live streams open in this console (session pages, lists, the inbox), the most one person may hold (BATON_MAX_STREAMS_PER_PERSON=${this.max}). Close some tabs and try again.`,
        Code.ResourceExhausted,
      );
    }
    this.open.set(person, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.count(person) - 1;
      if (left <= 0) this.open.delete(person);
      else this.open.set(person, left);
    };
  }
}
