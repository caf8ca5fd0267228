// The runtime input fuzzer: random and mutated envelopes, and raw malformed
// gRPC/protobuf frames, sent to a real runtime over loopback gRPC. Used by
// tests/integration/runtime-fuzz.test.ts (a bounded run inside `npm test`) and
// by `npm run fuzz` (scripts/fuzz-runtime.ts, as long as you like).
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
import http2 from "node:http2";
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import fc from "fast-check";
import { ERROR_CODES } from "@/lib/macp/constants";
import {
  CommitmentPayloadSchema,
  MACPRuntimeService,
  SendRequestSchema,
  SendResponseSchema,
  SessionStartPayloadSchema,
  SignalPayloadSchema,
  type StreamSessionRequestSchema,
} from "@/lib/gen/macp/v1/core_pb";
import { EnvelopeSchema, type Ack, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import {
  HandoffAcceptPayloadSchema,
  HandoffContextPayloadSchema,
  HandoffDeclinePayloadSchema,
  HandoffOfferPayloadSchema,
} from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import {
  TaskAcceptPayloadSchema,
  TaskCompletePayloadSchema,
  TaskFailPayloadSchema,
  TaskRejectPayloadSchema,
  TaskRequestPayloadSchema,
  TaskUpdatePayloadSchema,
} from "@/lib/gen/macp/modes/task/v1/task_pb";
import { HANDOFF, ProtocolModel, TASK, type ModelSession, type Verdict } from "./protocol-model";

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

// ------------------------------------------------------------------ actions

const IDS = ["fz-a", "fz-b", "fz-c", "fz-d"] as const;
const SLOTS = 3;
/** Message types by mode, repeated to weight them: a session needs its start, and deep states need their steps. */
const MODE_TYPES: Record<string, readonly string[]> = {
  [HANDOFF]: [
    "SessionStart",
    "HandoffOffer",
    "HandoffOffer",
    "HandoffContext",
    "HandoffAccept",
    "HandoffAccept",
    "HandoffDecline",
    "Commitment",
    "Commitment",
  ],
  [TASK]: [
    "SessionStart",
    "TaskRequest",
    "TaskRequest",
    "TaskAccept",
    "TaskAccept",
    "TaskReject",
    "TaskUpdate",
    "TaskComplete",
    "TaskFail",
    "Commitment",
    "Commitment",
  ],
};
const ODD_TYPES = ["Signal", "Progress", "SessionCancel", "TtlExpired", "Bogus", "", "x".repeat(200)];

type Mutation =
  | { op: "flip"; at: number; bit: number }
  | { op: "truncate"; at: number }
  | { op: "insert"; at: number; bytes: Uint8Array }
  | { op: "overwrite"; at: number; bytes: Uint8Array }
  | { op: "duplicate"; at: number; length: number };

type Framing = "truncated" | "compressed-identity" | "two-messages" | "oversize-declared" | "no-message";

/**
 * How the request travels: "client" through the Connect gRPC client, "raw" as
 * the same bytes framed by hand on HTTP/2 (cheaper, so most cases use it),
 * "mutated" with its protobuf bytes damaged, "framing" with the gRPC framing
 * itself broken.
 */
type Wire = { kind: "client" } | { kind: "raw" } | { kind: "mutated"; mutations: Mutation[] } | { kind: "framing"; framing: Framing };

interface Fields {
  /** Refer to the session's current offer or task (resolved when the action runs) instead of the literal ids below. */
  current: boolean;
  handoffId: string;
  target: string;
  by: string;
  taskId: string;
  text: string;
  participants: string[];
  ttl: bigint;
  modeVersion: string;
  configurationVersion: string;
  policyVersion: string;
  commitmentId: string;
  /** The commitment's action: the mode's positive or negative verb, or one of neither. */
  action: "positive" | "negative" | "other";
  /** outcome_positive agrees with the action's verb. */
  outcomeAgrees: boolean;
  supersedes: { sessionId: string; commitmentHash: string } | null;
  signalType: string;
  blob: Uint8Array;
}

/**
 * Who sends: a role in the target session (resolved when the action runs,
 * from the model's view of that session, so that deep protocol states are
 * reached), or a fixed identity (null: no credentials).
 */
type Caller = { role: "initiator" | "target" | "anyone"; pick: number } | { id: string | null };

interface Action {
  as: Caller;
  session: { slot: number } | { literal: string };
  /** Index into the slot's mode types; the mode itself comes from the slot unless overridden. */
  type: number;
  /** Take the session's natural next step instead (with its natural sender, if the caller is a role). */
  next: boolean;
  oddType: string | null;
  modeOverride: string | null;
  messageId: string;
  macpVersion: string;
  sender: "self" | "empty" | string;
  timestamp: bigint;
  fields: Fields;
  payload:
    | { kind: "typed" }
    | { kind: "mutated"; mutations: Mutation[] }
    | { kind: "random"; bytes: Uint8Array }
    | { kind: "oversize"; extra: number };
  wire: Wire;
}

const mutationArb = (): fc.Arbitrary<Mutation> =>
  fc.oneof(
    fc.record({ op: fc.constant("flip" as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
    fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }),
    fc.record({ op: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 6 }) }),
    fc.record({ op: fc.constant("overwrite" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 6 }) }),
    fc.record({ op: fc.constant("duplicate" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 40 }) }),
  );

