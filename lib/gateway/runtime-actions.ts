// The gateway's write path to a MACP runtime: Send, CancelSession and
// RegisterPolicy on behalf of one signed-in person, each call carrying that
// person's runtime credential (`authorization: Bearer <credential>`) for that
// call only, plus GetPolicy/ListSessions with the console's own read-only
// credential. One HTTP/2 connection serves every user; the credential is a
// per-call header, never shared state.
import { setMaxListeners } from "node:events";
import fs from "node:fs";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { createSessionManager } from "@/lib/agent/http2-session";
import { MACPRuntimeService, type SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import type { Ack, Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import type { PolicyDescriptor } from "@/lib/gen/macp/v1/policy_pb";
import { linkedController } from "@/lib/base/abort";
import { parseRuntimeUrl } from "./runtime-client";

export interface RuntimeActions {
  /** Send one envelope as the identity behind `credential`. */
  send(envelope: Envelope, credential: string, signal?: AbortSignal): Promise<Ack>;
  /** CancelSession as the identity behind `credential`. gRPC failures are thrown as ConnectErrors. */
  cancelSession(sessionId: string, reason: string, credential: string, signal?: AbortSignal): Promise<Ack>;
  /** RegisterPolicy as the identity behind `credential`; `error` is the runtime's refusal, "" when registered. */
  registerPolicy(descriptor: PolicyDescriptor, credential: string, signal?: AbortSignal): Promise<{ ok: boolean; error: string }>;
  /** GetPolicy with the console's credential; null when not registered. */
  getPolicy(policyId: string, signal?: AbortSignal): Promise<PolicyDescriptor | null>;
  /** ListSessions with the console's credential. */
  listSessions(signal?: AbortSignal): Promise<SessionMetadata[]>;
  close(): void;
}

export interface RuntimeActionsOptions {
  /** http://host:port (h2c) or https://host:port (TLS). */
  baseUrl: string;
  /** The console's own (observer) bearer token, for reads. */
  readToken: string;
  caPath?: string;
  /** Deadline per call. Default 15 s. */
  timeoutMs?: number;
}

function bearer(credential: string): Record<string, string> {
  return { authorization: `Bearer ${credential}` };
}

export function createRuntimeActions(options: RuntimeActionsOptions): RuntimeActions {
  const url = parseRuntimeUrl(options.baseUrl);
  const baseUrl = url.toString().replace(/\/$/, "");
  const nodeOptions = url.protocol === "https:" && options.caPath ? { ca: fs.readFileSync(options.caPath) } : {};
  const sessionManager = createSessionManager(baseUrl, { pingIntervalMs: 15_000, pingIdleConnection: true }, nodeOptions);
  // No interceptor: every call names its credential itself.
  const client: Client<typeof MACPRuntimeService> = createClient(MACPRuntimeService, createGrpcTransport({ baseUrl, sessionManager }));
  const timeoutMs = options.timeoutMs ?? 15_000;
  const shutdown = new AbortController();
  setMaxListeners(0, shutdown.signal);

  async function call<T>(signal: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const ac = linkedController(signal, shutdown.signal);
    try {
      return await run(ac.signal);
    } finally {
      ac.abort();
    }
  }

  return {
    send(envelope, credential, signal) {
      return call(signal, async (s) => {
        const res = await client.send({ envelope }, { signal: s, timeoutMs, headers: bearer(credential) });
        if (!res.ack) throw new ConnectError("the runtime answered Send without an Ack", Code.Internal);
        return res.ack;
      });
    },

    cancelSession(sessionId, reason, credential, signal) {
      return call(signal, async (s) => {
        const res = await client.cancelSession({ sessionId, reason }, { signal: s, timeoutMs, headers: bearer(credential) });
        if (!res.ack) throw new ConnectError("the runtime answered CancelSession without an Ack", Code.Internal);
        return res.ack;
      });
    },

    registerPolicy(descriptor, credential, signal) {
      return call(signal, async (s) => {
        const res = await client.registerPolicy({ policyDescriptor: descriptor }, { signal: s, timeoutMs, headers: bearer(credential) });
        return { ok: res.ok, error: res.error };
      });
    },

    getPolicy(policyId, signal) {
      return call(signal, async (s) => {
        try {
          const res = await client.getPolicy({ policyId }, { signal: s, timeoutMs, headers: bearer(options.readToken) });
          return res.policyDescriptor ?? null;
        } catch (e) {
          if (e instanceof ConnectError && e.code === Code.NotFound) return null;
          throw e;
        }
      });
    },

    listSessions(signal) {
      return call(
        signal,
        async (s) => (await client.listSessions({}, { signal: s, timeoutMs, headers: bearer(options.readToken) })).sessions,
      );
    },

    close() {
      shutdown.abort(new ConnectError("gateway shutting down", Code.Canceled));
      sessionManager.abort();
    },
  };
}
