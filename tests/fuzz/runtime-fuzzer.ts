// The runtime input fuzzer: random and mutated envelopes, and raw malformed
// gRPC/protobuf frames, sent to a real runtime over loopback gRPC. Used by
// tests/integration/runtime-fuzz.test.ts (a bounded run inside `npm test`) and
// by `npm run fuzz` (scripts/fuzz-runtime.ts, as long as you like).
//
// The pieces: fuzz-actions.ts (the generators), fuzz-envelopes.ts (an action
// as an envelope), fuzz-checks.ts (the oracle), raw-wire.ts (gRPC by hand),
// protocol-model.ts (the verdicts). This file is the driver: lanes, chunks,
// property runs, the history check and the statistics.
//
// Cases are generated with fast-check from one seed. The work is split into
// independent lanes (each with its own sessions, so the lanes can run
// concurrently and each lane's outcome depends only on its own seed), and
// every lane into chunks of property runs; a property run is a sequence of
// actions against fresh sessions, so a failure shrinks to a short sequence
// and is replayed from the chunk's seed and fast-check's path.
//
// Invariants checked on every case:
//   - every Send answers within the timeout (no hang) with a well-formed Ack
//     (ids echoed, ok xor error, error codes from the MACP registry), or with
//     a gRPC status: INVALID_ARGUMENT "INVALID_ENVELOPE: …" exactly when the
//     request is not a decodable SendRequest with an envelope, and the gRPC
//     layer's own statuses only for broken framing (no or two messages,
//     unknown compression, larger than the receive limit);
//   - the verdict (accepted, duplicate, rejected) equals the independent
//     protocol model's (protocol-model.ts): no envelope the protocol forbids
//     is accepted, none it allows is refused;
//   - after each run every session's stored history is exactly its accepted
//     envelopes, in order, each once;
//   - at the end the runtime still answers, holds no stream subscription,
//     and its heap grew with what it accepted, not with what it refused.
import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import fc from "fast-check";
import { MACPRuntimeService, SendRequestSchema, type StreamSessionRequestSchema } from "@/lib/gen/macp/v1/core_pb";
import type { Ack, Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { SLOTS, actionArb, concat, mutate, openingArb, openingStart, type Action } from "./fuzz-actions";
import { checkAck, checkRaw, describeAck, describeEnvelope, logLine } from "./fuzz-checks";
import { envelopeFor, type Run } from "./fuzz-envelopes";
import { ProtocolModel, type Verdict } from "./protocol-model";
import { RawWire, SEND, grpcFrame } from "./raw-wire";

type RuntimeClient = Client<typeof MACPRuntimeService>;

export interface FuzzOptions {
  /** Base URL of the runtime (http://127.0.0.1:port). */
  url: string;
  /** The runtime's MACP_MAX_PAYLOAD_BYTES. */
  maxPayloadBytes: number;
  /** The runtime's gRPC receive limit (lib/runtime/index.ts: 4 × payload limit + 64 KiB). */
  maxReceiveBytes: number;
  seed: number;
  /** At least this many cases are run (unless a failure stops the campaign). */
  cases: number;
  lanes?: number;
  /** Per request; longer is a hang. */
  timeoutMs?: number;
  /** Check the stored histories after every n-th property run (1: all). */
  historyEvery?: number;
  /** Replay one failing chunk: its seed and fast-check path, as printed in a failure. */
  replay?: { chunkSeed: number; path: string };
  log?: (line: string) => void;
}

export interface FuzzStats {
  cases: number;
  runs: number;
  verdicts: Record<Verdict, number>;
  rejectCodes: Record<string, number>;
  /** Raw requests by outcome: "ack" or "status <code>". */
  raw: Record<string, number>;
  /** Bytes of envelopes the runtime accepted (their payloads). */
  acceptedPayloadBytes: number;
  /** Accepted envelopes by message type. */
  acceptedTypes: Record<string, number>;
  /** Rejections by reason (the error message with names and numbers blanked out). */
  rejectReasons: Record<string, number>;
}

export interface FuzzFailure {
  chunkSeed: number;
  path: string;
  message: string;
  /** Command line that replays it. */
  replay: string;
}

export interface FuzzResult {
  seed: number;
  stats: FuzzStats;
  failure: FuzzFailure | null;
  durationMs: number;
}

// ------------------------------------------------------------- execution

class Lane {
  /** Cases this lane ran (in counted runs). */
  cases = 0;
  runs = 0;
  private readonly clients = new Map<string, RuntimeClient>();
  private readonly anonymous: RuntimeClient;
  readonly wire: RawWire;

  constructor(
    private readonly o: Required<Omit<FuzzOptions, "replay" | "log">>,
    readonly stats: FuzzStats,
  ) {
    this.anonymous = createClient(MACPRuntimeService, createGrpcTransport({ baseUrl: o.url }));
    this.wire = new RawWire(o.url, o.timeoutMs);
  }

  client(identity: string | null): RuntimeClient {
    if (identity === null) return this.anonymous;
    let c = this.clients.get(identity);
    if (!c) {
      c = createClient(
        MACPRuntimeService,
        createGrpcTransport({
          baseUrl: this.o.url,
          interceptors: [(next) => (req) => (req.header.set("authorization", `Bearer ${identity}`), next(req))],
        }),
      );
      this.clients.set(identity, c);
    }
    return c;
  }

  private tally(verdict: Verdict, ack: Ack | undefined, env: Envelope): void {
    this.stats.verdicts[verdict]++;
    if (verdict === "reject" && ack?.error) {
      this.stats.rejectCodes[ack.error.code] = (this.stats.rejectCodes[ack.error.code] ?? 0) + 1;
      const reason = `${ack.error.code}: ${ack.error.message
        .replace(/"[^"]*"/g, '"…"')
        .replace(/\b[\w.:-]*\d[\w.:-]*\b/g, "#")
        .slice(0, 90)}`;
      // Bounded: mutated ids make endless distinct messages.
      const key = reason in this.stats.rejectReasons || Object.keys(this.stats.rejectReasons).length < 200 ? reason : "(other reasons)";
      this.stats.rejectReasons[key] = (this.stats.rejectReasons[key] ?? 0) + 1;
    }
    if (verdict === "accept") {
      this.stats.acceptedPayloadBytes += env.payload.length;
      this.stats.acceptedTypes[env.messageType] = (this.stats.acceptedTypes[env.messageType] ?? 0) + 1;
    }
  }

  /** Runs one action and checks it; throws with a description on any violation. */
  async execute(a: Action, run: Run, index: number): Promise<void> {
    const { env, identity } = envelopeFor(a, run, this.o.maxPayloadBytes);
    const where = () => `action ${index} as ${identity ?? "(no credentials)"} over ${a.wire.kind}: ${describeEnvelope(env)}`;
    const expect = (sent: Envelope) => run.model.decide(identity, sent, Date.now());
    try {
      if (a.wire.kind === "client") {
        const res = await this.client(identity).send({ envelope: env }, { timeoutMs: this.o.timeoutMs });
        const got = checkAck(res.ack, env);
        const want = expect(env);
        if (got !== want) throw new Error(`the runtime answered ${describeAck(res.ack!)}, the protocol model says ${want}`);
        this.tally(got, res.ack, env);
        run.log.push(logLine(run, index, identity, a.wire.kind, env, describeAck(res.ack!)));
        return;
      }
      const request = toBinary(SendRequestSchema, create(SendRequestSchema, { envelope: env }));
      let body: Uint8Array;
      let headers: Record<string, string> = {};
      let sentBytes: Uint8Array = request;
      if (a.wire.kind === "raw") body = grpcFrame(request);
      else if (a.wire.kind === "mutated") {
        sentBytes = mutate(request, a.wire.mutations);
        body = grpcFrame(sentBytes);
      } else {
        const f = a.wire.framing;
        body =
          f === "truncated"
            ? grpcFrame(request.subarray(0, request.length >> 1), 0, request.length)
            : f === "compressed-identity"
              ? grpcFrame(request, 1)
              : f === "two-messages"
                ? concat(grpcFrame(request), grpcFrame(request))
                : f === "oversize-declared"
                  ? grpcFrame(request, 0, this.o.maxReceiveBytes + 1)
                  : new Uint8Array();
        if (f === "compressed-identity") headers = { "grpc-encoding": "identity" };
      }
      const out = await this.wire.send(SEND, identity, body, headers);
      this.stats.raw[out.status === 0 ? "ack" : `status ${out.status}`] =
        (this.stats.raw[out.status === 0 ? "ack" : `status ${out.status}`] ?? 0) + 1;
      const outcome = await checkRaw(a.wire, sentBytes, out, {
        expect,
        maxReceiveBytes: this.o.maxReceiveBytes,
        tally: (verdict, ack, sent) => this.tally(verdict, ack, sent),
      });
      run.log.push(logLine(run, index, identity, a.wire.kind, outcome.env ?? env, outcome.text));
    } catch (e) {
      const what =
        e instanceof ConnectError && e.code === Code.DeadlineExceeded
          ? `no answer within ${this.o.timeoutMs} ms (hang)`
          : (e as Error).message;
      const before = run.log.length > 0 ? `\nthe actions before it, in this run:\n  ${run.log.slice(-60).join("\n  ")}` : "";
      throw new Error(`${where()}: ${what}${before}`);
    }
  }

  /** Every session of the run holds exactly its accepted envelopes, in order. */
  async checkHistories(run: Run): Promise<void> {
    for (const s of run.model.sessions.values()) {
      const c = this.client(s.initiator);
      const meta = (await c.getSession({ sessionId: s.id }, { timeoutMs: this.o.timeoutMs })).metadata;
      const stored = 1 + (meta?.participantActivity.reduce((n, a) => n + a.messageCount, 0) ?? -1);
      if (stored !== s.accepted.length) throw new Error(`session ${s.id} reports ${stored} envelopes, ${s.accepted.length} were accepted`);
      const got = await this.history(c, s.id, s.accepted.length);
      const summary = (e: Envelope) => `${e.messageType}/${e.messageId}/${e.sender}/${e.payload.length}`;
      const want = s.accepted.map(summary);
      const have = got.map((g) => summary(g.env));
      if (JSON.stringify(have) !== JSON.stringify(want)) {
        throw new Error(
          `session ${s.id} history differs from what was accepted:\n  stored   ${have.join(" ")}\n  accepted ${want.join(" ")}`,
        );
      }
      got.forEach((g, i) => {
        if (g.seq !== i + 1) throw new Error(`session ${s.id}: envelope ${i + 1} has sequence ${g.seq}`);
      });
    }
  }

  private async history(c: RuntimeClient, sessionId: string, count: number): Promise<Array<{ env: Envelope; seq: number }>> {
    const frames = (async function* (): AsyncGenerator<MessageInitShape<typeof StreamSessionRequestSchema>> {
      yield { subscribeSessionId: sessionId, afterSequence: 0n };
      await new Promise(() => undefined); // keep the request side open; the abort ends it
    })();
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), this.o.timeoutMs);
    const out: Array<{ env: Envelope; seq: number }> = [];
    try {
      for await (const r of c.streamSession(frames, { signal: ac.signal })) {
        if (r.response.case === "envelope") out.push({ env: r.response.value, seq: out.length + 1 });
        else if (r.response.case === "error") throw new Error(`inline ${r.response.value.code} on the history stream`);
        if (out.length >= count) break;
      }
    } catch (e) {
      if (!ac.signal.aborted) throw e;
      throw new Error(`session ${sessionId}: only ${out.length} of ${count} envelopes within ${this.o.timeoutMs} ms`);
    } finally {
      clearTimeout(timer);
      ac.abort();
    }
    return out;
  }
}

