// SubscribeSession for one browser stream.
//
// 1. GetSession → metadata, sent first; its history length (1 + Σ
//    message_count) is the head the browser catches up to.
// 2. One upstream passive subscribe from `after_sequence`; envelopes are
//    deduplicated by message_id (the runtime may deliver an envelope twice
//    around the replay/live boundary) and numbered after_sequence+1, +2, …
// 3. CaughtUp once the head is reached (at once when the browser already
//    holds it), then live events.
// 4. Metadata again whenever the lifecycle state (or deadline) changes, from
//    the shared WatchSessions hub. A change that implies envelopes not yet
//    delivered (e.g. RESOLVED before its Commitment arrives) is held briefly
//    so the browser sees the envelope first.
// 5. Heartbeats every `heartbeatMs`.
// 6. What waits for the browser is bounded: at most `highWater` envelopes and
//    `bufferBytes` bytes are read ahead of it (the upstream read pauses), and
//    a browser that takes nothing for `stallMs` while that buffer is full is
//    cut off (its connection closed, everything released): it can resubscribe
//    with after_sequence.
// Everything stops when the browser goes away (`signal`): the upstream
// subscription is aborted and the hub released. A terminal session needs no
// upstream once caught up, so it is closed early.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  CaughtUpSchema,
  HeartbeatSchema,
  SessionEventSchema,
  SubscribeSessionResponseSchema,
  type SubscribeSessionResponse,
} from "@/lib/gen/baton/v1/console_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { AsyncQueue } from "@/lib/base/async-queue";
import { linkedController } from "@/lib/base/abort";
import { upstreamError } from "./errors";
import type { LifecycleSource, LifecycleUpdate } from "./lifecycle-hub";
import type { GatewayLogger } from "./logger";
import type { RuntimeReader } from "./runtime-client";
import { historyCount, isTerminalState } from "@/lib/macp/projections/summary";
import { EventSequencer, fresherMetadata, lifecycleChanged } from "./sequencer";

export interface SessionStreamDeps {
  runtime: RuntimeReader;
  hub: LifecycleSource;
  logger: GatewayLogger;
  /** Default 15 000 ms. */
  heartbeatMs?: number;
  /** How long a lifecycle change may wait for its envelopes. Default 1000 ms. */
  metadataHoldMs?: number;
  /** Upstream envelopes buffered for a slow browser before reading pauses. Default 256. */
  highWater?: number;
  /** The same bound in bytes of payload. Default 1 MiB (at least one envelope is always buffered). */
  bufferBytes?: number;
  /** A browser that takes nothing for this long while the buffer is full is cut off. Default 60 s. */
  stallMs?: number;
  /** Told the payload bytes of each envelope the browser took (the console's collector: lib/server/stream-gc.ts). */
  sent?: (payloadBytes: number) => void;
}

/** Ends the browser's connection (a stream parked on a browser that never reads cannot end otherwise). */
export type CutOff = (reason: string) => void;

type Item =
  | { kind: "envelope"; envelope: Envelope; at: number }
  | { kind: "metadata" }
  | { kind: "heartbeat" }
  | { kind: "upstream-end"; error?: unknown };

const response = (item: SubscribeSessionResponse["item"]): SubscribeSessionResponse => create(SubscribeSessionResponseSchema, { item });

