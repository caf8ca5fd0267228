// "Last activity", one rule for the list row (toSummary) and the session
// page's header (issue 12, item 9): the newest event's own time, or the
// runtime's receipt of the last message (the session's metadata) when that
// is later; an agent's clock may not claim a time after `nowMs`. Never the
// time a history was replayed. Pure, and light enough for any page.

import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";

/** Latest server-side activity time in metadata (start or last message). */
export function metadataActivityMs(meta: SessionMetadata): number {
  let t = Number(meta.startedAtUnixMs);
  for (const a of meta.participantActivity) t = Math.max(t, Number(a.lastMessageAtUnixMs));
  return t;
}

/** The session's last activity (Unix ms; 0 when nothing is known). `eventsMs`: the view's `lastActivityMs`. */
export function lastActivityMs(
  meta: SessionMetadata | undefined,
  eventsMs: number | undefined,
  nowMs: number = Number.POSITIVE_INFINITY,
): number {
  return Math.max(meta ? metadataActivityMs(meta) : 0, Math.min(eventsMs ?? 0, nowMs));
}
