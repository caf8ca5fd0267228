// What the runtime's RPC handlers share (server.ts, stream-session.ts,
// catalog-service.ts): who the caller is, releasing a stream the moment its
// caller goes, ending a subscriber that fell behind, and the approximate
// sizes the bounded stream buffers count queued items by.
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { SessionLifecycleEvent } from "@/lib/gen/macp/v1/core_pb";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import type { AsyncQueue } from "@/lib/base/async-queue";
import type { AuthResolver, Identity } from "./auth";

export function requireIdentity(auth: AuthResolver, ctx: HandlerContext): Identity {
  const id = auth.resolve(ctx.requestHeader);
  if (!id) {
    const why = auth.explain?.(ctx.requestHeader);
    throw new ConnectError(`UNAUTHENTICATED: ${why ?? "no valid credentials (send Authorization: Bearer <token>)"}`, Code.Unauthenticated);
  }
  return id;
}

/**
 * When the caller goes away: close the channel and release what the stream
 * holds (its live listener, its place under the per-identity cap) at once.
 * The handler itself may be parked in a write that never completes (a peer
 * that stopped reading, then reset the stream: connect-node never settles
 * that write), so its own `finally` cannot be relied on to run promptly.
 */
export function closeOnAbort(ctx: HandlerContext, ch: AsyncQueue<unknown>, release: () => void = () => undefined): void {
  const onAbort = () => {
    ch.close();
    release();
  };
  if (ctx.signal.aborted) onAbort();
  else ctx.signal.addEventListener("abort", onAbort, { once: true });
}

/** Run `fn` once, however often the result is called. */
export function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

/** The status that ends a stream whose subscriber fell too far behind (with where to resume, when known). */
export function overflowError(what: string, lastSequence?: number): ConnectError {
  const resume = lastSequence === undefined ? "" : `; resubscribe with after_sequence=${lastSequence}`;
  return new ConnectError(`${what} fell too far behind and was ended${resume}`, Code.ResourceExhausted);
}

/** Approximate bytes an envelope holds while queued for a subscriber. */
export function envelopeBytes(env: Envelope): number {
  return (
    128 + env.payload.length + env.messageId.length + env.sessionId.length + env.sender.length + env.mode.length + env.messageType.length
  );
}

/** Approximate bytes a lifecycle event holds while queued for a watcher. */
export function lifecycleBytes(ev: SessionLifecycleEvent): number {
  const m = ev.session;
  if (!m) return 128;
  let n = 512 + m.sessionId.length + m.initiator.length + m.contextId.length;
  for (const p of m.participants) n += 64 + 2 * p.length;
  for (const a of m.participantActivity) n += 96 + 2 * a.participantId.length;
  return n;
}

/** Resolves when the caller goes away (the watch streams that only ever send their first item). */
export function idleUntilAbort(ctx: HandlerContext): Promise<void> {
  return new Promise((resolve) => {
    if (ctx.signal.aborted) resolve();
    else ctx.signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
