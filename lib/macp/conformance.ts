// Conformance vectors (PROTOCOL.md §13, conformance/README.md): types and a
// pure builder that turns a vector into the envelopes the reference harness
// would send. Reading the files is the caller's job.

import { fromJson, ScalarType, type DescMessage, type JsonObject, type JsonValue, type Message } from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { CORE_TYPES } from "@/lib/macp/constants";
import { buildEnvelope, payloadSchemaFor } from "@/lib/macp/payloads";
import type { SessionEvent } from "@/lib/macp/projections/types";

export interface ConformanceMessage {
  sender: string;
  message_type: string;
  payload_type: string;
  payload: JsonObject;
  expect: "accept" | "reject";
  expected_error_code?: string;
}

export interface ConformanceVector {
  mode: string;
  initiator: string;
  participants: string[];
  mode_version: string;
  configuration_version: string;
  policy_version: string;
  ttl_ms?: number;
  policy?: JsonObject;
  messages: ConformanceMessage[];
  expected_final_state: "Open" | "Resolved" | "Suspended" | "Cancelled";
  expected_resolution?: JsonObject;
  expected_mode_state?: JsonObject;
  expect_resolution_present?: boolean;
}

export interface ConformanceStep {
  message: ConformanceMessage;
  envelope: Envelope;
}

export interface ConformanceSession {
  /** The SessionStart the harness sends first (message id `m0`). */
  start: Envelope;
  /** Every vector message as an envelope (`m1`, `m2`, …), with its expectation. */
  steps: ConformanceStep[];
  /** SessionStart plus the `accept` messages, numbered 1..n as accepted history. */
  accepted: SessionEvent[];
}

const utf8 = new TextEncoder();

/**
 * Rewrite a vector payload into proto3 JSON the schema accepts: bytes fields
 * written as plain strings are UTF-8 encoded, arrays of numbers are raw bytes
 * (`[]` = empty). Keys may be snake_case or lowerCamelCase.
 */
function normalizeVectorJson(schema: DescMessage, obj: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(obj)) {
    const field = schema.fields.find((f) => f.name === key || f.jsonName === key);
    if (!field) {
      out[key] = value;
      continue;
    }
    if (field.fieldKind === "scalar" && field.scalar === ScalarType.BYTES) {
      out[key] = bytesJson(value);
    } else if (field.fieldKind === "message" && isJsonObject(value)) {
      out[key] = normalizeVectorJson(field.message, value);
    } else if (field.fieldKind === "list" && field.listKind === "message" && Array.isArray(value)) {
      const sub = field.message;
      out[key] = value.map((v) => (isJsonObject(v) ? normalizeVectorJson(sub, v) : v));
    } else {
      out[key] = value;
    }
  }
  return out;
}

function bytesJson(value: JsonValue): JsonValue {
  if (typeof value === "string") return base64Encode(utf8.encode(value));
  if (Array.isArray(value)) {
    return base64Encode(Uint8Array.from(value.map((v) => (typeof v === "number" ? v : 0))));
  }
  return value;
}

function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Encode one vector message's payload for the vector's mode. Throws on an unknown type. */
export function vectorPayload(mode: string, message: Pick<ConformanceMessage, "message_type" | "payload">): Message {
  const schema = payloadSchemaFor(mode, message.message_type);
  if (!schema) throw new Error(`no payload schema for ${message.message_type} in ${mode}`);
  return fromJson(schema, normalizeVectorJson(schema, message.payload), { ignoreUnknownFields: true });
}

/**
 * Build the envelopes the reference harness sends for a vector: a
 * SessionStart (`m0`, intent "conformance", sender = initiator), then each
 * message as `m1`, `m2`, … with increasing timestamps.
 */
export function buildConformanceSession(
  vector: ConformanceVector,
  opts: { sessionId?: string; startTimeMs?: number } = {},
): ConformanceSession {
  const sessionId = opts.sessionId ?? globalThis.crypto.randomUUID();
  const t0 = opts.startTimeMs ?? Date.now();
  const start = buildEnvelope({
    mode: vector.mode,
    messageType: CORE_TYPES.SessionStart,
    sessionId,
    sender: vector.initiator,
    messageId: "m0",
    timestampMs: t0,
    payload: {
      intent: "conformance",
      participants: vector.participants,
      modeVersion: vector.mode_version,
      configurationVersion: vector.configuration_version,
      policyVersion: vector.policy_version,
      ttlMs: BigInt(vector.ttl_ms ?? 60_000),
    },
  });
  const steps: ConformanceStep[] = vector.messages.map((message, i) => ({
    message,
    envelope: buildEnvelope({
      mode: vector.mode,
      messageType: message.message_type,
      sessionId,
      sender: message.sender,
      messageId: `m${i + 1}`,
      timestampMs: t0 + (i + 1) * 1000,
      payload: vectorPayload(vector.mode, message),
    }),
  }));
  const accepted: SessionEvent[] = [{ envelope: start, sequence: 1 }];
  for (const step of steps) {
    if (step.message.expect === "accept") accepted.push({ envelope: step.envelope, sequence: accepted.length + 1 });
  }
  return { start, steps, accepted };
}