function mutate(bytes: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
  let b = bytes;
  for (const m of mutations) {
    const at = b.length === 0 ? 0 : m.at % (b.length + (m.op === "insert" ? 1 : 0));
    if (m.op === "flip") {
      if (b.length === 0) continue;
      b = new Uint8Array(b);
      b[at % b.length]! ^= 1 << m.bit;
    } else if (m.op === "truncate") b = b.subarray(0, at);
    else if (m.op === "insert") b = concat(b.subarray(0, at), m.bytes, b.subarray(at));
    else if (m.op === "overwrite") {
      b = new Uint8Array(b);
      b.set(m.bytes.subarray(0, Math.max(0, b.length - at)), at);
    } else b = concat(b.subarray(0, at + m.length), b.subarray(at, at + m.length), b.subarray(at + m.length));
  }
  return b;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const shortText = fc.string({ maxLength: 12 });
const oneOf = <T>(...values: T[]) => fc.constantFrom(...values);
/** `valid` most of the time, one of `odd` once in `every` draws. */
const mostly = <T>(valid: T, every: number, ...odd: T[]): fc.Arbitrary<T> =>
  fc.oneof({ weight: every - 1, arbitrary: fc.constant(valid) }, { weight: 1, arbitrary: oneOf(...odd) });
/** null most of the time, a value from `arb` once in `every` draws. */
const rarely = <T>(arb: fc.Arbitrary<T>, every: number): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: every - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });

const fieldsArb: fc.Arbitrary<Fields> = fc.record({
  current: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  handoffId: fc.oneof(
    { weight: 12, arbitrary: fc.constant("h1") },
    { weight: 6, arbitrary: oneOf("h2", "h3") },
    { weight: 1, arbitrary: oneOf("", " ") },
  ),
  target: fc.oneof({ weight: 20, arbitrary: oneOf<string>(...IDS) }, { weight: 1, arbitrary: oneOf("", "fz-x", " fz-a") }),
  by: fc.oneof({ weight: 12, arbitrary: fc.constant("") }, { weight: 4, arbitrary: oneOf<string>(...IDS) }),
  taskId: fc.oneof(
    { weight: 15, arbitrary: fc.constant("t1") },
    { weight: 2, arbitrary: fc.constant("t2") },
    { weight: 1, arbitrary: oneOf("", " ") },
  ),
  text: shortText,
  participants: fc.oneof(
    { weight: 10, arbitrary: fc.constant<string[]>([...IDS]) },
    { weight: 6, arbitrary: fc.shuffledSubarray([...IDS], { minLength: 2 }) },
    { weight: 1, arbitrary: fc.shuffledSubarray([...IDS], { maxLength: 1 }) },
    { weight: 1, arbitrary: fc.array(oneOf<string>(...IDS, "", " ", " fz-a", "fz-a ", "p".repeat(300)), { maxLength: 6 }) },
  ),
  ttl: fc.oneof({ weight: 25, arbitrary: oneOf(600_000n, 86_400_000n) }, { weight: 1, arbitrary: oneOf(0n, -1n, 86_400_001n) }),
  modeVersion: mostly("1.0.0", 30, "", "2.0"),
  configurationVersion: mostly("config.default", 30, "c2", " "),
  policyVersion: fc.oneof({ weight: 20, arbitrary: oneOf("", "policy.default") }, { weight: 1, arbitrary: fc.constant("policy.nope") }),
  commitmentId: mostly("c1", 30, "", " "),
  action: fc.oneof(
    { weight: 6, arbitrary: fc.constant("positive" as const) },
    { weight: 3, arbitrary: fc.constant("negative" as const) },
    { weight: 1, arbitrary: fc.constant("other" as const) },
  ),
  outcomeAgrees: fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  supersedes: rarely(fc.record({ sessionId: oneOf("s", "", " "), commitmentHash: oneOf("h", "") }), 8),
  signalType: oneOf("", "ping"),
  blob: fc.uint8Array({ maxLength: 24 }),
});

