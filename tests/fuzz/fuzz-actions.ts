// The runtime fuzzer's generators: what an action is (who sends what to
// which session slot, over which wire), the fast-check arbitraries that draw
// actions and their fields, the well-formed SessionStart a run may open
// with, and the byte mutations applied to payloads and requests.
import fc from "fast-check";
import { HANDOFF, TASK } from "./protocol-model";

export const IDS = ["fz-a", "fz-b", "fz-c", "fz-d"] as const;
export const SLOTS = 3;
/** Message types by mode, repeated to weight them: a session needs its start, and deep states need their steps. */
export const MODE_TYPES: Record<string, readonly string[]> = {
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

export type Mutation =
  | { op: "flip"; at: number; bit: number }
  | { op: "truncate"; at: number }
  | { op: "insert"; at: number; bytes: Uint8Array }
  | { op: "overwrite"; at: number; bytes: Uint8Array }
  | { op: "duplicate"; at: number; length: number };

export type Framing = "truncated" | "compressed-identity" | "two-messages" | "oversize-declared" | "no-message";

/**
 * How the request travels: "client" through the Connect gRPC client, "raw" as
 * the same bytes framed by hand on HTTP/2 (cheaper, so most cases use it),
 * "mutated" with its protobuf bytes damaged, "framing" with the gRPC framing
 * itself broken.
 */
export type Wire =
  { kind: "client" } | { kind: "raw" } | { kind: "mutated"; mutations: Mutation[] } | { kind: "framing"; framing: Framing };

export interface Fields {
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
export type Caller = { role: "initiator" | "target" | "anyone"; pick: number } | { id: string | null };

export interface Action {
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

export function mutate(bytes: Uint8Array, mutations: readonly Mutation[]): Uint8Array {
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

export function concat(...parts: Uint8Array[]): Uint8Array {
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

export const actionArb: fc.Arbitrary<Action> = fc.record({
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

/** A run opens with a well-formed SessionStart for each slot marked here (else its start has to come from the actions). */
export const openingArb = fc.array(fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }), {
  minLength: SLOTS,
  maxLength: SLOTS,
});

export function openingStart(slot: number): Action {
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
