// Interop: the runtime talks to a client built on @grpc/grpc-js (the gRPC
// stack the official TypeScript SDK uses), not only to connect-node clients:
// unary Send with each SDK's dev header, and the bidirectional StreamSession.
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { buildEnvelope } from "@/lib/macp/payloads";
import { SendRequestSchema, SendResponseSchema, StreamSessionRequestSchema, StreamSessionResponseSchema } from "@/lib/gen/macp/v1/core_pb";
import type { RunningRuntime } from "@/lib/runtime";
import { newSessionId, startTestRuntime } from "./harness";

const codec = <D extends DescMessage>(schema: D) => ({
  serialize: (m: MessageShape<D>) => Buffer.from(toBinary(schema, m)),
  deserialize: (b: Buffer) => fromBinary(schema, b),
});

const Client = grpc.makeGenericClientConstructor(
  {
    Send: {
      path: "/macp.v1.MACPRuntimeService/Send",
      requestStream: false,
      responseStream: false,
      requestSerialize: codec(SendRequestSchema).serialize,
      requestDeserialize: codec(SendRequestSchema).deserialize,
      responseSerialize: codec(SendResponseSchema).serialize,
      responseDeserialize: codec(SendResponseSchema).deserialize,
    },
    StreamSession: {
      path: "/macp.v1.MACPRuntimeService/StreamSession",
      requestStream: true,
      responseStream: true,
      requestSerialize: codec(StreamSessionRequestSchema).serialize,
      requestDeserialize: codec(StreamSessionRequestSchema).deserialize,
      responseSerialize: codec(StreamSessionResponseSchema).serialize,
      responseDeserialize: codec(StreamSessionResponseSchema).deserialize,
    },
  },
  "MACPRuntimeService",
);

let rt: RunningRuntime;
let client: grpc.Client;
beforeAll(async () => {
  rt = await startTestRuntime();
  client = new Client(rt.address, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client?.close();
  await rt?.close();
});

function md(header: "authorization" | "x-macp-agent-id", id: string): grpc.Metadata {
  const m = new grpc.Metadata();
  m.set(header, header === "authorization" ? `Bearer ${id}` : id);
  return m;
}

function send(env: ReturnType<typeof buildEnvelope>, meta: grpc.Metadata) {
  return new Promise<MessageShape<typeof SendResponseSchema>>((resolve, reject) => {
    const c = client as unknown as {
      Send(
        req: unknown,
        meta: grpc.Metadata,
        cb: (err: grpc.ServiceError | null, res: MessageShape<typeof SendResponseSchema>) => void,
      ): void;
    };
    c.Send(create(SendRequestSchema, { envelope: env }), meta, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

describe("@grpc/grpc-js client interop", () => {
  it("Send and bidirectional StreamSession work with both SDK dev headers", async () => {
    const sid = newSessionId();
    const start = buildEnvelope({
      mode: HANDOFF_MODE,
      messageType: "SessionStart",
      sessionId: sid,
      payload: { participants: ["agent://ts", "agent://py"], modeVersion: "1.0.0", configurationVersion: "c", ttlMs: 60_000n },
    });
    const started = await send(start, md("x-macp-agent-id", "agent://ts"));
    expect(started.ack?.ok, started.ack?.error?.message).toBe(true);

    const c = client as unknown as {
      StreamSession(meta: grpc.Metadata): grpc.ClientDuplexStream<unknown, MessageShape<typeof StreamSessionResponseSchema>>;
    };
    const stream = c.StreamSession(md("authorization", "agent://py"));
    const got: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      stream.on("data", (r) => {
        if (r.response.case === "envelope") got.push(`${r.response.value.messageType}:${r.response.value.sender}`);
        if (got.length === 3) resolve();
      });
      stream.on("error", (e: grpc.ServiceError) => (e.code === grpc.status.CANCELLED ? resolve() : reject(e)));
    });
    stream.write(create(StreamSessionRequestSchema, { subscribeSessionId: sid }));
    await new Promise((r) => setTimeout(r, 100));
    const offer = buildEnvelope({
      mode: HANDOFF_MODE,
      messageType: "HandoffOffer",
      sessionId: sid,
      payload: { handoffId: "h1", targetParticipant: "agent://py" },
    });
    expect((await send(offer, md("x-macp-agent-id", "agent://ts"))).ack?.ok).toBe(true);
    // The Python-side agent answers on the same bidi stream; its echo arrives like any envelope.
    stream.write(
      create(StreamSessionRequestSchema, {
        envelope: buildEnvelope({ mode: HANDOFF_MODE, messageType: "HandoffAccept", sessionId: sid, payload: { handoffId: "h1" } }),
      }),
    );
    await done;
    stream.cancel();
    expect(got).toEqual(["SessionStart:agent://ts", "HandoffOffer:agent://ts", "HandoffAccept:agent://py"]);
  });
});
