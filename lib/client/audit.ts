// Audit exports: the session's transcript in the canonical JSON mapping
// (lib/macp/transcript) with one more field per message, `actor_kind`, saying
// whether a person or an agent (or the runtime) sent it. Pure.

import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { toCanonicalMessage, toCanonicalTranscript, type CanonicalMessage, type CanonicalTranscript } from "@/lib/macp/transcript";
import type { SessionEvent } from "@/lib/macp/projections/types";
import type { ActorKind } from "@/lib/client/directory";

export type AuditMessage = CanonicalMessage & { actor_kind: ActorKind };
export type AuditTranscript = Omit<CanonicalTranscript, "messages"> & { messages: AuditMessage[] };

type Ev = SessionEvent | Envelope;

function senderOf(e: Ev): string {
  return "envelope" in e ? e.envelope.sender : e.sender;
}

export function auditTranscript(events: readonly Ev[], kindOf: (sender: string) => ActorKind, opts: { mode?: string; sessionId?: string } = {}): AuditTranscript {
  const t = toCanonicalTranscript(events, opts);
  return { ...t, messages: t.messages.map((m) => ({ ...m, actor_kind: kindOf(m.sender) })) };
}

/** One message per line, in the order given, each with `actor_kind`. */
export function auditNdjson(events: readonly Ev[], kindOf: (sender: string) => ActorKind): string {
  return events.map((e, i) => `${JSON.stringify({ ...toCanonicalMessage(e, i + 1), actor_kind: kindOf(senderOf(e)) })}\n`).join("");
}
