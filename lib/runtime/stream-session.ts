// StreamSession (PROTOCOL.md §8.1): one bidirectional stream bound to one
// session. Envelope frames are sent through the kernel (rejections reported
// inline, or ending the stream for the codes §8.1 makes terminal); a
// subscribe frame replays the session's history from storage a page at a
// time, as fast as the transport takes it, then attaches live delivery with
// no gap and no duplicate. Live envelopes queue in a buffer bounded by count
// and bytes; a subscriber that falls further behind is ended with
// RESOURCE_EXHAUSTED and the sequence to resume from.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { CORE_TYPES, type MacpErrorCode } from "@/lib/macp/constants";
import { StreamSessionResponseSchema, type StreamSessionRequest, type StreamSessionResponse } from "@/lib/gen/macp/v1/core_pb";
import { MACPErrorSchema, SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { AsyncQueue, QueueOverflowError } from "@/lib/base/async-queue";
import type { AuthResolver } from "./auth";
import type { RuntimeConfig } from "./config";
import { grpcCodeFor } from "./errors";
import { encodeOnce } from "./grpc-host";
import type { Delivered, Kernel, Logger } from "./kernel";
import { closeOnAbort, envelopeBytes, once, overflowError, requireIdentity } from "./rpc-common";
import type { Subscriptions } from "./subscriptions";

export interface StreamSessionDeps {
  kernel: Kernel;
  auth: AuthResolver;
  config: Pick<RuntimeConfig, "subscriberBuffer" | "subscriberBufferBytes">;
  logger: Logger;
}

/** Codes that end a StreamSession instead of being reported inline (§8.1). */
const TERMINAL_STREAM_CODES = new Set<MacpErrorCode>([
  "UNAUTHENTICATED",
  "PAYLOAD_TOO_LARGE",
  "RATE_LIMITED",
  "INVALID_SESSION_ID",
  "INVALID_POLICY_DEFINITION",
  "SESSION_ALREADY_EXISTS",
  "INTERNAL_ERROR",
]);

type StreamItem =
  | { kind: "one"; resp: StreamSessionResponse; seq?: number; bytes: number }
  /** Replay the session's history after `after`, then attach live delivery (generation `gen`). */
  | { kind: "replay"; sessionId: string; after: number; gen: number };

/** The StreamSession handler; `subscriptions` counts its streams against the per-identity cap. */
export function streamSessionHandler(deps: StreamSessionDeps, subscriptions: Subscriptions) {
  const { kernel, auth, config, logger } = deps;
  const envelopeResponse = (env: Envelope): StreamSessionResponse =>
    create(StreamSessionResponseSchema, { response: { case: "envelope", value: env } });
  // A live envelope goes to every subscriber of its session as one shared
  // response (the kernel hands all listeners the same Delivered), encoded once
  // on grpc-js. Never mutated after creation.
  const liveResponses = new WeakMap<Delivered, StreamSessionResponse>();
  const liveResponse = (d: Delivered): StreamSessionResponse => {
    let r = liveResponses.get(d);
    if (!r) liveResponses.set(d, (r = encodeOnce(envelopeResponse(d.envelope))));
    return r;
  };

  return async function* streamSession(requests: AsyncIterable<StreamSessionRequest>, ctx: HandlerContext) {
    const identity = requireIdentity(auth, ctx);
    const out = new AsyncQueue<StreamItem>({
      capacity: config.subscriberBuffer,
      maxBytes: config.subscriberBufferBytes,
      sizeOf: (item) => (item.kind === "one" ? item.bytes : 0),
    });
    const subscription: { close: (() => void) | null } = { close: null };
    const slot = subscriptions.acquire(identity, out);
    const release = once(() => {
      subscription.close?.();
      subscription.close = null;
      slot();
    });
    closeOnAbort(ctx, out as AsyncQueue<unknown>, release);
    let bound: string | null = null;
    let lastSeq = 0;
    /** Bumped by every subscribe frame: a newer one supersedes a replay in progress. */
    let replayGen = 0;
    const live = (d: Delivered) => {
      if (!out.push({ kind: "one", resp: liveResponse(d), seq: d.sequence, bytes: envelopeBytes(d.envelope) })) {
        subscription.close?.();
      }
    };
    const end = (message: string, code: Code) => out.failNow(new ConnectError(message, code));
    const inline = (code: string, message: string, env?: Envelope) =>
      out.push({
        kind: "one",
        bytes: 256 + message.length,
        resp: create(StreamSessionResponseSchema, {
          response: {
            case: "error",
            value: create(MACPErrorSchema, { code, message, sessionId: env?.sessionId ?? bound ?? "", messageId: env?.messageId ?? "" }),
          },
        }),
      });

    const pump = async () => {
      for await (const frame of requests) {
        if (out.isClosed) return;
        const env = frame.envelope;
        const subId = frame.subscribeSessionId;
        if ((env && subId !== "") || (!env && subId === "")) {
          return end("a frame must carry exactly one of envelope or subscribe_session_id", Code.InvalidArgument);
        }
        const sid = env ? env.sessionId : subId;
        if (sid === "") return end("envelope frames need a session_id (signals cannot be sent on a stream)", Code.InvalidArgument);
        if (bound !== null && sid !== bound) return end(`this stream is bound to session ${bound}`, Code.InvalidArgument);
        if (!env) {
          if (!kernel.hasSession(subId)) return end(`session ${subId} does not exist`, Code.NotFound);
          if (!kernel.canRead(identity, subId)) {
            inline("FORBIDDEN", "FORBIDDEN: caller is not a declared participant or observer for this session");
            continue;
          }
          bound = subId;
          subscription.close?.();
          subscription.close = null;
          // History is read by the consumer below, page by page, as the transport takes it.
          out.push({ kind: "replay", sessionId: subId, after: Number(frame.afterSequence), gen: ++replayGen });
          continue;
        }
        if (bound === null) {
          bound = sid;
          subscription.close = kernel.listen(sid, live);
        }
        if (env.messageType !== CORE_TYPES.SessionStart) {
          const meta = kernel.getSession(sid)?.metadata;
          if (meta && meta.mode !== env.mode) return end(`session ${sid} is in mode ${meta.mode}`, Code.InvalidArgument);
          if (meta && meta.state !== SessionState.OPEN) return end("SESSION_NOT_OPEN: the session is not open", Code.InvalidArgument);
        }
        const ack = await kernel.send(identity, env);
        if (ack.ok) continue;
        const code = (ack.error?.code ?? "INTERNAL_ERROR") as MacpErrorCode;
        const message = ack.error?.message ?? "rejected";
        if (TERMINAL_STREAM_CODES.has(code)) return end(`${code}: ${message}`, grpcCodeFor(code));
        inline(code, message, env);
      }
      out.close(); // half-close: flush what we have and end
    };
    pump().catch((e: unknown) => {
      if (!out.isClosed) out.failNow(e instanceof ConnectError ? e : new ConnectError(String(e), Code.Internal));
    });
    try {
      for await (const item of out) {
        if (item.kind === "replay") {
          if (item.gen !== replayGen) continue; // superseded by a newer subscribe frame
          const attach = () => {
            if (item.gen === replayGen && !out.isClosed && !ctx.signal.aborted) subscription.close = kernel.listen(item.sessionId, live);
          };
          for (const d of kernel.history(item.sessionId, item.after, attach)) {
            lastSeq = d.sequence;
            yield envelopeResponse(d.envelope);
            if (item.gen !== replayGen) break;
          }
          continue;
        }
        if (item.seq !== undefined) lastSeq = item.seq;
        yield item.resp;
      }
    } catch (e) {
      if (e instanceof QueueOverflowError) {
        logger.warn({ session: bound, lastSeq }, "slow StreamSession subscriber ended");
        throw overflowError("this subscriber", lastSeq);
      }
      throw e;
    } finally {
      release();
    }
  };
}
