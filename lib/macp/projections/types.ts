// Shared types for the client-side projections. Pure.

import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { CommitmentPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import { decodeAs } from "@/lib/macp/payloads";

/** One accepted envelope of a session, as fed to the reducers. */
export interface SessionEvent {
  envelope: Envelope;
  /** Position in the session's accepted history (1 = SessionStart), when known. */
  sequence?: number;
  /** Server or local receive time (Unix ms), when known. */
  receivedAtMs?: number;
}

/** A decoded Commitment, defaults included (`outcomePositive: false` is kept). */
export interface CommitmentRecord {
  commitmentId: string;
  action: string;
  authorityScope: string;
  reason: string;
  outcomePositive: boolean;
  modeVersion: string;
  policyVersion: string;
  configurationVersion: string;
  supersedes?: { sessionId: string; commitmentHash: string };
  sender: string;
  /** Envelope timestamp (Unix ms). */
  timestampMs: number;
  messageId: string;
  sequence?: number;
}

/** Envelope timestamp in Unix ms (client clock), as a JS number. */
export function envelopeTimeMs(envelope: Envelope): number {
  return Number(envelope.timestampUnixMs);
}

/**
 * Best time for an event: the envelope timestamp, or the receive time when the
 * envelope carries none (≤ 0), as the reference runtime does on replay (§2.7).
 */
export function eventTimeMs(event: SessionEvent): number {
  const ts = envelopeTimeMs(event.envelope);
  return ts > 0 ? ts : (event.receivedAtMs ?? ts);
}

/** Decode a Commitment envelope into a record; undefined if undecodable. */
export function commitmentFromEvent(event: SessionEvent): CommitmentRecord | undefined {
  const env = event.envelope;
  const p = decodeAs(CommitmentPayloadSchema, env.payload);
  if (!p) return undefined;
  const record: CommitmentRecord = {
    commitmentId: p.commitmentId,
    action: p.action,
    authorityScope: p.authorityScope,
    reason: p.reason,
    outcomePositive: p.outcomePositive,
    modeVersion: p.modeVersion,
    policyVersion: p.policyVersion,
    configurationVersion: p.configurationVersion,
    sender: env.sender,
    timestampMs: eventTimeMs(event),
    messageId: env.messageId,
  };
  if (p.supersedes) {
    record.supersedes = { sessionId: p.supersedes.sessionId, commitmentHash: p.supersedes.commitmentHash };
  }
  if (event.sequence !== undefined) record.sequence = event.sequence;
  return record;
}
