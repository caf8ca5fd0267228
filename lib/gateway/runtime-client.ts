// The gateway's client to a MACP runtime: gRPC over HTTP/2 (h2c for the
// embedded runtime, TLS for an external one), with the gateway's read-only
// observer credentials attached to every call. Everything else in the gateway
// talks to the runtime through the small `RuntimeReader` interface, so tests
// can substitute a fake and another transport can be dropped in later.
//
// Every open upstream stream (StreamSession, WatchSessions) is counted: +1 when
// the call starts, −1 in `finally`, so GetGatewayStats can prove that no
// subscription outlives the browser streams that needed it.
import { setMaxListeners } from "node:events";
import fs from "node:fs";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createSessionManager } from "@/lib/agent/http2-session";
import {
  MACPRuntimeService,
  StreamSessionRequestSchema,
  type SessionLifecycleEvent,
  type SessionMetadata,
  type StreamSessionRequest,
} from "@/lib/gen/macp/v1/core_pb";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { RuntimeCatalogService, type WatchListRowsResponse } from "@/lib/gen/baton/v1/runtime_catalog_pb";
import { normalizeErrorCode } from "@/lib/macp/constants";
import { linkedController, whenAborted } from "@/lib/base/abort";

export type RuntimeKind = "embedded" | "external";

/** What the gateway needs from a runtime: observation only, never Send. */
export interface RuntimeReader {
  readonly kind: RuntimeKind;
  /** host:port (or URL) shown to operators. */
  readonly address: string;
  /** Upstream streams open right now (StreamSession + WatchSessions). */
  readonly openStreams: number;
  getSession(sessionId: string, signal?: AbortSignal): Promise<SessionMetadata>;
  listSessions(signal?: AbortSignal): Promise<SessionMetadata[]>;
  /** WatchSessions: initial sync (one CREATED per session) then live lifecycle events. */
  watchSessions(signal: AbortSignal): AsyncIterable<SessionLifecycleEvent>;
  /**
   * Passive subscribe (StreamSession with subscribe_session_id): history after
   * `afterSequence`, then live envelopes, until `signal` aborts. Inline errors
   * are thrown as ConnectErrors.
   */
  subscribeSession(sessionId: string, afterSequence: number, signal: AbortSignal): AsyncIterable<Envelope>;
  /**
   * Baton's list-row feed (baton.v1.RuntimeCatalogService.WatchListRows):
   * every session's list row after `afterChange`, then live changes. A plain
   * MACP runtime answers UNIMPLEMENTED.
   */
  watchListRows(request: ListRowsRequest, signal: AbortSignal): AsyncIterable<WatchListRowsResponse>;
  /** One cheap unary call (ListModes): resolves when the runtime answers, throws when it cannot be reached. */
  ping(signal: AbortSignal, timeoutMs: number): Promise<void>;
  /** Abort every call and drop the connection. */
  close(): void;
}

export interface ListRowsRequest {
  afterChange: bigint;
  /** The store the cursor belongs to ("" = none). */
  storeId: string;
  /** Rows per response (0 = the runtime's default). */
  maxRows?: number;
}

export interface RuntimeClientOptions {
  kind: RuntimeKind;
  /** http://host:port (h2c) or https://host:port (TLS). */
  baseUrl: string;
  /** Bearer token of an observer identity; sent as `authorization: Bearer <token>`. */
  token: string;
  /** PEM CA bundle to trust for https (e.g. a self-signed runtime certificate). */
  caPath?: string;
  /** Deadline for unary calls. Default 15 s. */
  unaryTimeoutMs?: number;
  /** HTTP/2 keepalive ping interval. Default 15 s. */
  pingIntervalMs?: number;
}

/** Identity the console uses to read the embedded runtime in dev mode. */
export const CONSOLE_OBSERVER_IDENTITY = "baton:console";

/** The gateway's read credentials, attached to every upstream call. */
export function bearerInterceptor(token: string): Interceptor {
  const value = `Bearer ${token}`;
  return (next) => (req) => {
    req.header.set("authorization", value);
    return next(req);
  };
}

/** Validate a runtime base URL; returns it without a trailing slash. */
export function parseRuntimeUrl(raw: string, variable = "MACP_RUNTIME_URL"): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new Error(`${variable} must be a URL like http://127.0.0.1:50051 or https://runtime.example:50051, got "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`${variable} must use http:// (h2c) or https:// (TLS), got "${url.protocol}"`);
  }
  return url;
}

