// macp.v1.MACPRuntimeService over connect-node: turns RPCs into kernel calls,
// authenticates each call, and maps kernel verdicts onto Acks, inline stream
// errors or gRPC statuses exactly where PROTOCOL.md §7.2 and §8 put them.
// RPCs left out of the implementation answer UNIMPLEMENTED.
//
// Memory per stream is bounded. History is read from storage a page at a
// time, only as fast as the transport takes it (the hosts apply HTTP/2 flow
// control; see grpc-host.ts); live envelopes and events queue in an
// AsyncQueue (lib/base) bounded by count and bytes, and a subscriber that
// falls further behind is ended with RESOURCE_EXHAUSTED and the sequence to
// resume from. Each identity may hold a limited number of streams at once
// (subscriptions.ts). StreamSession, the one bidirectional RPC, is
// stream-session.ts; what every handler shares is rpc-common.ts.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type ServiceImpl } from "@connectrpc/connect";
import { MACP_VERSION } from "@/lib/macp/constants";
import {
  ListSessionsResponseSchema,
  MACPRuntimeService,
  SessionLifecycleEvent_EventType as EventType,
  SessionLifecycleEventSchema,
  type SessionLifecycleEvent,
} from "@/lib/gen/macp/v1/core_pb";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { AsyncQueue, QueueOverflowError } from "@/lib/base/async-queue";
import type { AuthResolver, Identity } from "./auth";
import type { RuntimeConfig } from "./config";
import { encodedAs } from "./grpc-host";
import { ControlError, type Kernel, type Logger } from "./kernel";
import { MODES } from "./modes";
import { closeOnAbort, envelopeBytes, idleUntilAbort, lifecycleBytes, once, overflowError, requireIdentity } from "./rpc-common";
import { streamSessionHandler } from "./stream-session";
import { Subscriptions } from "./subscriptions";

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

const runtimeModes = () => [...MODES.values()].map((m) => m.descriptor);

/** Connect routes for the runtime service (used by the connect-node server option). */
export function runtimeRoutes(deps: RuntimeServiceDeps) {
  return (router: ConnectRouter) => router.service(MACPRuntimeService, runtimeServiceImpl(deps));
}

/**
 * The MACPRuntimeService implementation, independent of the server that hosts
 * it: connect-node mounts it as routes, grpc-host.ts serves it on @grpc/grpc-js.
 */
export function runtimeServiceImpl(deps: RuntimeServiceDeps): Partial<ServiceImpl<typeof MACPRuntimeService>> {
  const { kernel, auth, config } = deps;
  const subscriptions = deps.subscriptions ?? new Subscriptions(config);

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

    streamSession: streamSessionHandler(deps, subscriptions),

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
