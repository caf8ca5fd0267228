// Where does a Send's time go inside the runtime, without gRPC? Drives
// Kernel.send() in-process (memory and durable SQLite stores) with the same
// HandoffContext workload as `npm run bench:runtime`, and times the protobuf
// steps a Send pays around the kernel. Diagnostic only.
//
//   npx tsx scripts/bench/runtime-kernel-micro.ts [--duration=2000]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  ParticipantActivitySchema,
  SendRequestSchema,
  SendResponseSchema,
  SessionMetadataSchema,
  SessionStartPayloadSchema,
} from "@/lib/gen/macp/v1/core_pb";
import { EnvelopeSchema, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { HandoffContextPayloadSchema, HandoffOfferPayloadSchema } from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import { DEFAULT_CONFIGURATION_VERSION, HANDOFF_MODE, MACP_VERSION, MODE_VERSION } from "@/lib/macp/constants";
import { newSessionId } from "@/lib/macp/ids";
import { leanEnvelope, nextActors, SessionFold, toSummary } from "@/lib/macp/projections/summary";
import { encodeListSummary } from "@/lib/runtime/list-row-codec";
import type { Identity } from "@/lib/runtime/auth";
import { loadConfig } from "@/lib/runtime/config";
import { Kernel } from "@/lib/runtime/kernel";
import { openStore } from "@/lib/runtime/store";

const durationMs = Number(/--duration=(\d+)/.exec(process.argv.join(" "))?.[1] ?? 2_000);
const silent = { info() {}, warn() {}, error() {} };

const who = (sender: string): Identity => ({
  sender,
  canStartSessions: true,
  allowedModes: [],
  canManageRegistry: true,
  isObserver: false,
});

const env = (sessionId: string, messageType: string, messageId: string, payload: Uint8Array): Envelope =>
  create(EnvelopeSchema, {
    macpVersion: MACP_VERSION,
    mode: HANDOFF_MODE,
    messageType,
    messageId,
    sessionId,
    timestampUnixMs: BigInt(Date.now()),
    payload,
  });

const ctxPayload = toBinary(
  HandoffContextPayloadSchema,
  create(HandoffContextPayloadSchema, { handoffId: "h", contentType: "text/plain", context: new Uint8Array(64).fill(120) }),
);

async function kernelRun(memoryOnly: boolean, concurrency: number) {
  const dir = memoryOnly ? null : fs.mkdtempSync(path.join(os.tmpdir(), "baton-bench-runtime-kmicro-"));
  const config = loadConfig({
    MACP_ALLOW_INSECURE: "1",
    MACP_MEMORY_ONLY: memoryOnly ? "1" : "0",
    MACP_DATA_DIR: dir ?? "",
    MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
    MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
  });
  const store = await openStore({ memoryOnly, dataDir: config.dataDir, logger: silent });
  const kernel = await Kernel.open({ store, config, logger: silent });
  const callers = await Promise.all(
    Array.from({ length: concurrency }, async (_, i) => {
      const owner = who(`o${i}`);
      const sid = newSessionId();
      const start = toBinary(
        SessionStartPayloadSchema,
        create(SessionStartPayloadSchema, {
          intent: "x",
          participants: [`o${i}`, `t${i}`],
          modeVersion: MODE_VERSION,
          configurationVersion: DEFAULT_CONFIGURATION_VERSION,
          ttlMs: 600_000n,
        }),
      );
      const offer = toBinary(HandoffOfferPayloadSchema, create(HandoffOfferPayloadSchema, { handoffId: "h", targetParticipant: `t${i}` }));
      for (const [t, p] of [
        ["SessionStart", start],
        ["HandoffOffer", offer],
      ] as const) {
        const ack = await kernel.send(owner, env(sid, t, `${i}-${t}`, p));
        if (!ack.ok) throw new Error(`${t}: ${ack.error?.message}`);
      }
      return { owner, sid };
    }),
  );
  let n = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    callers.map(async (c, i) => {
      let k = 0;
      while (performance.now() - t0 < durationMs) {
        const ack = await kernel.send(c.owner, env(c.sid, "HandoffContext", `${i}-c-${k++}`, ctxPayload));
        if (!ack.ok) throw new Error(ack.error?.message);
        n++;
      }
    }),
  );
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await kernel.close();
  await store.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  return { perSecond: (n / wall) * 1000, cpuUsPerSend: (cpu.user + cpu.system) / n };
}