/** Turn an inline StreamSession error (MACPError) into a ConnectError. */
function inlineError(code: string, message: string): ConnectError {
  const normalized = normalizeErrorCode(code);
  const grpc =
    normalized === "FORBIDDEN" || code.startsWith("FORBIDDEN")
      ? Code.PermissionDenied
      : normalized === "SESSION_NOT_FOUND"
        ? Code.NotFound
        : normalized === "UNAUTHENTICATED"
          ? Code.Unauthenticated
          : Code.Internal;
  return new ConnectError(message && message !== code ? `${code}: ${message}` : code, grpc);
}

export function createRuntimeClient(options: RuntimeClientOptions): RuntimeReader {
  const url = parseRuntimeUrl(options.baseUrl);
  const baseUrl = url.toString().replace(/\/$/, "");
  const nodeOptions = url.protocol === "https:" && options.caPath ? { ca: fs.readFileSync(options.caPath) } : {};
  const sessionManager = createSessionManager(
    baseUrl,
    { pingIntervalMs: options.pingIntervalMs ?? 15_000, pingIdleConnection: true },
    nodeOptions,
  );
  const transport = createGrpcTransport({
    baseUrl,
    sessionManager,
    interceptors: [bearerInterceptor(options.token)],
  });
  const client: Client<typeof MACPRuntimeService> = createClient(MACPRuntimeService, transport);
  const catalog: Client<typeof RuntimeCatalogService> = createClient(RuntimeCatalogService, transport);
  const timeoutMs = options.unaryTimeoutMs ?? 15_000;
  const shutdown = new AbortController();
  setMaxListeners(0, shutdown.signal); // every call links to it
  let open = 0;

  return {
    kind: options.kind,
    address: url.host,
    get openStreams() {
      return open;
    },

    async getSession(sessionId, signal) {
      const ac = linkedController(signal, shutdown.signal);
      try {
        const res = await client.getSession({ sessionId }, { signal: ac.signal, timeoutMs });
        if (!res.metadata) throw new ConnectError(`runtime returned no metadata for session ${sessionId}`, Code.Internal);
        return res.metadata;
      } finally {
        ac.abort();
      }
    },

    async ping(signal, pingTimeoutMs) {
      const ac = linkedController(signal, shutdown.signal);
      try {
        await client.listModes({}, { signal: ac.signal, timeoutMs: pingTimeoutMs });
      } finally {
        ac.abort();
      }
    },

    async listSessions(signal) {
      const ac = linkedController(signal, shutdown.signal);
      try {
        return (await client.listSessions({}, { signal: ac.signal, timeoutMs })).sessions;
      } finally {
        ac.abort();
      }
    },

    async *watchSessions(signal) {
      const ac = linkedController(signal, shutdown.signal);
      open++;
      try {
        for await (const res of client.watchSessions({}, { signal: ac.signal })) {
          if (res.event) yield res.event;
        }
      } finally {
        open--;
        ac.abort();
      }
    },

    async *watchListRows(request, signal) {
      const ac = linkedController(signal, shutdown.signal);
      open++;
      try {
        yield* catalog.watchListRows(
          { afterChange: request.afterChange, storeId: request.storeId, maxRows: request.maxRows ?? 0 },
          { signal: ac.signal },
        );
      } finally {
        open--;
        ac.abort();
      }
    },

    async *subscribeSession(sessionId, afterSequence, signal) {
      const ac = linkedController(signal, shutdown.signal);
      // Keep the request side open: a half-close would end the response stream (§8.1).
      async function* frames(): AsyncGenerator<StreamSessionRequest> {
        yield create(StreamSessionRequestSchema, { subscribeSessionId: sessionId, afterSequence: BigInt(afterSequence) });
        await whenAborted(ac.signal);
      }
      open++;
      try {
        for await (const res of client.streamSession(frames(), { signal: ac.signal })) {
          if (res.response.case === "envelope") yield res.response.value;
          else if (res.response.case === "error") throw inlineError(res.response.value.code, res.response.value.message);
        }
      } finally {
        open--;
        ac.abort();
      }
    },

    close() {
      shutdown.abort(new ConnectError("gateway shutting down", Code.Canceled));
      sessionManager.abort();
    },
  };
}
