// bench:runtime's report: the Sends and fan-out tables, the runtime's ratios
// to the no-op servers, and the verdicts against the targets.
import type { ServerKind } from "./runtime-common";
import { disturbed, fmt, fmtInt, LABEL, LABEL_WIDTH, mib, otherLoad, saturated, table, verdict } from "./runtime-format";
import type { machine } from "./runtime-machine";
import { opts } from "./runtime-options";
import type { FanoutPoint, SendsPoint } from "./runtime-phases";

/** One concurrency level's throughput and CPU ratios of the durable runtime to the no-op servers. */
export interface Ratio {
  concurrency: number;
  runtimeOverConnectNoop: number;
  runtimeOverGrpcjsNoop: number;
  runtimeOverFasterNoop: number;
  cpuCapacityRuntimeOverConnectNoop: number;
  cpuCapacityRuntimeOverGrpcjsNoop: number;
  /** The same runtime on connect-node (MACP_GRPC_SERVER=connect) ÷ the faster no-op. */
  runtimeOnConnectOverFasterNoop: number;
  /** A compared point ran while other processes used the machine. */
  disturbed: boolean;
}

/** The report's text (tables and verdicts) and the throughput ratios for the JSON blob. */
export function report(
  m: ReturnType<typeof machine>,
  sends: { points: SendsPoint[]; describe: Record<string, string> } | null,
  fanout: FanoutPoint[] | null,
): { lines: string[]; ratios: Ratio[] } {
  const out: string[] = [];
  const say = (s = "") => {
    out.push(s);
  };
  say("");
  say("=== bench:runtime ===");
  say(`machine: ${m.cores} cores, ${m.cpuModel}, ${m.memoryGiB} GiB RAM, Node ${m.node}, ${m.platform}`);
  say(
    "setup:   every server runs in its own child process and the load generator in another (node --import tsx),\n" +
      "         so server and client each get a core; the orchestrator only waits. Loopback h2c gRPC, connect-node\n" +
      "         client with ONE HTTP/2 connection per load-generator job (shared by all callers), rate limits off.",
  );

  const ratios: Ratio[] = [];
  if (sends) {
    say("");
    say(
      `1) Handoff Sends, closed loop: each caller owns a handoff session (SessionStart + HandoffOffer), then sends\n` +
        `   HandoffContext (${opts.contextBytes} B context) back to back; ${opts.durationMs / 1000} s measured after ${opts.warmupMs / 1000} s warm-up; only ok Acks count.`,
    );
    for (const [k, d] of Object.entries(sends.describe)) say(`   ${LABEL[k as ServerKind].padEnd(LABEL_WIDTH)} ${d}`);
    say("");
    say(
      table(
        ["server", "in flight", "ok acks/s", "p50 ms", "p99 ms", "max ms", "failed", "saturated", "other load"],
        sends.points.map((p) => [
          LABEL[p.server],
          p.result.concurrency,
          fmtInt(p.result.sendsPerSecond),
          fmt(p.result.latency.p50Ms, 2),
          fmt(p.result.latency.p99Ms, 2),
          fmt(p.result.latency.maxMs, 1),
          p.result.failedAcks + p.result.errors,
          saturated(p.serverSample.cpuCores, p.result.client.cpuCores),
          otherLoad(p.otherCpuCores),
        ]),
      ),
    );
    say("");
    say("   saturated: which process used >= 0.85 of a core (CLIENT = the load generator was the limit, so that server's");
    say("   real ceiling is higher than shown; compare CPU per Ack below instead). other load: cores used by other");
    say(
      `   processes on the machine during the point, shown when above ${fmt(opts.quietCores * 1.5, 2)} ("!": throughput and latency of that row are not trustworthy).`,
    );
    say("");
    say("   where the CPU went (cores: 1.00 = one core busy; µs/ack: CPU time per ok Ack; other = other processes on the box):");
    say("");
    say(
      table(
        [
          "server",
          "in flight",
          "server cores",
          "server µs/ack",
          "client cores",
          "client µs/ack",
          "other cores",
          "srv loop lag p99",
          "recs/commit",
          "runs",
        ],
        sends.points.map((p) => [
          LABEL[p.server],
          p.result.concurrency,
          fmt(p.serverSample.cpuCores, 2),
          fmt(p.serverCpuUsPerAck, 0),
          fmt(p.result.client.cpuCores, 2),
          fmt(p.clientCpuUsPerAck, 0),
          fmt(p.otherCpuCores, 2),
          `${fmt(Number(p.serverSample.extra?.eventLoopLagP99Ms), 1)} ms`,
          p.recordsPerCommit === undefined ? "" : fmt(p.recordsPerCommit, 1),
          p.runs,
        ]),
      ),
    );
    const pt = (k: ServerKind, c: number) => sends!.points.find((p) => p.server === k && p.result.concurrency === c);
    for (const c of opts.levels) {
      const rt = pt("runtime-durable", c);
      const cn = pt("connect-noop", c);
      const gj = pt("grpcjs-noop", c);
      const tput = (p?: SendsPoint) => p?.result.sendsPerSecond ?? NaN;
      const cpu = (p?: SendsPoint) => p?.serverCpuUsPerAck ?? NaN;
      ratios.push({
        concurrency: c,
        runtimeOverConnectNoop: tput(rt) / tput(cn),
        runtimeOverGrpcjsNoop: tput(rt) / tput(gj),
        runtimeOverFasterNoop: tput(rt) / Math.max(tput(cn), tput(gj)),
        cpuCapacityRuntimeOverConnectNoop: cpu(cn) / cpu(rt),
        cpuCapacityRuntimeOverGrpcjsNoop: cpu(gj) / cpu(rt),
        runtimeOnConnectOverFasterNoop: tput(pt("runtime-connect", c)) / Math.max(tput(cn), tput(gj)),
        disturbed: [rt, cn, gj].some((p) => !p || disturbed(p.otherCpuCores)),
      });
    }
    say("");
    say("2) Ratios: durable runtime (default server, @grpc/grpc-js) ok acks/s ÷ no-op ceiling (same run, machine and load");
    say("   generator), and the same ratio from server CPU per Ack (what one saturated server core could do; robust to");
    say("   background load). Last column: the same runtime with MACP_GRPC_SERVER=connect ÷ the faster no-op.");
    say("");
    say(
      table(
        [
          "in flight",
          "runtime/connect-noop",
          "runtime/grpcjs-noop",
          "runtime/faster no-op",
          "target ≥ 0.50 at 64",
          "CPU-capacity vs connect",
          "CPU-capacity vs grpc-js",
          "runtime-on-connect/faster no-op",
        ],
        ratios.map((r) => [
          r.concurrency,
          fmt(r.runtimeOverConnectNoop, 2),
          fmt(r.runtimeOverGrpcjsNoop, 2),
          fmt(r.runtimeOverFasterNoop, 2),
          r.concurrency === 64 ? verdict(r.runtimeOverFasterNoop >= 0.5, r.disturbed) : "",
          fmt(r.cpuCapacityRuntimeOverConnectNoop, 2),
          fmt(r.cpuCapacityRuntimeOverGrpcjsNoop, 2),
          fmt(r.runtimeOnConnectOverFasterNoop, 2),
        ]),
      ),
    );
  }

  if (fanout) {
    say("");
    say(
      `3) Fan-out: passive StreamSession subscribers (subscribe_session_id) on one durable handoff session\n` +
        `   (no-op rows: the same job against the no-op servers acting as bare relays, for a ceiling);\n` +
        `   ${opts.ratePerSecond} accepted HandoffContext envelopes/s, ${opts.durationMs / 1000} s measured after ${opts.warmupMs / 1000} s warm-up;\n` +
        `   latency = Send call start -> arrival at each subscriber. Subscribers live in the load-generator process,\n` +
        `   ${opts.subscribersPerConnection} streams per HTTP/2 connection, as ${opts.subscriberClient === "raw" ? "lean node:http2 gRPC readers (full protobuf decode)" : "connect-node clients"};\n` +
        `   RSS of the server process sampled every 20 ms.`,
    );
    say("");
    say(
      table(
        [
          "server",
          "subscribers",
          "conns",
          "envelopes",
          "deliveries",
          "missing",
          "p50 ms",
          "p99 ms",
          "max ms",
          "last-sub p99",
          "ts-based p99",
          "ack p99",
          "RSS before",
          "RSS peak",
          "other load",
        ],
        fanout.map((p) => [
          LABEL[p.server],
          p.result.subscribers,
          p.result.connections,
          p.result.sentInWindow,
          fmtInt(p.result.deliveries),
          p.result.missing + p.result.streamErrors,
          fmt(p.result.delivery.p50Ms, 2),
          fmt(p.result.delivery.p99Ms, 2),
          fmt(p.result.delivery.maxMs, 1),
          fmt(p.result.lastSubscriber.p99Ms, 1),
          fmt(p.result.deliveryByTimestamp.p99Ms, 0),
          fmt(p.result.ackLatency.p99Ms, 2),
          mib(p.rssBeforeSubscribersBytes),
          mib(p.serverSample.rssPeakBytes),
          otherLoad(p.otherCpuCores),
        ]),
      ),
    );
    say("");
    say("   server µs/delivery: all server CPU of the run (subscribing and the Sends included) ÷ envelopes delivered.");
    say("");
    say(
      table(
        [
          "server",
          "subscribers",
          "server cores",
          "server µs/delivery",
          "client cores",
          "other cores",
          "srv loop lag p99",
          "cli loop lag p99",
          "setup ms",
          "runs",
        ],
        fanout.map((p) => [
          LABEL[p.server],
          p.result.subscribers,
          fmt(p.serverSample.cpuCores, 2),
          fmt(p.serverCpuUsPerDelivery, 1),
          fmt(p.result.client.cpuCores, 2),
          fmt(p.otherCpuCores, 2),
          `${fmt(Number(p.serverSample.extra?.eventLoopLagP99Ms), 1)} ms`,
          `${fmt(p.result.client.eventLoopP99Ms, 1)} ms`,
          fmt(p.result.subscribeSetupMs, 0),
          p.runs,
        ]),
      ),
    );
    for (const kind of ["runtime-durable", "runtime-connect"] as const) {
      const big = fanout.find((p) => p.server === kind && p.result.subscribers === 1_000);
      if (!big) continue;
      say("");
      say(
        `   ${kind === "runtime-durable" ? "target" : `(${LABEL[kind]})`}: 1,000 subscribers with p99 <= 50 ms: ` +
          `${verdict(big.result.delivery.p99Ms <= 50 && big.result.missing === 0, disturbed(big.otherCpuCores))} ` +
          `(p99 ${fmt(big.result.delivery.p99Ms, 1)} ms, ${big.result.missing} missing; server CPU ${fmt(big.serverCpuUsPerDelivery, 1)} µs per delivery ` +
          `= ${fmt((big.serverCpuUsPerDelivery * opts.ratePerSecond * big.result.subscribers) / 1e6, 2)} cores at ${opts.ratePerSecond}/s × ${big.result.subscribers})`,
      );
    }
  }

  return { lines: out, ratios };
}
