// The raw view of one event: the envelope's header fields and its payload
// decoded to JSON (or why it could not be).
import type { JsonObject } from "@bufbuild/protobuf";
import { decodePayload, payloadToJson } from "@/lib/macp/payloads";
import type { SessionEvent } from "@/lib/macp/projections/types";

/** Header fields and decoded payload of an envelope, for the raw view. */
export interface RawEnvelopeView {
  header: { label: string; value: string }[];
  payloadJson?: JsonObject;
  payloadTypeName?: string;
  payloadError?: string;
  payloadBytes: number;
}

export function rawEnvelopeView(event: SessionEvent): RawEnvelopeView {
  const env = event.envelope;
  const header = [
    { label: "sequence", value: event.sequence !== undefined ? String(event.sequence) : "—" },
    { label: "macp_version", value: env.macpVersion },
    { label: "mode", value: env.mode },
    { label: "message_type", value: env.messageType },
    { label: "message_id", value: env.messageId },
    { label: "session_id", value: env.sessionId },
    { label: "sender", value: env.sender },
    { label: "timestamp_unix_ms", value: env.timestampUnixMs.toString() },
  ];
  if (event.receivedAtMs !== undefined) header.push({ label: "observed_at_unix_ms", value: String(event.receivedAtMs) });
  const decoded = decodePayload(env.mode, env.messageType, env.payload);
  const view: RawEnvelopeView = { header, payloadBytes: env.payload.byteLength };
  if (decoded.ok) {
    try {
      view.payloadJson = payloadToJson(decoded);
      view.payloadTypeName = decoded.typeName;
    } catch (err) {
      view.payloadError = err instanceof Error ? err.message : String(err);
    }
  } else {
    view.payloadError = decoded.reason;
  }
  return view;
}
