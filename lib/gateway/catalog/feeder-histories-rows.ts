// The catalog rows the history feed (feeder-histories.ts) writes, as pure
// functions of what it knows: a followed session's fold, a stored row met
// with newer WatchSessions metadata, and a session whose history cannot be
// read (gone, or not readable by the console's identity).
import { create } from "@bufbuild/protobuf";
import { SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { historyCount, isTerminalState, metadataActivityMs, nextActors, toSummary, type SessionFold } from "@/lib/macp/projections/summary";
import { fresherMetadata } from "../sequencer";
import type { CatalogWrite } from "./store";

/** A session being read (catch-up) or followed live (open). */
export interface Followed {
  id: string;
  meta: SessionMetadata;
  fold: SessionFold;
  ac: AbortController;
  caughtUp: boolean;
}

/** A stored row with fresher metadata (no new envelopes folded). */
function withMetadata(s: SessionSummary, meta: SessionMetadata): SessionSummary {
  const activity = Math.max(Number(s.lastActivityUnixMs), metadataActivityMs(meta));
  return create(SessionSummarySchema, { ...s, metadata: meta, lastActivityUnixMs: BigInt(activity) });
}

/** A followed session's row: final once it is terminal and folded to its end. */
export function followedRow(f: Followed, needsRead: boolean): CatalogWrite {
  const terminal = isTerminalState(f.meta.state);
  const complete = f.fold.count >= historyCount(f.meta);
  const view = f.fold.view;
  return {
    summary: toSummary(f.meta, view, f.fold.count),
    folded: f.fold.count,
    final: terminal && complete,
    needsRead: needsRead && !(terminal && complete),
    nextActors: nextActors(f.meta, view),
  };
}

/**
 * What metadata from WatchSessions does to a session that is not followed
 * (`row`: its current row, if any): nothing (undefined), or a row to write
 * and whether its history must be read.
 */
export function metadataRow(row: CatalogWrite | undefined, incoming: SessionMetadata): { write: CatalogWrite; read: boolean } | undefined {
  if (row?.final) return undefined;
  const before = row?.summary.metadata;
  const meta = fresherMetadata(before, incoming);
  const terminal = isTerminalState(meta.state);
  if (row && before === meta && row.needsRead) return undefined; // nothing new; a read is already due
  if (row && terminal && row.folded >= historyCount(meta) && row.folded > 0) {
    // Closed with nothing new to fold: final without a read.
    return { write: { ...row, summary: withMetadata(row.summary, meta), final: true, needsRead: false, nextActors: [] }, read: false };
  }
  const summary = row ? withMetadata(row.summary, meta) : toSummary(meta, undefined, 0);
  return { write: { summary, folded: row?.folded ?? 0, final: false, needsRead: true, nextActors: row?.nextActors ?? [] }, read: true };
}

/**
 * The row of a session whose history cannot be read: metadata only. A gone
 * (`notFound`) or terminal session is final; another is read again later.
 */
export function unreadableRow(meta: SessionMetadata, notFound: boolean): CatalogWrite {
  const terminal = isTerminalState(meta.state);
  return {
    summary: toSummary(meta, undefined, 0),
    folded: 0,
    final: terminal || notFound,
    needsRead: !(terminal || notFound),
    nextActors: [],
  };
}