export async function* sessionStream(
  deps: SessionStreamDeps,
  sessionId: string,
  afterSequence: number,
  signal: AbortSignal,
  cutOff?: CutOff,
): AsyncGenerator<SubscribeSessionResponse> {
  const { runtime, hub } = deps;
  const heartbeatMs = deps.heartbeatMs ?? 15_000;
  const holdMs = deps.metadataHoldMs ?? 1_000;
  const highWater = deps.highWater ?? 256;
  const bufferBytes = deps.bufferBytes ?? 1_048_576;
  const stallMs = deps.stallMs ?? 60_000;

  let meta: SessionMetadata;
  try {
    meta = await runtime.getSession(sessionId, signal);
  } catch (err) {
    throw upstreamError(err, `session ${sessionId}`);
  }
  const head = historyCount(meta);
  if (afterSequence > head) {
    throw new ConnectError(
      `after_sequence ${afterSequence} is beyond the end of session ${sessionId}, which has ${head} events`,
      Code.OutOfRange,
    );
  }

  const seq = new EventSequencer(afterSequence, head);
  let sent = meta;
  let latest = meta;
  yield response({ case: "metadata", value: meta });
  if (seq.caughtUp) yield response({ case: "caughtUp", value: create(CaughtUpSchema, { headSequence: BigInt(head) }) });

  const queue = new AsyncQueue<Item>({ sizeOf: (item) => (item.kind === "envelope" ? item.envelope.payload.length + 256 : 0) });
  const upstream = linkedController(signal);
  let stalled = false;
  const heartbeat = setInterval(
    () => {
      // A browser that stopped reading with the buffer full: cut it off, release everything.
      const full = queue.size >= highWater || queue.bytes > bufferBytes;
      if (full && Date.now() - queue.lastTakenAt >= stallMs && !stalled) {
        stalled = true;
        deps.logger.info({ sessionId, buffered: queue.bytes }, "browser stopped reading a session stream; cutting it off");
        cutOff?.(`the browser read nothing for ${stallMs} ms`);
        queue.discard();
        cleanup();
        return;
      }
      queue.push({ kind: "heartbeat" });
    },
    Math.min(heartbeatMs, Math.max(100, Math.floor(stallMs / 4))),
  );
  let lastHeartbeat = Date.now();
  let holdTimer: NodeJS.Timeout | null = null;
  let heldSince = 0;
  let releaseHub: (() => void) | null = null;
  let upstreamOpen = false;
  // Release everything when the browser goes away, even if this generator is
  // parked at a `yield` that the transport will never resume.
  const cleanup = () => {
    signal.removeEventListener("abort", cleanup);
    clearInterval(heartbeat);
    if (holdTimer) clearTimeout(holdTimer);
    upstream.abort();
    releaseHub?.();
    releaseHub = null;
    queue.close();
  };
  signal.addEventListener("abort", cleanup, { once: true });

  const finished = () => isTerminalState(latest.state) && seq.caughtUp && seq.last >= historyCount(latest);
  const stopUpstream = () => {
    if (!upstreamOpen) return;
    upstreamOpen = false;
    upstream.abort();
    releaseHub?.();
    releaseHub = null;
  };

  /** The metadata to send now, if the lifecycle changed and its envelopes are in. */
  const dueMetadata = (): SubscribeSessionResponse | null => {
    if (!lifecycleChanged(sent, latest)) return null;
    const waiting = upstreamOpen && historyCount(latest) > seq.last;
    if (waiting && (heldSince === 0 || Date.now() - heldSince < holdMs)) {
      if (heldSince === 0) {
        heldSince = Date.now();
        holdTimer = setTimeout(() => queue.push({ kind: "metadata" }), holdMs);
      }
      return null;
    }
    heldSince = 0;
    if (holdTimer) clearTimeout(holdTimer);
    holdTimer = null;
    sent = latest;
    return response({ case: "metadata", value: latest });
  };

  try {
    if (signal.aborted) return;
    // A terminal session already delivered in full can never change.
    if (!finished()) {
      upstreamOpen = true;
      releaseHub = hub.acquire((u: LifecycleUpdate) => {
        let found: SessionMetadata | undefined;
        if (u.kind === "event") found = u.event.session?.sessionId === sessionId ? u.event.session : undefined;
        else if (u.kind === "list") found = u.sessions.find((m) => m.sessionId === sessionId);
        if (!found) return;
        latest = fresherMetadata(latest, found);
        queue.push({ kind: "metadata" });
      });
      void (async () => {
        try {
          for await (const envelope of runtime.subscribeSession(sessionId, afterSequence, upstream.signal)) {
            queue.push({ kind: "envelope", envelope, at: Date.now() });
            await queue.waitBelow(highWater, bufferBytes);
          }
          if (!upstream.signal.aborted) queue.push({ kind: "upstream-end" });
        } catch (error) {
          if (!upstream.signal.aborted) queue.push({ kind: "upstream-end", error });
        }
      })();
    }

    for await (const item of queue) {
      switch (item.kind) {
        case "envelope": {
          const numbered = seq.accept(item.envelope);
          if (!numbered) break;
          yield response({
            case: "event",
            value: create(SessionEventSchema, {
              sessionId,
              sequence: BigInt(numbered.sequence),
              envelope: item.envelope,
              observedAtUnixMs: BigInt(item.at),
            }),
          });
          deps.sent?.(item.envelope.payload.length);
          if (numbered.caughtUpNow) {
            yield response({ case: "caughtUp", value: create(CaughtUpSchema, { headSequence: BigInt(head) }) });
          }
          break;
        }
        case "heartbeat":
          if (Date.now() - lastHeartbeat < heartbeatMs) break;
          lastHeartbeat = Date.now();
          yield response({
            case: "heartbeat",
            value: create(HeartbeatSchema, { serverTimeUnixMs: BigInt(Date.now()) }),
          });
          break;
        case "metadata":
          break;
        case "upstream-end": {
          if (!upstreamOpen) break;
          upstreamOpen = false;
          if (finished()) break;
          const resume = `; resubscribe with after_sequence=${seq.last}`;
          if (item.error !== undefined) {
            const ce = upstreamError(item.error, `session ${sessionId}`);
            throw new ConnectError(`${ce.rawMessage}${resume}`, ce.code);
          }
          throw new ConnectError(`the runtime ended the subscription to session ${sessionId}${resume}`, Code.Unavailable);
        }
      }
      const m = dueMetadata();
      if (m) yield m;
      if (upstreamOpen && finished()) stopUpstream();
    }
    if (stalled) {
      throw new ConnectError(
        `session stream ended: the browser read nothing for ${stallMs} ms with ${bufferBytes} bytes waiting; resubscribe with after_sequence=${seq.last}`,
        Code.ResourceExhausted,
      );
    }
  } finally {
    cleanup();
  }
}