const actionArb: fc.Arbitrary<Action> = fc.record({
  as: fc.oneof(
    { weight: 24, arbitrary: fc.record({ role: oneOf("initiator" as const, "target" as const, "anyone" as const), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ id: oneOf<string | null>(null, "fz-intruder") }) },
  ),
  session: fc.oneof(
    { weight: 60, arbitrary: fc.record({ slot: fc.integer({ min: 0, max: SLOTS - 1 }) }) },
    {
      weight: 1,
      arbitrary: fc.record({ literal: oneOf("", "NOT-A-SESSION", "short", "0E1F2A3B-4C5D-4E6F-8A9B-0C1D2E3F4A5B", "s".repeat(300)) }),
    },
  ),
  type: fc.nat(),
  next: fc.boolean(),
  oddType: rarely(oneOf(...ODD_TYPES), 25),
  modeOverride: rarely(oneOf("", " ", "macp.mode.decision.v1", "macp.mode.nope", HANDOFF, TASK), 30),
  messageId: fc.oneof(
    { weight: 40, arbitrary: oneOf(...Array.from({ length: 40 }, (_, i) => `m${i}`)) },
    { weight: 2, arbitrary: shortText },
    { weight: 1, arbitrary: oneOf("", "i".repeat(257)) },
  ),
  macpVersion: mostly("1.0", 60, "", "1.0.0", "2.0"),
  sender: fc.oneof(
    { weight: 20, arbitrary: fc.constant("self") },
    { weight: 8, arbitrary: fc.constant("empty") },
    { weight: 1, arbitrary: oneOf<string>(...IDS, "fz-x") },
  ),
  timestamp: fc.oneof({ weight: 40, arbitrary: fc.constant(0n) }, { weight: 1, arbitrary: oneOf(1n, 4_000_000_000_000n, -5n) }),
  fields: fieldsArb,
  payload: fc.oneof(
    { weight: 60, arbitrary: fc.constant({ kind: "typed" as const }) },
    {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant("mutated" as const), mutations: fc.array(mutationArb(), { minLength: 1, maxLength: 3 }) }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("random" as const), bytes: fc.uint8Array({ maxLength: 40 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("oversize" as const), extra: fc.integer({ min: 1, max: 4096 }) }) },
  ),
  wire: fc.oneof(
    { weight: 3, arbitrary: fc.constant({ kind: "client" as const }) },
    { weight: 30, arbitrary: fc.constant({ kind: "raw" as const }) },
    {
      weight: 6,
      arbitrary: fc.record({ kind: fc.constant("mutated" as const), mutations: fc.array(mutationArb(), { minLength: 1, maxLength: 3 }) }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("framing" as const),
        framing: oneOf<Framing>("truncated", "compressed-identity", "two-messages", "oversize-declared", "no-message"),
      }),
    },
  ),
});

// ------------------------------------------------------------- execution

const bin = <D extends DescMessage>(schema: D, init: MessageInitShape<D>) => toBinary(schema, create(schema, init));

function commitmentAction(mode: string, f: Fields): { action: string; outcomePositive: boolean } {
  const verbs = mode === TASK ? ["task.completed", "task.failed"] : ["handoff.accepted", "handoff.declined"];
  const action = f.action === "positive" ? verbs[0]! : f.action === "negative" ? verbs[1]! : "handoff.noted";
  const positive = f.action !== "negative";
  return { action, outcomePositive: f.outcomeAgrees ? positive : !positive };
}

