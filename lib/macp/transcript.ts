// Transcripts in the canonical JSON mapping (PROTOCOL.md §2.9): export a
// session's events as JSON or NDJSON, and parse canonical transcripts (such as
// the spec's examples) back into Envelopes. Pure.

import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { base64Decode, base64Encode } from "@bufbuild/protobuf/wire";
import { EnvelopeSchema, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { MACP_VERSION } from "@/lib/macp/constants";
import { decodePayload, encodePayload, payloadFromJson, payloadToJson } from "@/lib/macp/payloads";
import type { SessionEvent } from "@/lib/macp/projections/types";

/** One message in canonical JSON form, plus the `sequence` extension. */
export interface CanonicalMessage {
  macp_version: string;
  mode: string;
  message_type: string;
  message_id: string;
  session_id: string;
  sender: string;
  /** RFC 3339, UTC. */
  timestamp: string;
  /** Decoded payload (snake_case, bytes in base64, defaults included). */
  payload?: JsonObject;
  /** Opaque payload bytes in base64, when the payload could not be decoded. */
  payload_b64?: string;
  /** Position in the session's accepted history (1 = SessionStart). */
  sequence: number;
}

export interface CanonicalTranscript {
  protocol_version: string;
  mode: string;
  session_id: string;
  messages: CanonicalMessage[];
}

export interface ParsedTranscript {
  protocolVersion: string;
  mode: string;
  sessionId: string;
  description?: string;
  envelopes: Envelope[];
  /** The envelopes with `sequence` (from the file, or 1..n). */
  events: SessionEvent[];
}

/** Unix ms → RFC 3339 in UTC; whole seconds are written without a fraction. */
export function formatRfc3339(ms: number): string {
  const iso = new Date(Number.isFinite(ms) ? ms : 0).toISOString();
  return iso.endsWith(".000Z") ? `${iso.slice(0, -5)}Z` : iso;
}

/** RFC 3339 → Unix ms. Throws on an unparseable string. */
export function parseRfc3339(text: string): number {
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new Error(`invalid RFC 3339 timestamp: ${JSON.stringify(text)}`);
  return ms;
}

/** One envelope in canonical JSON form. `sequence` defaults to 0 when unknown. */
export function toCanonicalMessage(event: SessionEvent | Envelope, fallbackSequence = 0): CanonicalMessage {
  const ev: SessionEvent = isEnvelope(event) ? { envelope: event } : event;
  const env = ev.envelope;
  const msg: CanonicalMessage = {
    macp_version: env.macpVersion,
    mode: env.mode,
    message_type: env.messageType,
    message_id: env.messageId,
    session_id: env.sessionId,
    sender: env.sender,
    timestamp: formatRfc3339(Number(env.timestampUnixMs)),
    sequence: ev.sequence ?? fallbackSequence,
  };
  const decoded = decodePayload(env.mode, env.messageType, env.payload);
  let json: JsonObject | undefined;
  if (decoded.ok) {
    try {
      json = payloadToJson(decoded.schema, decoded.message);
    } catch {
      json = undefined;
    }
  }
  if (json) msg.payload = json;
  else msg.payload_b64 = base64Encode(env.payload);
  return msg;
}

/**
 * A session's events as a canonical transcript. `mode` and `session_id` come
 * from the options or from the first event carrying them. Events without a
 * sequence are numbered by position (1..n).
 */
export function toCanonicalTranscript(
  events: readonly (SessionEvent | Envelope)[],
  opts: { mode?: string; sessionId?: string } = {},
): CanonicalTranscript {
  const messages = events.map((e, i) => toCanonicalMessage(e, i + 1));
  return {
    protocol_version: MACP_VERSION,
    mode: opts.mode ?? messages.find((m) => m.mode !== "")?.mode ?? "",
    session_id: opts.sessionId ?? messages.find((m) => m.session_id !== "")?.session_id ?? "",
    messages,
  };
}

/** One canonical message per line, each line terminated by "\n". */
export function toNdjson(events: readonly (SessionEvent | Envelope)[]): string {
  return events.map((e, i) => `${JSON.stringify(toCanonicalMessage(e, i + 1))}\n`).join("");
}

/** Parse one canonical message object into an Envelope (and its sequence, if present). */
export function parseCanonicalMessage(value: unknown): SessionEvent {
  if (!isObject(value)) throw new Error("canonical message must be a JSON object");
  const str = (key: string): string => {
    const v = value[key];
    if (v === undefined || v === null) return "";
    if (typeof v !== "string") throw new Error(`canonical message field ${key} must be a string`);
    return v;
  };
  const mode = str("mode");
  const messageType = str("message_type");
  let timestampMs = 0;
  if (typeof value.timestamp === "string" && value.timestamp !== "") timestampMs = parseRfc3339(value.timestamp);
  else if (typeof value.timestamp_unix_ms === "number") timestampMs = value.timestamp_unix_ms;
  else if (typeof value.timestamp_unix_ms === "string") timestampMs = Number(value.timestamp_unix_ms);

  let payload: Uint8Array;
  if (value.payload !== undefined && value.payload !== null) {
    const json = value.payload as JsonValue;
    payload = encodePayload(mode, messageType, payloadFromJson(mode, messageType, json));
  } else if (typeof value.payload_b64 === "string") {
    payload = base64Decode(value.payload_b64);
  } else {
    payload = new Uint8Array(0);
  }

  const envelope = create(EnvelopeSchema, {
    macpVersion: str("macp_version") || MACP_VERSION,
    mode,
    messageType,
    messageId: str("message_id"),
    sessionId: str("session_id"),
    sender: str("sender"),
    timestampUnixMs: BigInt(Math.trunc(timestampMs)),
    payload,
  });
  const event: SessionEvent = { envelope };
  if (typeof value.sequence === "number" && Number.isInteger(value.sequence)) event.sequence = value.sequence;
  return event;
}

/**
 * Parse a canonical transcript (`{ protocol_version, mode, session_id,
 * messages }`, given as text or as parsed JSON) into Envelopes. Payload
 * objects are encoded via the payload registry; `payload_b64` is taken as-is.
 * Throws with a message naming the offending entry on malformed input.
 */
export function parseCanonicalTranscript(input: unknown): ParsedTranscript {
  const value: unknown = typeof input === "string" ? JSON.parse(input) : input;
  if (!isObject(value)) throw new Error("transcript must be a JSON object");
  if (!Array.isArray(value.messages)) throw new Error("transcript has no messages array");
  const events = value.messages.map((m: unknown, i: number) => {
    try {
      const ev = parseCanonicalMessage(m);
      return ev.sequence === undefined ? { ...ev, sequence: i + 1 } : ev;
    } catch (err) {
      throw new Error(`transcript message #${i + 1}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  const first = events[0]?.envelope;
  const result: ParsedTranscript = {
    protocolVersion: typeof value.protocol_version === "string" ? value.protocol_version : MACP_VERSION,
    mode: typeof value.mode === "string" ? value.mode : (first?.mode ?? ""),
    sessionId: typeof value.session_id === "string" ? value.session_id : (first?.sessionId ?? ""),
    envelopes: events.map((e) => e.envelope),
    events,
  };
  if (typeof value.description === "string") result.description = value.description;
  return result;
}

/** Parse NDJSON (one canonical message per line; blank lines skipped). */
export function parseNdjson(text: string): SessionEvent[] {
  const out: SessionEvent[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      out.push(parseCanonicalMessage(JSON.parse(line)));
    } catch (err) {
      throw new Error(`NDJSON line ${i + 1}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isEnvelope(v: SessionEvent | Envelope): v is Envelope {
  return (v as Envelope).$typeName === "macp.v1.Envelope";
}