/** A 32-bit seed for chunk `chunk` of lane `lane`. */
export function chunkSeed(seed: number, lane: number, chunk: number): number {
  let h = (seed ^ Math.imul(lane + 1, 0x9e3779b1) ^ Math.imul(chunk + 1, 0x85ebca77)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b) >>> 0;
  return (h ^ (h >>> 16)) | 0;
}

const RUNS_PER_CHUNK = 10;

/** Run a campaign; resolves with the statistics and the first failure, if any. */
export async function fuzzRuntime(options: FuzzOptions): Promise<FuzzResult> {
  const o = { lanes: 8, timeoutMs: 10_000, historyEvery: 1, ...options };
  const log = options.log ?? (() => undefined);
  const stats: FuzzStats = {
    cases: 0,
    runs: 0,
    verdicts: { accept: 0, duplicate: 0, reject: 0 },
    rejectCodes: {},
    raw: {},
    acceptedPayloadBytes: 0,
    acceptedTypes: {},
    rejectReasons: {},
  };
  const t0 = Date.now();
  let failure: FuzzFailure | null = null;
  const lanes: Lane[] = [];

  const property = (lane: Lane, counting: boolean) =>
    fc.asyncProperty(openingArb, fc.array(actionArb, { minLength: 1, maxLength: 40, size: "max" }), async (opening, random) => {
      const run: Run = {
        ids: Array.from({ length: SLOTS }, () => crypto.randomUUID()),
        model: new ProtocolModel(o.maxPayloadBytes),
        log: [],
      };
      const actions = [...opening.flatMap((open, slot) => (open ? [openingStart(slot)] : [])), ...random];
      for (let i = 0; i < actions.length; i++) {
        await lane.execute(actions[i]!, run, i);
        if (counting) {
          stats.cases++;
          lane.cases++;
        }
      }
      if (lane.runs++ % o.historyEvery === 0) await lane.checkHistories(run);
      if (counting) stats.runs++;
    });

  const runChunk = async (lane: Lane, seed: number, path?: string): Promise<boolean> => {
    const details = await fc.check(
      property(lane, path === undefined),
      path === undefined ? { seed, numRuns: RUNS_PER_CHUNK } : { seed, path, numRuns: 1, endOnFailure: true },
    );
    if (!details.failed) return true;
    const message = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    const p = details.counterexamplePath ?? "";
    failure ??= {
      chunkSeed: seed,
      path: p,
      message: `${message}\n(after ${details.numShrinks} shrinks; ${details.counterexample?.[1]?.length ?? "?"} random actions)`,
      replay: `npm run fuzz -- --replay ${seed}:${p}`,
    };
    return false;
  };

  try {
    if (options.replay) {
      const lane = new Lane(o, stats);
      lanes.push(lane);
      log(`replaying chunk seed ${options.replay.chunkSeed} path ${options.replay.path}`);
      await runChunk(lane, options.replay.chunkSeed, options.replay.path);
    } else {
      const perLane = Math.ceil(o.cases / o.lanes);
      await Promise.all(
        Array.from({ length: o.lanes }, async (_, l) => {
          const lane = new Lane(o, stats);
          lanes.push(lane);
          for (let chunk = 0; lane.cases < perLane && failure === null; chunk++) {
            if (!(await runChunk(lane, chunkSeed(o.seed, l, chunk)))) break;
            if (l === 0 && chunk % 10 === 9) log(`${stats.cases} cases, ${stats.runs} runs, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
          }
        }),
      );
    }
  } finally {
    for (const l of lanes) l.wire.close();
  }
  return { seed: o.seed, stats, failure, durationMs: Date.now() - t0 };
}

/** A random 31-bit seed (for runs without one). */
export function randomSeed(): number {
  return (Math.random() * 0x7fffffff) | 0;
}