function payloadFor(type: string, mode: string, f: Fields): Uint8Array {
  switch (type) {
    case "SessionStart":
      return bin(SessionStartPayloadSchema, {
        intent: f.text,
        participants: f.participants,
        modeVersion: f.modeVersion,
        configurationVersion: f.configurationVersion,
        policyVersion: f.policyVersion,
        ttlMs: f.ttl,
      });
    case "Commitment":
      return bin(CommitmentPayloadSchema, {
        commitmentId: f.commitmentId,
        ...commitmentAction(mode, f),
        authorityScope: f.text === "" ? "scope" : f.text,
        reason: "fuzz",
        modeVersion: f.modeVersion,
        configurationVersion: f.configurationVersion,
        policyVersion: f.policyVersion,
        supersedes: f.supersedes ?? undefined,
      });
    case "HandoffOffer":
      return bin(HandoffOfferPayloadSchema, { handoffId: f.handoffId, targetParticipant: f.target, scope: f.text, reason: f.text });
    case "HandoffContext":
      return bin(HandoffContextPayloadSchema, { handoffId: f.handoffId, contentType: "text/plain", context: f.blob });
    case "HandoffAccept":
      return bin(HandoffAcceptPayloadSchema, { handoffId: f.handoffId, acceptedBy: f.by, reason: f.text });
    case "HandoffDecline":
      return bin(HandoffDeclinePayloadSchema, { handoffId: f.handoffId, declinedBy: f.by, reason: f.text });
    case "TaskRequest":
      return bin(TaskRequestPayloadSchema, { taskId: f.taskId, title: f.text, requestedAssignee: f.by, input: f.blob });
    case "TaskAccept":
      return bin(TaskAcceptPayloadSchema, { taskId: f.taskId, assignee: f.by, reason: f.text });
    case "TaskReject":
      return bin(TaskRejectPayloadSchema, { taskId: f.taskId, assignee: f.by, reason: f.text });
    case "TaskUpdate":
      return bin(TaskUpdatePayloadSchema, { taskId: f.taskId, status: f.text, progress: 0.5, partialOutput: f.blob });
    case "TaskComplete":
      return bin(TaskCompletePayloadSchema, { taskId: f.taskId, assignee: f.by, output: f.blob, summary: f.text });
    case "TaskFail":
      return bin(TaskFailPayloadSchema, { taskId: f.taskId, assignee: f.by, errorCode: "E", reason: f.text, retryable: f.outcomeAgrees });
    case "Signal":
      return f.signalType === "" && f.blob.length === 0
        ? new Uint8Array()
        : bin(SignalPayloadSchema, { signalType: f.signalType, data: f.blob });
    default:
      return f.blob;
  }
}

/** A run opens with a well-formed SessionStart for each slot marked here (else its start has to come from the actions). */
const openingArb = fc.array(fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }), {
  minLength: SLOTS,
  maxLength: SLOTS,
});

function openingStart(slot: number): Action {
  return {
    as: { id: IDS[slot % IDS.length]! },
    session: { slot },
    type: 0,
    next: false,
    oddType: null,
    modeOverride: null,
    messageId: `start-${slot}`,
    macpVersion: "1.0",
    sender: "self",
    timestamp: 0n,
    fields: {
      handoffId: "",
      target: "",
      by: "",
      taskId: "",
      current: false,
      text: "opening",
      participants: [...IDS],
      ttl: 600_000n,
      modeVersion: "1.0.0",
      configurationVersion: "config.default",
      policyVersion: "",
      commitmentId: "",
      action: "positive",
      outcomeAgrees: true,
      supersedes: null,
      signalType: "",
      blob: new Uint8Array(),
    },
    payload: { kind: "typed" },
    wire: { kind: "raw" },
  };
}

/** One property run's sessions: fresh ids for the slots, and the model. */
interface Run {
  ids: string[];
  model: ProtocolModel;
  /** One line per action run so far, for the failure report. */
  log: string[];
}

function sessionLabel(run: Run, id: string): string {
  const slot = run.ids.indexOf(id);
  return slot >= 0 ? `S${slot}` : JSON.stringify(id.length > 40 ? `${id.slice(0, 40)}…` : id);
}

