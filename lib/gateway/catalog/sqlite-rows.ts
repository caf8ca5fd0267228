// How a list row is stored in the catalog's sessions table: the columns every
// filter and sort reads, derived from the row (lowercased text, ranks, the
// search haystack, the TTL key), when the row started waiting on someone (the
// stuck rule's start), and the stored "who must act" list and its reading
// back as SessionSummary.waiting_on.
import { fromBinary } from "@bufbuild/protobuf";
import { SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { stuckSince } from "@/lib/macp/projections/status";
import { phaseRank, stateRank } from "./query";

/** Where a row comes from: the runtime, or a watched v0.1 handoff directory. */
export type RowKind = "macp" | "file";

const lower = (s: string): string => s.toLowerCase();

/** Columns derived from a list row. */
export function columns(s: SessionSummary) {
  const m = s.metadata;
  const id = m?.sessionId ?? "";
  const participants = [...(m?.participants ?? []), m?.initiator ?? "", s.currentOwner, s.currentTarget].filter((p) => p !== "");
  const participantsLc = lower(participants.join("\n"));
  const hay = lower(
    [s.intent, s.scope, id, s.currentOwner, s.currentTarget, s.phase, m?.mode ?? "", m?.contextId ?? "", ...participants].join("\n"),
  );
  const expires = Number(m?.expiresAtUnixMs ?? 0n);
  return {
    session_id: id,
    mode: m?.mode ?? "",
    state: m?.state ?? 0,
    state_rank: stateRank(m?.state ?? 0),
    phase: s.phase,
    phase_rank: phaseRank(s.phase),
    intent_lc: lower(s.intent),
    owner_lc: lower(s.currentOwner),
    target_lc: lower(s.currentTarget),
    participants_lc: participantsLc,
    hay,
    started_ms: Number(m?.startedAtUnixMs ?? 0n),
    ttl_key: expires > 0 ? expires : Number.MAX_SAFE_INTEGER,
    activity_ms: Number(s.lastActivityUnixMs),
    stuck_since_ms: stuckSinceOf(s),
  };
}

/** When the row started waiting on an answer or an approval (the stuck rule's start), 0 when it cannot be stuck. */
export function stuckSinceOf(s: SessionSummary): number {
  return (
    stuckSince({
      state: s.metadata?.state ?? 0,
      phase: s.phase,
      outcome: s.outcome,
      detail: s.phaseDetail,
      phaseSinceMs: Number(s.phaseSinceUnixMs),
      lastActivityMs: Number(s.lastActivityUnixMs),
    }) ?? 0
  );
}

/**
 * Who must act, as stored: one participant id a line; a file row offered to
 * anyone stores "*" and "!<from_agent>" (anyone but them).
 */
export const ANYONE = "*";
export const EXCEPT = "!";

/** The stored next actors as SessionSummary.waiting_on (exclusions dropped). */
export function waitingOnOf(nextActors: string): string[] {
  return nextActors === "" ? [] : nextActors.split("\n").filter((id) => !id.startsWith(EXCEPT));
}

/** A stored row with who must act now (the catalog's next actors) filled in. */
export function withWaitingOn(summary: Uint8Array, nextActors: string): SessionSummary {
  const s = fromBinary(SessionSummarySchema, summary);
  s.waitingOn = waitingOnOf(nextActors);
  return s;
}
