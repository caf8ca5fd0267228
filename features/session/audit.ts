// Audit exports: the session's transcript in the canonical JSON mapping
// (lib/macp/transcript) with one more field per message, `actor_kind`, saying
// whether a person or an agent (or the runtime) sent it, and text content
// readable: a text context (a runbook), task input or output that is UTF-8
// text is exported decoded (`context_text`, `input_text`, `output_text`,
// `partial_output_text`) instead of base64; binary content keeps its bytes
// (base64, as in the protocol's JSON mapping). Pure.

import { base64Decode } from "@bufbuild/protobuf/wire";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { toCanonicalMessage, toCanonicalTranscript, type CanonicalMessage, type CanonicalTranscript } from "@/lib/macp/transcript";
import type { SessionEvent } from "@/lib/macp/projections/types";
import type { ActorKind } from "@/lib/views/directory";
import { decodeUtf8, mediaTypeOf } from "@/lib/views/content";

export type AuditMessage = CanonicalMessage & { actor_kind: ActorKind };
export type AuditTranscript = Omit<CanonicalTranscript, "messages"> & { messages: AuditMessage[] };

type Ev = SessionEvent | Envelope;

function senderOf(e: Ev): string {
  return "envelope" in e ? e.envelope.sender : e.sender;
}

const TEXT_TYPES = new Set(["application/json", "application/x-ndjson", "application/markdown"]);

/** Replace a base64 bytes field by its text when it is UTF-8 text (and, for a typed context, of a text type). */
function decodeField(payload: Record<string, unknown>, field: string, typed: string | undefined): void {
  const b64 = payload[field];
  if (typeof b64 !== "string") return;
  if (typed !== undefined) {
    const type = mediaTypeOf(typed);
    if (!(type.startsWith("text/") || TEXT_TYPES.has(type) || type.endsWith("+json"))) return;
  }
  // The canonical mapping wrote it (lib/macp/transcript.ts), so it is base64 by construction.
  const text = decodeUtf8(base64Decode(b64));
  if (text === undefined) return;
  delete payload[field];
  payload[`${field}_text`] = text;
}

/** The message with text content decoded (a copy; the canonical message is left as it is). */
function readable<M extends CanonicalMessage>(m: M): M {
  const p = m.payload as Record<string, unknown> | undefined;
  if (!p) return m;
  const payload = { ...p };
  switch (m.message_type) {
    case "HandoffContext":
      decodeField(payload, "context", typeof payload.content_type === "string" ? payload.content_type : "");
      break;
    case "TaskRequest":
      decodeField(payload, "input", undefined);
      break;
    case "TaskUpdate":
      decodeField(payload, "partial_output", undefined);
      break;
    case "TaskComplete":
      decodeField(payload, "output", undefined);
      break;
    default:
      return m;
  }
  return { ...m, payload: payload as CanonicalMessage["payload"] };
}

export function auditTranscript(
  events: readonly Ev[],
  kindOf: (sender: string) => ActorKind,
  opts: { mode?: string; sessionId?: string } = {},
): AuditTranscript {
  const t = toCanonicalTranscript(events, opts);
  return { ...t, messages: t.messages.map((m) => ({ ...readable(m), actor_kind: kindOf(m.sender) })) };
}

/** One message per line, in the order given, each with `actor_kind`. */
export function auditNdjson(events: readonly Ev[], kindOf: (sender: string) => ActorKind): string {
  return events
    .map((e, i) => `${JSON.stringify({ ...readable(toCanonicalMessage(e, i + 1)), actor_kind: kindOf(senderOf(e)) })}\n`)
    .join("");
}
