// PROTOTYPE, benchmark only, not shipped: the real runtime kernel and durable
// store behind an @grpc/grpc-js server instead of connect-node, to put numbers
// on "serve agents' gRPC with grpc-js". It implements just what the bench
// drives (Send, and StreamSession passive subscribe) with the same kernel
// calls as lib/runtime/server.ts; everything else answers UNIMPLEMENTED.
//
// Fan-out writes each accepted envelope's StreamSessionResponse bytes ONCE per
// publish and hands the same Buffer to every subscriber (grpc-js lets the
// response serializer pass bytes through), instead of re-encoding per stream.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type * as GrpcJs from "@grpc/grpc-js";
import {
  SendRequestSchema,
  SendResponseSchema,
  StreamSessionRequestSchema,
  StreamSessionResponseSchema,
  type SendRequest,
  type SendResponse,
  type StreamSessionRequest,
} from "@/lib/gen/macp/v1/core_pb";
import { createAuthResolver } from "@/lib/runtime/auth";
import { loadConfig } from "@/lib/runtime/config";
import { Kernel, type Delivered } from "@/lib/runtime/kernel";
import { openStore } from "@/lib/runtime/store";

const silent = { info() {}, warn() {}, error() {} };

export async function startRuntimeOverGrpcJs(readMaxBytes: number) {
  const grpc = await import("@grpc/grpc-js");
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-bench-runtime-"));
  const config = loadConfig({
    MACP_BIND_ADDR: "127.0.0.1:0",
    MACP_ALLOW_INSECURE: "1",
    MACP_MEMORY_ONLY: "0",
    MACP_DATA_DIR: dataDir,
    MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
    MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
  });
  const auth = createAuthResolver(config);
  const store = await openStore({ memoryOnly: false, dataDir, logger: silent });
  const kernel = Kernel.open({ store, config, logger: silent });

  const headersOf = (md: GrpcJs.Metadata) => {
    const h = new Headers();
    for (const [k, v] of Object.entries(md.getMap())) if (typeof v === "string") h.set(k, v);
    return h;
  };

  /** One encoded response per accepted envelope, shared by all subscribers. */
  const encoded = new WeakMap<Delivered, Buffer>();
  const frameOf = (d: Delivered): Buffer => {
    let b = encoded.get(d);
    if (!b) {
      const bytes = toBinary(StreamSessionResponseSchema, create(StreamSessionResponseSchema, { response: { case: "envelope", value: d.envelope } }));
      b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      encoded.set(d, b);
    }
    return b;
  };

  const service: GrpcJs.ServiceDefinition = {
    Send: {
      path: "/macp.v1.MACPRuntimeService/Send",
      requestStream: false,
      responseStream: false,
      requestSerialize: (m: SendRequest) => Buffer.from(toBinary(SendRequestSchema, m)),
      requestDeserialize: (b: Buffer) => fromBinary(SendRequestSchema, b),
      responseSerialize: (m: SendResponse) => Buffer.from(toBinary(SendResponseSchema, m)),
      responseDeserialize: (b: Buffer) => fromBinary(SendResponseSchema, b),
    },
    StreamSession: {
      path: "/macp.v1.MACPRuntimeService/StreamSession",
      requestStream: true,
      responseStream: true,
      requestSerialize: (m: StreamSessionRequest) => Buffer.from(toBinary(StreamSessionRequestSchema, m)),
      requestDeserialize: (b: Buffer) => fromBinary(StreamSessionRequestSchema, b),
      // Responses are written pre-encoded.
      responseSerialize: (b: Buffer) => b,
      responseDeserialize: (b: Buffer) => b,
    },
  } as unknown as GrpcJs.ServiceDefinition;

  const server = new grpc.Server({ "grpc.max_concurrent_streams": 100_000, "grpc.max_receive_message_length": readMaxBytes });
  server.addService(service, {
    Send(call: GrpcJs.ServerUnaryCall<SendRequest, SendResponse>, cb: GrpcJs.sendUnaryData<SendResponse>) {
      const env = call.request.envelope;
      if (!env) return cb({ code: grpc.status.INVALID_ARGUMENT, details: "SendRequest.envelope is required" });
      kernel.send(auth.resolve(headersOf(call.metadata)), env).then(
        (ack) => cb(null, create(SendResponseSchema, { ack })),
        (e: unknown) => cb({ code: grpc.status.INTERNAL, details: String(e) }),
      );
    },
    StreamSession(call: GrpcJs.ServerDuplexStream<StreamSessionRequest, Buffer>) {
      const identity = auth.resolve(headersOf(call.metadata));
      let close: (() => void) | null = null;
      const end = (code: GrpcJs.status, details: string) => {
        close?.();
        close = null;
        call.destroy(Object.assign(new Error(details), { code, details }));
      };
      // Bounded like the runtime's subscriber buffer: a subscriber that lets
      // this many bytes pile up is ended.
      const maxBuffered = config.subscriberBuffer * 1024;
      const deliver = (d: Delivered) => {
        if (call.writableLength > maxBuffered) return end(grpc.status.RESOURCE_EXHAUSTED, "subscriber fell too far behind");
        call.write(frameOf(d));
      };
      call.on("data", (frame: StreamSessionRequest) => {
        if (close) return;
        const sid = frame.subscribeSessionId;
        if (!identity) return end(grpc.status.UNAUTHENTICATED, "no valid credentials");
        if (frame.envelope || sid === "") return end(grpc.status.UNIMPLEMENTED, "prototype: passive subscribe only");
        if (!kernel.hasSession(sid)) return end(grpc.status.NOT_FOUND, `session ${sid} does not exist`);
        if (!kernel.canRead(identity, sid)) return end(grpc.status.PERMISSION_DENIED, "not a participant or observer");
        const sub = kernel.subscribe(sid, Number(frame.afterSequence), deliver);
        close = sub.close;
        for (const d of sub.history) deliver(d);
      });
      const done = () => {
        close?.();
        close = null;
      };
      call.on("cancelled", done);
      call.on("error", done);
      call.on("close", done);
      call.on("end", () => {
        done();
        call.end();
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const storeStats = (store as unknown as { stats?: () => Record<string, number> }).stats;
  return {
    url: `http://127.0.0.1:${port}`,
    describe: `PROTOTYPE (not shipped): same kernel + durable SQLite store behind @grpc/grpc-js (Send + passive StreamSession only; one encode per fan-out envelope) in ${dataDir}`,
    extra: () => ({ kernel: kernel.stats(), store: storeStats?.call(store) ?? null }),
    async close() {
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      await kernel.close();
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