function micro(name: string, fn: () => unknown, n = 100_000) {
  for (let i = 0; i < 5_000; i++) fn();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) fn();
  console.log(`  ${name.padEnd(58)} ${(((performance.now() - t0) * 1000) / n).toFixed(2).padStart(7)} µs`);
}

console.log("protobuf steps around one Send (single-threaded, µs per op):");
const e = env(newSessionId(), "HandoffContext", "m-1", ctxPayload);
const reqBytes = toBinary(SendRequestSchema, create(SendRequestSchema, { envelope: e }));
const ack = create(SendResponseSchema, {
  ack: { ok: true, messageId: "m-1", sessionId: e.sessionId, acceptedAtUnixMs: 1n, sessionState: 1 },
});
micro("decode SendRequest (connect, per request)", () => fromBinary(SendRequestSchema, reqBytes));
micro("encode SendResponse (connect, per request)", () => toBinary(SendResponseSchema, ack));
micro("kernel: create(EnvelopeSchema, input) (returns input as is)", () => create(EnvelopeSchema, e));
micro("kernel: encode envelope for the log record", () => toBinary(EnvelopeSchema, e));
micro("mode: decode HandoffContextPayload", () => fromBinary(HandoffContextPayloadSchema, e.payload));
{
  // What the list row adds to each append (kernel.ts listRow): fold the envelope, then the row.
  const sid = e.sessionId;
  const fold = new SessionFold(sid, HANDOFF_MODE);
  const startPayload = toBinary(
    SessionStartPayloadSchema,
    create(SessionStartPayloadSchema, {
      intent: "x",
      participants: ["o", "t"],
      modeVersion: MODE_VERSION,
      configurationVersion: DEFAULT_CONFIGURATION_VERSION,
      ttlMs: 600_000n,
    }),
  );
  fold.add(create(EnvelopeSchema, { ...env(sid, "SessionStart", "s", startPayload), sender: "o" }));
  fold.add(
    create(EnvelopeSchema, {
      ...env(
        sid,
        "HandoffOffer",
        "o",
        toBinary(HandoffOfferPayloadSchema, create(HandoffOfferPayloadSchema, { handoffId: "h", targetParticipant: "t" })),
      ),
      sender: "o",
    }),
  );
  const meta = () =>
    create(SessionMetadataSchema, {
      sessionId: sid,
      mode: HANDOFF_MODE,
      state: 1,
      startedAtUnixMs: 1_700_000_000_000n,
      expiresAtUnixMs: 1_700_000_600_000n,
      modeVersion: MODE_VERSION,
      configurationVersion: DEFAULT_CONFIGURATION_VERSION,
      policyVersion: "policy.default",
      participants: ["o", "t"],
      participantActivity: [
        create(ParticipantActivitySchema, { participantId: "o", lastMessageAtUnixMs: 1_700_000_000_005n, messageCount: 3 }),
      ],
      initiator: "o",
    });
  let k = 0;
  micro("list row: fold the envelope (lean, shared reducer)", () => fold.add(leanEnvelope({ ...e, messageId: `lr-${k++}` })), 50_000);
  micro("list row: metadata + toSummary + nextActors + encode", () => {
    const m = meta();
    const view = fold.peek();
    return [encodeListSummary(toSummary(m, view, fold.count, 1_700_000_000_010)), nextActors(m, view)];
  });
}

console.log(`\nKernel.send() in-process, HandoffContext closed loop, ${durationMs} ms:`);
for (const memoryOnly of [true, false]) {
  for (const c of [1, 64]) {
    const r = await kernelRun(memoryOnly, c);
    console.log(
      `  ${memoryOnly ? "memory store" : "SQLite store"}  c=${String(c).padStart(2)}  ${Math.round(r.perSecond).toLocaleString("en-US").padStart(7)} sends/s  ${r.cpuUsPerSend.toFixed(1).padStart(6)} µs CPU/send`,
    );
  }
}
