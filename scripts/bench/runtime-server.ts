// Server child of `npm run bench:runtime`. Runs ONE gRPC server in its own
// process (so it has a core to itself, apart from the load generator) and
// reports its CPU and memory per measured phase over IPC.
//
//   node --import tsx scripts/bench/runtime-server.ts <kind>
//
// kinds:
//   runtime-durable  the real runtime (startRuntime) as shipped: default server
//                    (@grpc/grpc-js), SQLite in a fresh temp dir
//   runtime-connect  the same runtime with MACP_GRPC_SERVER=connect (connect-node)
//   runtime-memory   the default runtime with MACP_MEMORY_ONLY=1 (diagnostic row)
//   connect-noop     connect-node, same generated service and HTTP/2 settings
//                    as the runtime's connect option, whose Send returns an ok Ack immediately
//   grpcjs-noop      @grpc/grpc-js server whose Send returns an ok Ack immediately
// The no-op servers also relay Sends to StreamSession subscribers (fan-out ceiling).
import fs from "node:fs";
import http2 from "node:http2";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { AddressInfo } from "node:net";
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import pino from "pino";
import type { ServiceDefinition } from "@grpc/grpc-js";
import {
  MACPRuntimeService,
  SendRequestSchema,
  SendResponseSchema,
  StreamSessionRequestSchema,
  StreamSessionResponseSchema,
  type SendRequest,
  type StreamSessionRequest,
  type StreamSessionResponse,
} from "@/lib/gen/macp/v1/core_pb";
import { AckSchema, SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { AsyncQueue } from "@/lib/base/async-queue";
import { startRuntime, type RunningRuntime } from "@/lib/runtime";
import { errorText, type ResourceSample, type ServerCommand, type ServerKind, type ServerReply } from "./runtime-common";

const kind = process.argv[2] as ServerKind;
const reply = (m: ServerReply) => process.send?.(m);

/** What the runtime's index.ts gives connect-node for the default 1 MiB payload limit. */
const READ_MAX_BYTES = 1_048_576 * 4 + 65_536;
const H2_SETTINGS: http2.Settings = { maxConcurrentStreams: 100_000 };

interface Running {
  url: string;
  describe: string;
  extra?: () => Record<string, unknown>;
  close(): Promise<void>;
}

async function listenH2(server: http2.Http2Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  return `http://127.0.0.1:${a.port}`;
}

/** The real runtime; `grpcServer` unset = whatever startRuntime defaults to. */
async function startRuntimeServer(durable: boolean, grpcServer?: "connect"): Promise<Running> {
  const dataDir = durable ? fs.mkdtempSync(path.join(os.tmpdir(), "baton-bench-runtime-")) : null;
  const rt: RunningRuntime = await startRuntime({
    env: {
      MACP_BIND_ADDR: "127.0.0.1:0",
      MACP_ALLOW_INSECURE: "1",
      MACP_MEMORY_ONLY: durable ? "0" : "1",
      ...(dataDir ? { MACP_DATA_DIR: dataDir } : {}),
      MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
      MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
      // The fan-out points hold up to 1,000 streams as one identity.
      MACP_MAX_SUBSCRIPTIONS: "0",
      MACP_SUBSCRIBER_BUFFER: process.env.MACP_SUBSCRIBER_BUFFER ?? "",
      ...(grpcServer ? { MACP_GRPC_SERVER: grpcServer } : {}),
    },
    logger: pino({ level: process.env.BENCH_RUNTIME_LOG_LEVEL ?? "error" }),
  });
  // The kernel keeps its store private; the group-commit counters are read
  // here for the report only (absent on stores without stats()).
  const store = (rt.kernel as unknown as { store?: { stats?: () => Record<string, number> } }).store;
  return {
    url: rt.url,
    describe:
      `real runtime on ${rt.config.grpcServer === "connect" ? "connect-node (MACP_GRPC_SERVER=connect)" : "@grpc/grpc-js (default)"}, ` +
      (durable ? `durable SQLite (WAL, synchronous=FULL) in ${dataDir}` : "MACP_MEMORY_ONLY=1"),
    extra: () => ({ kernel: rt.kernel.stats(), store: store?.stats?.() ?? null }),
    async close() {
      await rt.close();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function okAck(messageId: string, sessionId: string) {
  return create(AckSchema, {
    ok: true,
    messageId,
    sessionId,
    acceptedAtUnixMs: BigInt(Date.now()),
    sessionState: SessionState.OPEN,
  });
}

/**
 * The no-op servers are trivial brokers, so that the fan-out points have a
 * ceiling too: Send acks at once (no validation, no storage) and relays the
 * envelope to the session's passive subscribers; StreamSession replays what
 * the session has seen so far, then relays.
 */
class NoopBroker<E, S> {
  private readonly history = new Map<string, E[]>();
  private readonly subscribers = new Map<string, Set<S>>();
  constructor(readonly deliver: (sub: S, env: E) => void) {}
  publish(sessionId: string, env: E): void {
    if (sessionId === "") return;
    let h = this.history.get(sessionId);
    if (!h) this.history.set(sessionId, (h = []));
    h.push(env);
    const subs = this.subscribers.get(sessionId);
    if (subs) for (const sub of subs) this.deliver(sub, env);
  }
  subscribe(sessionId: string, sub: S): { history: readonly E[]; close: () => void } {
    let set = this.subscribers.get(sessionId);
    if (!set) this.subscribers.set(sessionId, (set = new Set()));
    set.add(sub);
    return { history: [...(this.history.get(sessionId) ?? [])], close: () => set.delete(sub) };
  }
}

async function startConnectNoop(): Promise<Running> {
  const broker = new NoopBroker<Envelope, AsyncQueue<StreamSessionResponse>>((ch, env) => {
    ch.push(create(StreamSessionResponseSchema, { response: { case: "envelope", value: env } }));
  });
  const routes = (router: ConnectRouter) =>
    router.service(MACPRuntimeService, {
      send(req) {
        const env = req.envelope;
        if (env) broker.publish(env.sessionId, env);
        return { ack: okAck(env?.messageId ?? "", env?.sessionId ?? "") };
      },
      async *streamSession(requests, ctx) {
        const first = await requests[Symbol.asyncIterator]().next();
        if (first.done || first.value.subscribeSessionId === "") return;
        const ch = new AsyncQueue<StreamSessionResponse>({ capacity: 1024 });
        ctx.signal.addEventListener("abort", () => ch.close(), { once: true });
        const sub = broker.subscribe(first.value.subscribeSessionId, ch);
        try {
          for (const env of sub.history) yield { response: { case: "envelope", value: env } };
          for await (const resp of ch) yield resp;
        } finally {
          sub.close();
        }
      },
    });
  const handler = connectNodeAdapter({ routes, readMaxBytes: READ_MAX_BYTES, grpc: true, grpcWeb: true, connect: true });
  const server = http2.createServer({ settings: H2_SETTINGS }, handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  const url = await listenH2(server);
  return {
    url,
    describe:
      "connect-node no-op: Send acks at once and relays to subscribers (same service, adapter options and HTTP/2 settings as the runtime on connect-node)",
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sessions) s.destroy();
      }),
  };
}

/** Just enough of a grpc-js server call for the broker. */
interface GrpcCall<Req> {
  request: Req;
}
interface GrpcDuplex<Req, Res> {
  on(event: "data", cb: (m: Req) => void): void;
  on(event: "cancelled" | "close" | "finish" | "end" | "error", cb: () => void): void;
  write(m: Res): boolean;
  end(): void;
}

async function startGrpcJsNoop(): Promise<Running> {
  const grpc = await import("@grpc/grpc-js");
  const server = new grpc.Server({
    "grpc.max_concurrent_streams": 100_000,
    "grpc.max_receive_message_length": READ_MAX_BYTES,
  });
  let loader: typeof import("@grpc/proto-loader") | null = null;
  if (process.env.BENCH_GRPCJS_CODEC !== "protobuf-es") {
    try {
      loader = await import("@grpc/proto-loader");
    } catch {
      loader = null;
    }
  }
  let codec: string;
  if (loader) {
    // proto-loader (protobufjs) codec, the way a typical grpc-js service is built.
    type PlainEnvelope = { messageId?: string; sessionId?: string };
    type Frame = { subscribeSessionId?: string };
    type Resp = { envelope: PlainEnvelope };
    const def = loader.loadSync("macp/v1/core.proto", {
      includeDirs: [path.resolve("proto")],
      keepCase: false,
      longs: String,
      enums: String,
      defaults: false,
      oneofs: true,
    });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      macp: { v1: { MACPRuntimeService: { service: ServiceDefinition } } };
    };
    const broker = new NoopBroker<PlainEnvelope, GrpcDuplex<Frame, Resp>>((call, env) => void call.write({ envelope: env }));
    server.addService(pkg.macp.v1.MACPRuntimeService.service, {
      Send(call: GrpcCall<{ envelope?: PlainEnvelope }>, cb: (err: null, res: unknown) => void) {
        const e = call.request.envelope;
        if (e) broker.publish(e.sessionId ?? "", e);
        cb(null, {
          ack: {
            ok: true,
            messageId: e?.messageId ?? "",
            sessionId: e?.sessionId ?? "",
            acceptedAtUnixMs: String(Date.now()),
            sessionState: "SESSION_STATE_OPEN",
          },
        });
      },
      StreamSession: grpcStreamHandler(broker, (f: Frame) => f.subscribeSessionId ?? ""),
    });
    codec = "@grpc/proto-loader (protobufjs) codec";
  } else {
    // Fallback: custom serializers from the protobuf-es generated schemas.
    const method = <I extends DescMessage, O extends DescMessage>(name: string, i: I, o: O, stream: boolean) => ({
      path: `/macp.v1.MACPRuntimeService/${name}`,
      requestStream: stream,
      responseStream: stream,
      requestSerialize: (m: MessageShape<I>) => Buffer.from(toBinary(i, m)),
      requestDeserialize: (b: Buffer) => fromBinary(i, b),
      responseSerialize: (m: MessageShape<O>) => Buffer.from(toBinary(o, m)),
      responseDeserialize: (b: Buffer) => fromBinary(o, b),
    });
    const service = {
      Send: method("Send", SendRequestSchema, SendResponseSchema, false),
      StreamSession: method("StreamSession", StreamSessionRequestSchema, StreamSessionResponseSchema, true),
    };
    const broker = new NoopBroker<Envelope, GrpcDuplex<StreamSessionRequest, StreamSessionResponse>>(
      (call, env) => void call.write(create(StreamSessionResponseSchema, { response: { case: "envelope", value: env } })),
    );
    server.addService(service as unknown as ServiceDefinition, {
      Send(call: GrpcCall<SendRequest>, cb: (err: null, res: unknown) => void) {
        const e = call.request.envelope;
        if (e) broker.publish(e.sessionId, e);
        cb(null, create(SendResponseSchema, { ack: okAck(e?.messageId ?? "", e?.sessionId ?? "") }));
      },
      StreamSession: grpcStreamHandler(broker, (f: StreamSessionRequest) => f.subscribeSessionId),
    });
    codec = "protobuf-es toBinary/fromBinary codec";
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    describe: `@grpc/grpc-js no-op: Send acks at once and relays to subscribers; ${codec}, max_concurrent_streams 100000`,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

function grpcStreamHandler<F, E, R>(broker: NoopBroker<E, GrpcDuplex<F, R>>, sessionOf: (f: F) => string) {
  return (call: GrpcDuplex<F, R>) => {
    let close: (() => void) | null = null;
    call.on("data", (frame: F) => {
      const sid = sessionOf(frame);
      if (sid === "" || close) return;
      const sub = broker.subscribe(sid, call);
      close = sub.close;
      // Replay through the same path as live delivery.
      for (const env of sub.history) broker.deliver(call, env);
    });
    const done = () => {
      close?.();
      close = null;
    };
    call.on("cancelled", done);
    call.on("close", done);
    call.on("error", done);
    call.on("end", () => {
      done();
      call.end();
    });
  };
}

// ------------------------------------------------------------ sampling

let sampler: NodeJS.Timeout | null = null;
let phase: { t0: number; cpu0: NodeJS.CpuUsage; rss0: number; rssPeak: number; heapPeak: number; ticks: number } | null = null;
/** The histogram records whole timer intervals, so lag = value - resolution. */
const LOOP_RESOLUTION_MS = 2;
const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });

function takeSample() {
  if (!phase) return;
  // memoryUsage.rss() is cheap; the full memoryUsage() walks the heap spaces.
  const rss = process.memoryUsage.rss();
  if (rss > phase.rssPeak) phase.rssPeak = rss;
  if (++phase.ticks % 25 === 0) {
    const heap = process.memoryUsage().heapUsed;
    if (heap > phase.heapPeak) phase.heapPeak = heap;
  }
}

function startPhase(): number {
  const rss = process.memoryUsage.rss();
  phase = { t0: performance.now(), cpu0: process.cpuUsage(), rss0: rss, rssPeak: rss, heapPeak: 0, ticks: 0 };
  loopDelay.reset();
  loopDelay.enable();
  if (sampler) clearInterval(sampler);
  sampler = setInterval(takeSample, 20);
  return rss;
}

function stopPhase(running: Running): ResourceSample {
  takeSample();
  if (sampler) clearInterval(sampler);
  sampler = null;
  loopDelay.disable();
  const p = phase ?? { t0: performance.now(), cpu0: process.cpuUsage(), rss0: 0, rssPeak: 0, heapPeak: 0, ticks: 0 };
  phase = null;
  const wallMs = performance.now() - p.t0;
  const cpu = process.cpuUsage(p.cpu0);
  return {
    wallMs,
    cpuCores: (cpu.user + cpu.system) / 1000 / wallMs,
    rssStartBytes: p.rss0,
    rssPeakBytes: p.rssPeak,
    heapUsedPeakBytes: p.heapPeak,
    extra: {
      ...(running.extra?.() ?? {}),
      eventLoopLagP99Ms: Math.max(0, loopDelay.percentile(99) / 1e6 - LOOP_RESOLUTION_MS),
      eventLoopLagMaxMs: Math.max(0, loopDelay.max / 1e6 - LOOP_RESOLUTION_MS),
    },
  };
}

async function main() {
  let running: Running;
  try {
    if (kind === "runtime-durable") running = await startRuntimeServer(true);
    else if (kind === "runtime-connect") running = await startRuntimeServer(true, "connect");
    else if (kind === "runtime-memory") running = await startRuntimeServer(false);
    else if (kind === "connect-noop") running = await startConnectNoop();
    else if (kind === "grpcjs-noop") running = await startGrpcJsNoop();
    else throw new Error(`unknown server kind ${String(kind)}`);
  } catch (e) {
    reply({ type: "failed", error: errorText(e) });
    process.exit(1);
  }
  process.on("message", async (cmd: ServerCommand) => {
    if (cmd.type === "sample-start") reply({ type: "sample-started", id: cmd.id, rssBytes: startPhase() });
    else if (cmd.type === "sample-stop") reply({ type: "sampled", id: cmd.id, sample: stopPhase(running) });
    else if (cmd.type === "close") {
      await running.close().catch(() => undefined);
      reply({ type: "closed", id: cmd.id });
      // Let the IPC message flush, then exit (writes --cpu-prof if enabled).
      setTimeout(() => process.exit(0), 50);
    }
  });
  // Never outlive the orchestrator (and remove the temp data dir on the way out).
  process.on("disconnect", () => {
    setTimeout(() => process.exit(0), 3_000).unref();
    void running.close().finally(() => process.exit(0));
  });
  reply({ type: "ready", url: running.url, describe: running.describe, pid: process.pid });
}

void main();
