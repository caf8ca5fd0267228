// The load generator's MACP side (runtime-load.ts): a connect-node gRPC
// client on one HTTP/2 connection, the bench's envelopes (a handoff session
// with one offer, then context envelopes), and the client's own CPU and
// event-loop lag over a measured window.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { create, toBinary } from "@bufbuild/protobuf";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { MACPRuntimeService, SessionStartPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import { EnvelopeSchema, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { HandoffContextPayloadSchema, HandoffOfferPayloadSchema } from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import { DEFAULT_CONFIGURATION_VERSION, HANDOFF_MODE, HANDOFF_TYPES, MACP_VERSION, MODE_VERSION } from "@/lib/macp/constants";
import { newSessionId } from "@/lib/macp/ids";

export type RuntimeClient = Client<typeof MACPRuntimeService>;

const HANDOFF_ID = "h-bench";
const SESSION_TTL_MS = 10 * 60_000;

export function connection(url: string): { manager: Http2SessionManager; client: RuntimeClient } {
  const manager = new Http2SessionManager(url);
  const transport = createGrpcTransport({ baseUrl: url, sessionManager: manager });
  return { manager, client: createClient(MACPRuntimeService, transport) };
}

export const bearer = (id: string) => ({ authorization: `Bearer ${id}` });

export function envelope(sessionId: string, messageType: string, messageId: string, payload: Uint8Array): Envelope {
  return create(EnvelopeSchema, {
    macpVersion: MACP_VERSION,
    mode: HANDOFF_MODE,
    messageType,
    messageId,
    sessionId,
    sender: "",
    timestampUnixMs: BigInt(Date.now()),
    payload,
  });
}

/** Start a handoff session owned by `owner` and put one offer to `target` on it. */
export async function openHandoff(client: RuntimeClient, owner: string, target: string, tag: string): Promise<string> {
  const sessionId = newSessionId();
  const headers = bearer(owner);
  const start = toBinary(
    SessionStartPayloadSchema,
    create(SessionStartPayloadSchema, {
      intent: "bench",
      participants: [owner, target],
      modeVersion: MODE_VERSION,
      configurationVersion: DEFAULT_CONFIGURATION_VERSION,
      policyVersion: "",
      ttlMs: BigInt(SESSION_TTL_MS),
    }),
  );
  const offer = toBinary(
    HandoffOfferPayloadSchema,
    create(HandoffOfferPayloadSchema, { handoffId: HANDOFF_ID, targetParticipant: target, scope: "bench", reason: "bench" }),
  );
  for (const [type, payload] of [
    ["SessionStart", start],
    [HANDOFF_TYPES.Offer, offer],
  ] as const) {
    const res = await client.send({ envelope: envelope(sessionId, type, `${tag}-${type}`, payload) }, { headers });
    if (!res.ack?.ok) throw new Error(`${type} refused: ${res.ack?.error?.code} ${res.ack?.error?.message}`);
  }
  return sessionId;
}

export function contextPayload(bytes: number): Uint8Array {
  return toBinary(
    HandoffContextPayloadSchema,
    create(HandoffContextPayloadSchema, {
      handoffId: HANDOFF_ID,
      contentType: "text/plain",
      context: new TextEncoder().encode("x".repeat(bytes)),
    }),
  );
}

/** The histogram records whole timer intervals, so lag = value - resolution. */
const LOOP_RESOLUTION_MS = 2;

export function clientMeter() {
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  return () => {
    loop.disable();
    const cpu = process.cpuUsage(cpu0);
    return {
      cpuCores: (cpu.user + cpu.system) / 1000 / (performance.now() - t0),
      eventLoopP99Ms: Math.max(0, loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS),
    };
  };
}