function envelopeFor(a: Action, run: Run, maxPayload: number): { env: Envelope; identity: string | null } {
  const slotMode = (slot: number) => (slot % 2 === 0 ? HANDOFF : TASK);
  const sessionId = "slot" in a.session ? run.ids[a.session.slot]! : a.session.literal;
  const baseMode = "slot" in a.session ? slotMode(a.session.slot) : HANDOFF;
  const types = MODE_TYPES[baseMode]!;
  const s = run.model.sessions.get(sessionId);
  const step = a.next && s && s.state === "open" ? nextStep(s, a.type) : null;
  const messageType = a.oddType ?? step?.type ?? types[a.type % types.length]!;
  const ambient = messageType === "Signal" || messageType === "Progress";
  const mode = a.modeOverride ?? (ambient && a.type % 2 === 0 ? "" : baseMode);
  const typed = payloadFor(messageType, mode, a.fields.current && s ? currentIds(a.fields, s, messageType) : a.fields);
  const payload =
    a.payload.kind === "typed"
      ? typed
      : a.payload.kind === "mutated"
        ? mutate(typed, a.payload.mutations)
        : a.payload.kind === "random"
          ? a.payload.bytes
          : new Uint8Array(maxPayload + a.payload.extra).fill(0x2a);
  const identity = step && "role" in a.as ? step.sender : callerFor(a.as, s);
  const sender = a.sender === "self" ? (identity ?? "") : a.sender === "empty" ? "" : a.sender;
  const env = create(EnvelopeSchema, {
    macpVersion: a.macpVersion,
    mode,
    messageType,
    messageId: a.messageId,
    sessionId: ambient && a.type % 3 === 0 ? "" : sessionId,
    sender,
    timestampUnixMs: a.timestamp,
    payload,
  });
  return { env, identity };
}

/** What a well-behaved participant would send next in `s`, and who would send it. */
function nextStep(s: ModelSession, pick: number): { type: string; sender: string } {
  const choose = <T>(xs: readonly T[]) => xs[pick % xs.length]!;
  if (s.mode === HANDOFF) {
    const offers = [...s.offers.values()];
    const pending = offers.find((o) => o.state === "offered");
    if (pending)
      return {
        type: choose(["HandoffAccept", "HandoffDecline", "HandoffContext", "HandoffAccept"]),
        sender: choose([pending.target, pending.target, pending.by, pending.target]),
      };
    if (offers.some((o) => o.state === "accepted")) return { type: "Commitment", sender: s.initiator };
    if (offers.length > 0 && pick % 2 === 0) return { type: "Commitment", sender: s.initiator };
    return { type: "HandoffOffer", sender: s.initiator };
  }
  const t = s.task;
  if (!t) return { type: "TaskRequest", sender: s.initiator };
  if (t.terminal) return { type: "Commitment", sender: s.initiator };
  if (t.active !== "") return { type: choose(["TaskUpdate", "TaskComplete", "TaskFail", "TaskComplete"]), sender: t.active };
  const responder = t.requested !== "" ? t.requested : ([...s.participants].find((p) => p !== s.initiator) ?? s.initiator);
  return { type: choose(["TaskAccept", "TaskAccept", "TaskReject"]), sender: responder };
}

/** The fields with the ids of the session's current offer or task (a fresh one for a new offer). */
function currentIds(f: Fields, s: ModelSession, messageType: string): Fields {
  const offers = [...s.offers.keys()];
  const handoffId = messageType === "HandoffOffer" ? `h${offers.length + 1}` : (offers.at(-1) ?? f.handoffId);
  return { ...f, handoffId, taskId: s.task?.taskId ?? f.taskId };
}

/** The identity behind a caller role, as the model sees the session (or any identity if it has none). */
function callerFor(caller: Caller, s: ModelSession | undefined): string | null {
  if ("id" in caller) return caller.id;
  const any = IDS[caller.pick % IDS.length]!;
  if (!s || caller.role === "anyone") return any;
  if (caller.role === "initiator") return s.initiator;
  const pending = [...s.offers.values()].filter((o) => o.state === "offered").map((o) => o.target);
  const task = s.task ? [s.task.active, s.task.requested].filter((p) => p !== "") : [];
  const others = [...s.participants].filter((p) => p !== s.initiator);
  const candidates = pending.length > 0 ? pending : task.length > 0 ? task : others;
  return candidates[caller.pick % Math.max(1, candidates.length)] ?? any;
}

