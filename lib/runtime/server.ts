// macp.v1.MACPRuntimeService over connect-node: turns RPCs into kernel calls,
// authenticates each call, and maps kernel verdicts onto Acks, inline stream
// errors or gRPC statuses exactly where PROTOCOL.md §7.2 and §8 put them.
// RPCs left out of the implementation answer UNIMPLEMENTED.
//
// Memory per stream is bounded. History is read from storage a page at a
// time, only as fast as the transport takes it (the hosts apply HTTP/2 flow
// control; see grpc-host.ts); live envelopes queue in an AsyncQueue (lib/base) bounded by
// count and bytes, and a subscriber that falls further behind is ended with
// RESOURCE_EXHAUSTED and the sequence to resume from. Each identity may hold a
// limited number of streams at once (subscriptions.ts).
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { CORE_TYPES, MACP_VERSION, type MacpErrorCode } from "@/lib/macp/constants";
import {
  ListSessionsResponseSchema,
  MACPRuntimeService,
  SessionLifecycleEvent_EventType as EventType,
  SessionLifecycleEventSchema,
  StreamSessionResponseSchema,
  type SessionLifecycleEvent,
  type StreamSessionRequest,
  type StreamSessionResponse,
} from "@/lib/gen/macp/v1/core_pb";
import { MACPErrorSchema, SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import type { AuthResolver, Identity } from "./auth";
import { AsyncQueue, QueueOverflowError } from "@/lib/base/async-queue";
import type { RuntimeConfig } from "./config";
import { Subscriptions } from "./subscriptions";
import { grpcCodeFor } from "./errors";
import { encodedAs, encodeOnce } from "./grpc-host";
import { ControlError, type Delivered, type Kernel, type Logger } from "./kernel";
import { MODES } from "./modes";

export interface RuntimeServiceDeps {
  kernel: Kernel;
  auth: AuthResolver;
  config: Pick<
    RuntimeConfig,
    "subscriberBuffer" | "subscriberBufferBytes" | "maxSubscriptions" | "observerMaxSubscriptions" | "runtimeName" | "runtimeVersion"
  >;
  logger: Logger;
  /** Subscription counting and caps; one per runtime (created here if not given). */
  subscriptions?: Subscriptions;
  /**
   * The host honours encodedAs() (grpc-host.ts does, connect-node does not):
   * ListSessions is then sent as bytes assembled from the stored summaries.
   */
  preEncodedResponses?: boolean;
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

function overflowError(what: string, lastSequence?: number): ConnectError {
  const resume = lastSequence === undefined ? "" : `; resubscribe with after_sequence=${lastSequence}`;
  return new ConnectError(`${what} fell too far behind and was ended${resume}`, Code.ResourceExhausted);
}

const runtimeModes = () => [...MODES.values()].map((m) => m.descriptor);

type StreamItem =
  | { kind: "one"; resp: StreamSessionResponse; seq?: number; bytes: number }
  /** Replay the session's history after `after`, then attach live delivery (generation `gen`). */
  | { kind: "replay"; sessionId: string; after: number; gen: number };

/** Approximate bytes an envelope holds while queued for a subscriber. */
function envelopeBytes(env: Envelope): number {
  return (
    128 + env.payload.length + env.messageId.length + env.sessionId.length + env.sender.length + env.mode.length + env.messageType.length
  );
}

/** Approximate bytes a lifecycle event holds while queued for a watcher. */
function lifecycleBytes(ev: SessionLifecycleEvent): number {
  const m = ev.session;
  if (!m) return 128;
  let n = 512 + m.sessionId.length + m.initiator.length + m.contextId.length;
  for (const p of m.participants) n += 64 + 2 * p.length;
  for (const a of m.participantActivity) n += 96 + 2 * a.participantId.length;
  return n;
}

/** Connect routes for the runtime service (used by the connect-node server option). */
export function runtimeRoutes(deps: RuntimeServiceDeps) {
  return (router: ConnectRouter) => router.service(MACPRuntimeService, runtimeServiceImpl(deps));
}

/**
 * The MACPRuntimeService implementation, independent of the server that hosts
 * it: connect-node mounts it as routes, grpc-host.ts serves it on @grpc/grpc-js.
 */
export function runtimeServiceImpl(deps: RuntimeServiceDeps): Partial<ServiceImpl<typeof MACPRuntimeService>> {
  const { kernel, auth, config, logger } = deps;
  const subscriptions = deps.subscriptions ?? new Subscriptions(config);
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

  return {
    initialize(req) {
      if (req.supportedProtocolVersions.length === 0) {
        throw new ConnectError("supported_protocol_versions must not be empty", Code.InvalidArgument);
      }
      if (!req.supportedProtocolVersions.includes(MACP_VERSION)) {
        throw new ConnectError(
          `UNSUPPORTED_PROTOCOL_VERSION: this runtime speaks ${MACP_VERSION}; client offered ${req.supportedProtocolVersions.join(", ")}`,
          Code.FailedPrecondition,
        );
      }
      return {
        selectedProtocolVersion: MACP_VERSION,
        runtimeInfo: {
          name: config.runtimeName,
          title: "Baton embedded MACP runtime",
          version: config.runtimeVersion,
          description: "Durable MACP runtime embedded in the Baton console (Handoff and Task modes).",
          websiteUrl: "",
        },
        capabilities: {
          sessions: { stream: true, listSessions: true, watchSessions: true },
          cancellation: { cancelSession: true },
          progress: { progress: true },
          manifest: { getManifest: true },
          modeRegistry: { listModes: true, listChanged: true },
          roots: { listRoots: true, listChanged: true },
          policyRegistry: { registerPolicy: true, listPolicies: true, listChanged: true },
          experimental: { features: {} },
        },
        supportedModes: [...MODES.keys()].sort(),
        instructions:
          "Authenticate with Authorization: Bearer <token> and submit envelopes with Send; observe with StreamSession and WatchSessions.",
      };
    },

    async send(req, ctx) {
      if (!req.envelope) throw new ConnectError("INVALID_ENVELOPE: SendRequest.envelope is required", Code.InvalidArgument);
      const identity = auth.resolve(ctx.requestHeader);
      return { ack: await kernel.send(identity, req.envelope) };
    },

    async *streamSession(requests: AsyncIterable<StreamSessionRequest>, ctx) {
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
    },

    getSession(req, ctx) {
      const identity = requireIdentity(auth, ctx);
      const found = kernel.getSession(req.sessionId);
      if (!found) throw new ConnectError(`session ${req.sessionId} does not exist`, Code.NotFound);
      if (!kernel.canRead(identity, req.sessionId)) {
        throw new ConnectError(`${identity.sender} is not a participant or observer of this session`, Code.PermissionDenied);
      }
      return { metadata: found.metadata };
    },

    async cancelSession(req, ctx) {
      return { ack: await control(kernel, requireIdentity(auth, ctx), "cancel", req.sessionId, req.reason) };
    },
    async suspendSession(req, ctx) {
      return { ack: await control(kernel, requireIdentity(auth, ctx), "suspend", req.sessionId, req.reason) };
    },
    async resumeSession(req, ctx) {
      return { ack: await control(kernel, requireIdentity(auth, ctx), "resume", req.sessionId, req.reason) };
    },

    getManifest(req) {
      if (req.agentId !== "" && req.agentId !== config.runtimeName) {
        throw new ConnectError(`no manifest for agent ${req.agentId}`, Code.NotFound);
      }
      return {
        manifest: {
          agentId: config.runtimeName,
          title: "Baton embedded MACP runtime",
          description: "Durable MACP runtime embedded in the Baton console.",
          supportedModes: [...MODES.keys()].sort(),
          inputContentTypes: ["application/macp-envelope+proto"],
          outputContentTypes: ["application/macp-envelope+proto"],
        },
      };
    },

    listModes() {
      return { modes: runtimeModes() };
    },
    async *watchModeRegistry(_req, ctx) {
      yield { change: { registry: "modes", observedAtUnixMs: BigInt(Date.now()) } };
      await idleUntilAbort(ctx);
    },
    listRoots() {
      return { roots: [] };
    },
    async *watchRoots(_req, ctx) {
      yield { change: { observedAtUnixMs: BigInt(Date.now()) } };
      await idleUntilAbort(ctx);
    },
    listExtModes() {
      return { modes: [] };
    },

    async *watchSignals(_req, ctx) {
      const ch = new AsyncQueue<Envelope>({ capacity: 256, maxBytes: config.subscriberBufferBytes, sizeOf: envelopeBytes });
      // Signals are watched without credentials where the runtime allows it; such callers share one cap.
      const slot = subscriptions.acquire(auth.resolve(ctx.requestHeader), ch);
      const close = kernel.watchSignals((env) => ch.push(env));
      const release = once(() => {
        close();
        slot();
      });
      closeOnAbort(ctx, ch as AsyncQueue<unknown>, release);
      try {
        for await (const env of ch) yield { envelope: env };
      } catch (e) {
        if (e instanceof QueueOverflowError) throw overflowError("this signal watcher");
        throw e;
      } finally {
        release();
      }
    },

    listSessions(_req, ctx) {
      requireIdentity(auth, ctx);
      // MACP's ListSessions has no paging: the answer grows with history. On
      // grpc-js it is assembled from the stored summaries (about the
      // response's size in memory); elsewhere it is built as messages.
      if (deps.preEncodedResponses) return encodedAs(create(ListSessionsResponseSchema), kernel.listSessionsEncoded());
      return { sessions: kernel.listSessions() };
    },

    async *watchSessions(_req, ctx) {
      const identity = requireIdentity(auth, ctx);
      const ch = new AsyncQueue<SessionLifecycleEvent>({
        capacity: config.subscriberBuffer,
        maxBytes: config.subscriberBufferBytes,
        sizeOf: lifecycleBytes,
      });
      const slot = subscriptions.acquire(identity, ch);
      const { snapshot, close } = kernel.watchSessions((ev) => ch.push(ev));
      const release = once(() => {
        close();
        slot();
      });
      closeOnAbort(ctx, ch as AsyncQueue<unknown>, release);
      try {
        // The snapshot is read from storage as it is written out (backpressure), events queue meanwhile.
        for (const meta of snapshot) {
          yield {
            event: create(SessionLifecycleEventSchema, {
              eventType: EventType.CREATED,
              session: meta,
              observedAtUnixMs: meta.startedAtUnixMs,
            }),
          };
        }
        for await (const ev of ch) yield { event: ev };
      } catch (e) {
        if (e instanceof QueueOverflowError) throw overflowError("this session watcher");
        throw e;
      } finally {
        release();
      }
    },

    async registerPolicy(req, ctx) {
      const identity = requireIdentity(auth, ctx);
      if (!identity.canManageRegistry) throw new ConnectError(`${identity.sender} may not manage policies`, Code.PermissionDenied);
      if (!req.policyDescriptor) throw new ConnectError("policy_descriptor is required", Code.InvalidArgument);
      const err = await kernel.registerPolicy(req.policyDescriptor);
      return err ? { ok: false, error: err } : { ok: true, error: "" };
    },
    async unregisterPolicy(req, ctx) {
      const identity = requireIdentity(auth, ctx);
      if (!identity.canManageRegistry) throw new ConnectError(`${identity.sender} may not manage policies`, Code.PermissionDenied);
      const err = await kernel.unregisterPolicy(req.policyId);
      return err ? { ok: false, error: err } : { ok: true, error: "" };
    },
    getPolicy(req, ctx) {
      requireIdentity(auth, ctx);
      const d = kernel.getPolicy(req.policyId);
      if (!d) throw new ConnectError(`policy ${req.policyId} is not registered`, Code.NotFound);
      return { policyDescriptor: d };
    },
    listPolicies(req, ctx) {
      requireIdentity(auth, ctx);
      return { descriptors: kernel.listPolicies(req.mode) };
    },
    async *watchPolicies(_req, ctx) {
      const ch = new AsyncQueue<ReturnType<Kernel["listPolicies"]>>({ capacity: 64 });
      closeOnAbort(ctx, ch as AsyncQueue<unknown>);
      const { snapshot, close } = kernel.watchPolicies((all) => ch.push(all));
      try {
        yield { descriptors: snapshot, observedAtUnixMs: BigInt(Date.now()) };
        for await (const all of ch) yield { descriptors: all, observedAtUnixMs: BigInt(Date.now()) };
      } catch (e) {
        if (e instanceof QueueOverflowError) throw overflowError("this policy watcher");
        throw e;
      } finally {
        close();
      }
    },
  };
}

async function control(kernel: Kernel, identity: Identity, op: "cancel" | "suspend" | "resume", sessionId: string, reason: string) {
  try {
    return await kernel.control(identity, op, sessionId, reason);
  } catch (e) {
    if (e instanceof ControlError) {
      throw new ConnectError(e.message, e.kind === "not_found" ? Code.NotFound : Code.PermissionDenied);
    }
    throw new ConnectError(`INTERNAL_ERROR: ${(e as Error).message}`, Code.Internal);
  }
}

function idleUntilAbort(ctx: HandlerContext): Promise<void> {
  return new Promise((resolve) => {
    if (ctx.signal.aborted) resolve();
    else ctx.signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
