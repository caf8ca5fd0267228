// Payload registry: which protobuf message a (mode, message_type) pair carries
// (PROTOCOL.md §2.3, §1.5–1.7), plus decode/encode helpers, envelope building
// and a plain-JSON rendering of payloads. Pure: no I/O, no Node-only imports.

import {
  create,
  fromBinary,
  fromJson,
  isMessage,
  toBinary,
  toJson,
  ScalarType,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type Message,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { EnvelopeSchema, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import {
  CommitmentPayloadSchema,
  ProgressPayloadSchema,
  SessionCancelPayloadSchema,
  SessionResumePayloadSchema,
  SessionStartPayloadSchema,
  SessionSuspendPayloadSchema,
  SignalPayloadSchema,
} from "@/lib/gen/macp/v1/core_pb";
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
import {
  EvaluationPayloadSchema,
  ObjectionPayloadSchema,
  ProposalPayloadSchema as DecisionProposalPayloadSchema,
  VotePayloadSchema,
} from "@/lib/gen/macp/modes/decision/v1/decision_pb";
import {
  AcceptPayloadSchema as ProposalAcceptPayloadSchema,
  CounterProposalPayloadSchema,
  ProposalPayloadSchema as ProposalModeProposalPayloadSchema,
  RejectPayloadSchema as ProposalRejectPayloadSchema,
  WithdrawPayloadSchema,
} from "@/lib/gen/macp/modes/proposal/v1/proposal_pb";
import {
  AbstainPayloadSchema,
  ApprovalRequestPayloadSchema,
  ApprovePayloadSchema,
  RejectPayloadSchema as QuorumRejectPayloadSchema,
} from "@/lib/gen/macp/modes/quorum/v1/quorum_pb";
import {
  CORE_TYPES,
  DECISION_MODE,
  HANDOFF_MODE,
  HANDOFF_TYPES,
  MACP_VERSION,
  PROPOSAL_MODE,
  QUORUM_MODE,
  TASK_MODE,
  TASK_TYPES,
} from "@/lib/macp/constants";

/** Core payload types, valid in every mode (§2.3). */
const CORE_PAYLOADS: Readonly<Record<string, DescMessage>> = {
  [CORE_TYPES.SessionStart]: SessionStartPayloadSchema,
  [CORE_TYPES.Commitment]: CommitmentPayloadSchema,
  [CORE_TYPES.Signal]: SignalPayloadSchema,
  [CORE_TYPES.Progress]: ProgressPayloadSchema,
  [CORE_TYPES.SessionCancel]: SessionCancelPayloadSchema,
  [CORE_TYPES.SessionSuspend]: SessionSuspendPayloadSchema,
  [CORE_TYPES.SessionResume]: SessionResumePayloadSchema,
};

/** Mode-specific payload types. The same message_type can differ by mode. */
const MODE_PAYLOADS: Readonly<Record<string, Readonly<Record<string, DescMessage>>>> = {
  [HANDOFF_MODE]: {
    [HANDOFF_TYPES.Offer]: HandoffOfferPayloadSchema,
    [HANDOFF_TYPES.Context]: HandoffContextPayloadSchema,
    [HANDOFF_TYPES.Accept]: HandoffAcceptPayloadSchema,
    [HANDOFF_TYPES.Decline]: HandoffDeclinePayloadSchema,
  },
  [TASK_MODE]: {
    [TASK_TYPES.Request]: TaskRequestPayloadSchema,
    [TASK_TYPES.Accept]: TaskAcceptPayloadSchema,
    [TASK_TYPES.Reject]: TaskRejectPayloadSchema,
    [TASK_TYPES.Update]: TaskUpdatePayloadSchema,
    [TASK_TYPES.Complete]: TaskCompletePayloadSchema,
    [TASK_TYPES.Fail]: TaskFailPayloadSchema,
  },
  [DECISION_MODE]: {
    Proposal: DecisionProposalPayloadSchema,
    Evaluation: EvaluationPayloadSchema,
    Objection: ObjectionPayloadSchema,
    Vote: VotePayloadSchema,
  },
  [PROPOSAL_MODE]: {
    Proposal: ProposalModeProposalPayloadSchema,
    CounterProposal: CounterProposalPayloadSchema,
    Accept: ProposalAcceptPayloadSchema,
    Reject: ProposalRejectPayloadSchema,
    Withdraw: WithdrawPayloadSchema,
  },
  [QUORUM_MODE]: {
    ApprovalRequest: ApprovalRequestPayloadSchema,
    Approve: ApprovePayloadSchema,
    Reject: QuorumRejectPayloadSchema,
    Abstain: AbstainPayloadSchema,
  },
};

/**
 * The payload message schema for (mode, message_type), or undefined when the
 * pair has no protobuf payload we know of. Mode-specific types win over core
 * types; core types (SessionStart, Commitment, Signal, Progress and the
 * runtime annotations) are recognised in any mode, including the empty one.
 */
export function payloadSchemaFor(mode: string, messageType: string): DescMessage | undefined {
  const byMode = Object.prototype.hasOwnProperty.call(MODE_PAYLOADS, mode) ? MODE_PAYLOADS[mode] : undefined;
  if (byMode && Object.prototype.hasOwnProperty.call(byMode, messageType)) return byMode[messageType];
  if (Object.prototype.hasOwnProperty.call(CORE_PAYLOADS, messageType)) return CORE_PAYLOADS[messageType];
  return undefined;
}

/** Message types the registry knows for a mode (mode-specific first, then core). */
export function knownMessageTypes(mode: string): string[] {
  const byMode = Object.prototype.hasOwnProperty.call(MODE_PAYLOADS, mode) ? MODE_PAYLOADS[mode] : undefined;
  return [...Object.keys(byMode ?? {}), ...Object.keys(CORE_PAYLOADS)];
}

export type DecodeResult = { ok: true; typeName: string; message: Message; schema: DescMessage } | { ok: false; reason: string };

/** Decode a payload by (mode, message_type). Never throws. */
export function decodePayload(mode: string, messageType: string, bytes: Uint8Array): DecodeResult {
  const schema = payloadSchemaFor(mode, messageType);
  if (!schema) {
    return { ok: false, reason: `no payload type registered for ${messageType} in mode ${mode || "(none)"}` };
  }
  try {
    const message = fromBinary(schema, bytes);
    return { ok: true, typeName: schema.typeName, message, schema };
  } catch (err) {
    return { ok: false, reason: `payload does not decode as ${schema.typeName}: ${errorText(err)}` };
  }
}

/** Decode bytes as a given schema; undefined on failure. Never throws. */
export function decodeAs<Desc extends DescMessage>(schema: Desc, bytes: Uint8Array): MessageShape<Desc> | undefined {
  try {
    return fromBinary(schema, bytes);
  } catch {
    return undefined;
  }
}

/**
 * What `encodePayload` accepts: an already-built message of the right type,
 * raw bytes (passed through), or an init object with protobuf-es field names
 * (camelCase, e.g. `{ handoffId: "h1" }`).
 */
export type PayloadInput = Message | Uint8Array | Readonly<Record<string, unknown>>;

/**
 * Encode a payload for (mode, message_type). Throws when the pair is unknown
 * or a message of a different type is given.
 */
export function encodePayload(mode: string, messageType: string, payload: PayloadInput): Uint8Array {
  if (payload instanceof Uint8Array) return payload;
  const schema = payloadSchemaFor(mode, messageType);
  if (!schema) throw new Error(`no payload type registered for ${messageType} in mode ${mode || "(none)"}`);
  if (isMessage(payload)) {
    const given = payload.$typeName;
    if (given !== schema.typeName) {
      throw new Error(`${messageType} in ${mode} carries ${schema.typeName}, not ${given}`);
    }
    return toBinary(schema, payload);
  }
  // create() accepts a partial init shape; the registry is keyed by strings so
  // the init type cannot be checked statically here.
  const msg = create(schema, payload as MessageInitShape<DescMessage>);
  return toBinary(schema, msg);
}

/**
 * Parse a JSON payload object (snake_case or lowerCamelCase keys, bytes in
 * base64, int64 as number or string) for (mode, message_type). Unknown fields
 * are ignored. Throws on malformed input or an unknown pair.
 */
export function payloadFromJson(mode: string, messageType: string, json: JsonValue): Message {
  const schema = payloadSchemaFor(mode, messageType);
  if (!schema) throw new Error(`no payload type registered for ${messageType} in mode ${mode || "(none)"}`);
  return fromJson(schema, json, { ignoreUnknownFields: true });
}

export interface BuildEnvelopeInput {
  mode: string;
  messageType: string;
  sessionId: string;
  /** Empty lets the runtime fill in the authenticated identity (§2.8). */
  sender?: string;
  /** Defaults to a random UUID v4. */
  messageId?: string;
  /** Defaults to the current clock. */
  timestampMs?: number | bigint;
  payload: PayloadInput;
}

/** Build an Envelope with macp_version "1.0", encoding the payload via the registry. */
export function buildEnvelope(input: BuildEnvelopeInput): Envelope {
  const ts = input.timestampMs ?? Date.now();
  return create(EnvelopeSchema, {
    macpVersion: MACP_VERSION,
    mode: input.mode,
    messageType: input.messageType,
    messageId: input.messageId ?? globalThis.crypto.randomUUID(),
    sessionId: input.sessionId,
    sender: input.sender ?? "",
    timestampUnixMs: typeof ts === "bigint" ? ts : BigInt(Math.trunc(ts)),
    payload: encodePayload(input.mode, input.messageType, input.payload),
  });
}

/**
 * Render a payload message as plain JSON: snake_case keys, bytes as base64,
 * enums by name, and **every** field present, defaults included (so
 * `outcome_positive: false` never disappears, §4.7). int64 values that fit a
 * JS safe integer are written as numbers (as in the canonical transcripts),
 * larger ones as decimal strings. Unset sub-messages are omitted.
 */
export function payloadToJson(decoded: { schema: DescMessage; message: Message }): JsonObject;
export function payloadToJson(schema: DescMessage, message: Message): JsonObject;
export function payloadToJson(
  schemaOrDecoded: DescMessage | { schema: DescMessage; message: Message },
  maybeMessage?: Message,
): JsonObject {
  let schema: DescMessage;
  let message: Message;
  if ("schema" in schemaOrDecoded) {
    schema = schemaOrDecoded.schema;
    message = schemaOrDecoded.message;
  } else {
    if (maybeMessage === undefined) throw new Error("payloadToJson(schema, message): message is missing");
    schema = schemaOrDecoded;
    message = maybeMessage;
  }
  const json = toJson(schema, message, { useProtoFieldName: true, alwaysEmitImplicit: true });
  if (!isJsonObject(json)) return {};
  return int64ToNumbers(schema, json);
}

/** Decode and render in one step; undefined when the payload cannot be decoded. */
export function decodePayloadToJson(mode: string, messageType: string, bytes: Uint8Array): JsonObject | undefined {
  const decoded = decodePayload(mode, messageType, bytes);
  if (!decoded.ok) return undefined;
  try {
    return payloadToJson(decoded);
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------

const INT64_KINDS: ReadonlySet<ScalarType> = new Set([
  ScalarType.INT64,
  ScalarType.UINT64,
  ScalarType.SINT64,
  ScalarType.FIXED64,
  ScalarType.SFIXED64,
]);

function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function int64Value(v: JsonValue | undefined): JsonValue | undefined {
  if (typeof v !== "string") return v;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v;
}

function int64ToNumbers(schema: DescMessage, json: JsonObject): JsonObject {
  const out: JsonObject = { ...json };
  for (const field of schema.fields) {
    const key = field.name;
    if (!(key in out)) continue;
    out[key] = convertField(field, out[key]) ?? null;
  }
  return out;
}

function convertField(field: DescField, value: JsonValue | undefined): JsonValue | undefined {
  switch (field.fieldKind) {
    case "scalar":
      return INT64_KINDS.has(field.scalar) ? int64Value(value) : value;
    case "list":
      if (!Array.isArray(value)) return value;
      if (field.listKind === "scalar" && INT64_KINDS.has(field.scalar)) return value.map((v) => int64Value(v) ?? null);
      if (field.listKind === "message") {
        const sub = field.message;
        return value.map((v) => (isJsonObject(v) ? int64ToNumbers(sub, v) : v));
      }
      return value;
    case "map": {
      if (!isJsonObject(value)) return value;
      const out: JsonObject = {};
      for (const [k, v] of Object.entries(value)) {
        if (field.mapKind === "scalar" && INT64_KINDS.has(field.scalar)) out[k] = int64Value(v) ?? null;
        else if (field.mapKind === "message" && isJsonObject(v)) out[k] = int64ToNumbers(field.message, v);
        else out[k] = v;
      }
      return out;
    }
    case "message":
      return isJsonObject(value) ? int64ToNumbers(field.message, value) : value;
    default:
      return value;
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