function logLine(run: Run, index: number, identity: string | null, wire: string, env: Envelope, outcome: string): string {
  const t = env.messageType.length > 30 ? `${env.messageType.slice(0, 30)}…` : env.messageType;
  return `${index}. ${identity ?? "(anonymous)"} ${wire}: ${t || '""'} in ${sessionLabel(run, env.sessionId)} id=${JSON.stringify(env.messageId.slice(0, 30))} sender=${JSON.stringify(env.sender)} payload=${env.payload.length}B → ${outcome.slice(0, 160)}`;
}

function describeAck(ack: Ack): string {
  return ack.ok ? (ack.duplicate ? "duplicate" : "accepted") : `rejected ${ack.error?.code}: ${ack.error?.message}`;
}

function describeEnvelope(env: Envelope): string {
  return JSON.stringify({
    macpVersion: env.macpVersion,
    mode: env.mode,
    messageType: env.messageType.length > 40 ? `${env.messageType.slice(0, 40)}…` : env.messageType,
    messageId: env.messageId.length > 40 ? `${env.messageId.slice(0, 40)}…(${env.messageId.length})` : env.messageId,
    sessionId: env.sessionId.length > 40 ? `${env.sessionId.slice(0, 40)}…(${env.sessionId.length})` : env.sessionId,
    sender: env.sender,
    timestampUnixMs: String(env.timestampUnixMs),
    payload: `${env.payload.length} bytes`,
  });
}

const CODES = new Set<string>(ERROR_CODES);

/** Well-formedness of an Ack for `env` (throws with what is wrong). */
function checkAck(ack: Ack | undefined, env: Envelope): Verdict {
  if (!ack) throw new Error("SendResponse without an ack");
  if (ack.messageId !== env.messageId) throw new Error(`ack.message_id ${JSON.stringify(ack.messageId)} does not echo the envelope's`);
  if (ack.sessionId !== env.sessionId) throw new Error(`ack.session_id ${JSON.stringify(ack.sessionId)} does not echo the envelope's`);
  if (ack.acceptedAtUnixMs <= 0n) throw new Error("ack.accepted_at_unix_ms is not set");
  if (ack.ok) {
    if (ack.error) throw new Error(`an ok ack carries an error (${ack.error.code})`);
    return ack.duplicate ? "duplicate" : "accept";
  }
  if (ack.duplicate) throw new Error("a rejected ack is marked duplicate");
  const e = ack.error;
  if (!e) throw new Error("a rejected ack has no error");
  if (!CODES.has(e.code)) throw new Error(`error code ${JSON.stringify(e.code)} is not in the MACP registry`);
  if (e.message.trim() === "") throw new Error(`error ${e.code} has no message`);
  if (e.messageId !== env.messageId || e.sessionId !== env.sessionId) throw new Error(`error ${e.code} does not echo the ids`);
  return "reject";
}

interface RawOutcome {
  status: number;
  message: string;
  /** gRPC messages in the response body. */
  messages: Uint8Array[];
}

function grpcFrame(body: Uint8Array, flag = 0, declared = body.length): Uint8Array {
  const h = new Uint8Array(5);
  h[0] = flag;
  new DataView(h.buffer).setUint32(1, declared);
  return concat(h, body);
}

function parseFrames(body: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let o = 0;
  while (o + 5 <= body.length) {
    const len = new DataView(body.buffer, body.byteOffset + o + 1, 4).getUint32(0);
    out.push(body.subarray(o + 5, o + 5 + len));
    o += 5 + len;
  }
  if (o !== body.length) throw new Error(`response body has ${body.length - o} trailing bytes that are not a gRPC message`);
  return out;
}

