// The console's catalog: one row per session, the persistent read model
// behind the session list (ListSessionPage, WatchSessionChanges), the
// summaries and the inbox. Kept behind this small interface so another
// database (PostgreSQL) can back it; lib/gateway/catalog/sqlite.ts is the
// default implementation.
import type { SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import type { CatalogQuery } from "./query";

/** What the feeder writes for one session. */
export interface CatalogWrite {
  /** The list row, metadata included. */
  summary: SessionSummary;
  /** Envelopes folded into the summary (where a read of the history resumes). */
  folded: number;
  /** Terminal and every envelope folded (or the history can never be read): never read again. */
  final: boolean;
  /** The history must be (re)read: the summary lags behind the metadata, or an open session is not followed. */
  needsRead: boolean;
  /** Participant ids whose move it is (offer target, committer, task assignee). */
  nextActors: readonly string[];
}

export interface CatalogRow extends CatalogWrite {
  /** Catalog version of the row's last change. */
  version: number;
  /** "macp": a session of the runtime; "file": a v0.1 file handoff of a watched directory. */
  kind: "macp" | "file";
}

export interface CatalogPage {
  rows: SessionSummary[];
  /** Rows matching the query in all. */
  total: number;
  /** Catalog version the page was read at. */
  version: number;
}

export interface CatalogChanges {
  /** Sessions changed after the given version, oldest change first (at most `limit`). */
  ids: string[];
  /** More changed than listed. */
  overflow: boolean;
  /** Version the answer was read at. */
  version: number;
  /** Version of the last listed change (continue from just below it when `overflow`). */
  through: number;
}

export interface CatalogCounts {
  /** Sessions of the runtime in the catalog (file rows not counted). */
  known: number;
  /** Of those, sessions whose history still has to be read. */
  pending: number;
}

/**
 * How far the catalog has applied the runtime's list-row feed
 * (baton.v1.RuntimeCatalogService.WatchListRows): the runtime store it
 * belongs to and the last change applied. Stored in the same transaction as
 * the rows it covers, so a restart resumes exactly after what was written.
 */
/** A participant id seen in the catalog's sessions. */
export interface CatalogActor {
  participantId: string;
  /** Sessions it takes part in (or started). */
  sessions: number;
  /** Start of the newest of them (Unix ms). */
  lastSeenMs: number;
}

export interface FeedCursor {
  /** The runtime store's identity (a new one means its data was replaced). */
  storeId: string;
  /** Last change applied (0 = none yet). */
  change: bigint;
}

export interface PendingRead {
  sessionId: string;
  /** Scan position: pass it back as `after` to continue. */
  position: number;
}

export interface CatalogStore {
  /** Grows with every write; persisted. */
  readonly version: number;
  get(sessionId: string): CatalogRow | undefined;
  /** Write rows in one transaction; returns the new version (unchanged when `rows` is empty). */
  write(rows: readonly CatalogWrite[]): number;
  /** The list-row feed position, if the catalog is fed by one. */
  readonly cursor: FeedCursor | undefined;
  /** Participant ids seen in sessions, most recently seen first (the people picker's agents). */
  actors(limit: number): CatalogActor[];
  /**
   * Apply rows of the list-row feed and move the cursor, in one transaction.
   * With `reset` (the runtime's data was replaced, or its feed restarted from
   * 0), every row is deleted first: rows from another store are stale.
   * Returns the new version (bumped whenever rows changed or were deleted).
   */
  applyFeed(rows: readonly CatalogWrite[], cursor: FeedCursor, reset?: boolean): number;
  /**
   * Upsert v0.1 file rows and delete removed ones (by id), in one
   * transaction. Rows identical to the stored ones are skipped; returns the
   * new version, unchanged when nothing changed. Runtime rows are never
   * touched, and resets for the runtime keep file rows.
   */
  writeFiles(rows: readonly CatalogWrite[], removed: readonly string[]): number;
  /** File rows in catalog order after `after` (reconciliation with the directories). */
  fileRows(after: number, limit: number): { rows: SessionSummary[]; last: number };
  /** File rows stored. */
  fileCount(): number;
  /** Forget the feed position (the catalog is fed from histories again). */
  clearCursor(): void;
  /** One window of the sorted, filtered list. */
  page(query: CatalogQuery, offset: number, limit: number): CatalogPage;
  count(query: CatalogQuery): number;
  changedSince(version: number, limit: number): CatalogChanges;
  /** Rows in catalog order after `after` (WatchSessionList's snapshot, in chunks). */
  scan(after: number, limit: number): { rows: SessionSummary[]; last: number };
  /**
   * Sessions whose history must be read, in catalog order after `after`, not
   * deferred past `now`; `openOnly`: only OPEN and SUSPENDED ones (read first).
   */
  pendingReads(after: number, now: number, limit: number, openOnly?: boolean): PendingRead[];
  /** Put off the next read of a session after a failure (backoff). */
  deferRead(sessionId: string, until: number): void;
  /** Earliest deferred read, if any. */
  nextDeferred(): number | undefined;
  counts(): CatalogCounts;
  /** Marks every row that is not final as needing a read (start-up: open sessions are followed again). */
  resetUnfinished(): number;
  close(): void;
}