class RawWire {
  private session: http2.ClientHttp2Session | null = null;
  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  private connect(): http2.ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const s = http2.connect(this.url);
    s.on("error", () => undefined);
    s.unref();
    this.session = s;
    return s;
  }

  send(path: string, identity: string | null, body: Uint8Array, extraHeaders: Record<string, string> = {}): Promise<RawOutcome> {
    const headers: http2.OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": path,
      "content-type": "application/grpc",
      te: "trailers",
      ...extraHeaders,
    };
    if (identity !== null) headers.authorization = `Bearer ${identity}`;
    const req = this.connect().request(headers);
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let status: number | null = null;
      let message = "";
      const timer = setTimeout(() => {
        req.close(http2.constants.NGHTTP2_CANCEL);
        reject(new Error(`no answer within ${this.timeoutMs} ms (hang)`));
      }, this.timeoutMs);
      const take = (h: http2.IncomingHttpHeaders) => {
        if (h["grpc-status"] === undefined) return;
        status = Number(h["grpc-status"]);
        message = decodeURIComponent(String(h["grpc-message"] ?? ""));
      };
      req.on("response", (h) => {
        const http = Number(h[":status"]);
        if (http !== 200) {
          clearTimeout(timer);
          reject(new Error(`HTTP status ${http} instead of a gRPC answer`));
        }
        take(h);
      });
      req.on("trailers", take);
      req.on("data", (d: Buffer) => chunks.push(d));
      req.on("error", (e) => {
        clearTimeout(timer);
        reject(new Error(`stream error: ${e.message}`));
      });
      req.on("close", () => {
        clearTimeout(timer);
        if (status === null) return reject(new Error("the call ended without a grpc-status"));
        try {
          resolve({ status, message, messages: parseFrames(Buffer.concat(chunks)) });
        } catch (e) {
          reject(e);
        }
      });
      req.end(body);
    });
  }

  close(): void {
    this.session?.close();
  }
}

const SEND = "/macp.v1.MACPRuntimeService/Send";

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
      const outcome = await this.checkRaw(a.wire, sentBytes, out, expect);
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

  /** Checks a raw answer; returns what the server made of the request and its verdict in words. */
  private async checkRaw(
    wire: Wire,
    sent: Uint8Array,
    out: RawOutcome,
    expect: (env: Envelope) => Verdict,
  ): Promise<{ env?: Envelope; text: string }> {
    const status = `status ${out.status} ${JSON.stringify(out.message)}`;
    if (wire.kind === "framing") {
      const want: Record<Framing, number> = {
        truncated: 12, // UNIMPLEMENTED: "Received no request message"
        "no-message": 12,
        "two-messages": 12,
        "oversize-declared": 8, // RESOURCE_EXHAUSTED
        "compressed-identity": 0, // the identity "compression" is no compression
      };
      if (out.status !== want[wire.framing])
        throw new Error(`framing ${wire.framing}: expected status ${want[wire.framing]}, got ${status}`);
      if (out.status !== 0) return { text: `${wire.framing}: ${status}` };
    }
    // What the server should have made of the bytes: exactly what we make of them.
    let decoded: Envelope | undefined;
    let decodeError = "";
    try {
      decoded = fromBinary(SendRequestSchema, sent).envelope;
      if (!decoded) decodeError = "no envelope";
    } catch (e) {
      decodeError = (e as Error).message;
    }
    if (sent.length > this.o.maxReceiveBytes) {
      if (out.status !== 8)
        throw new Error(`a ${sent.length}-byte request is over the receive limit, expected RESOURCE_EXHAUSTED, got ${status}`);
      return { text: status };
    }
    if (decodeError) {
      if (out.status !== 3 || !out.message.startsWith("INVALID_ENVELOPE: ")) {
        throw new Error(`an undecodable request (${decodeError}) must get INVALID_ARGUMENT "INVALID_ENVELOPE: …", got ${status}`);
      }
      return { text: `undecodable: ${status}` };
    }
    if (out.status !== 0) throw new Error(`a decodable SendRequest got ${status} instead of an Ack`);
    if (out.messages.length !== 1) throw new Error(`${out.messages.length} response messages`);
    const env = decoded!;
    const ack = fromBinary(SendResponseSchema, out.messages[0]!).ack;
    const got = checkAck(ack, env);
    const want = expect(env);
    const changed = wire.kind === "mutated" ? ` (the mutated request decodes to ${describeEnvelope(env)})` : "";
    if (got !== want) throw new Error(`the runtime answered ${describeAck(ack!)}${changed}, the protocol model says ${want}`);
    this.tally(got, ack, env);
    return { env, text: describeAck(ack!) };
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
