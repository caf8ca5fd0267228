// The runtime's storage contract. The kernel owns all protocol logic; a store
// only persists what the kernel has decided, in order, durably, and gives it
// back on restart. Implementations: sqlite.ts (default, durable) and
// memory.ts (MACP_MEMORY_ONLY=1, tests). A PostgreSQL store for multi-instance
// deployments would implement the same interface.
//
// Besides the log, a store keeps two indexes, written in the same transaction
// as the records they describe:
// - the session index: one row per session with where it stands (status,
//   last seq, last activity, and the kernel's summary of its metadata), so a
//   restart reads only the sessions that are still open or suspended, and a
//   closed session is answered from one row instead of its whole history;
// - the message-id index: which message ids each session has accepted, so a
//   late resend to a closed session is recognised without reading its log;
// - the list rows: each session's console list row (baton.v1.SessionSummary
//   and who acts next), numbered by a store-wide change counter, so a
//   console follows every session from a cursor without reading histories
//   (the runtime's list-row feed, baton.v1.RuntimeCatalogService).

/** What a log record means to the kernel when it is replayed. */
export type RecordKind =
  /** An accepted client envelope (SessionStart, mode message, Commitment). */
  | "envelope"
  /** Runtime annotations: never broadcast, never numbered in `seq`. */
  | "cancel"
  | "suspend"
  | "resume"
  | "expire";

export interface LogRecord {
  sessionId: string;
  kind: RecordKind;
  /**
   * Position of an accepted client envelope in its session (1 = SessionStart).
   * 0 for annotations.
   */
  seq: number;
  /** Server time (Unix ms) at which the kernel accepted the record. */
  recvMs: number;
  /** Binary macp.v1.Envelope. Annotations are envelopes too (sender `_runtime`). */
  envelope: Uint8Array;
  /**
   * Only on envelopes (written, never read back): the envelope's message_id,
   * added to the session's message-id index (duplicate detection). A session
   * never accepts the same id twice; the store refuses a repeat.
   */
  messageId?: string;
  /**
   * Only on a SessionStart record: the binary macp.v1.PolicyDescriptor the
   * session bound at start, so replay uses the bound copy, not the registry.
   */
  boundPolicy?: Uint8Array;
}

export interface StoredRecord extends Omit<LogRecord, "messageId"> {
  /** Global, strictly increasing commit position. */
  position: number;
}

/** Where a session stands, as the kernel last recorded it. */
export type SessionStatus = "open" | "suspended" | "resolved" | "expired" | "cancelled";

export const SESSION_STATUSES: readonly SessionStatus[] = ["open", "suspended", "resolved", "expired", "cancelled"];

/** Sessions in these states (or not yet summarised) are rebuilt in memory at restart. */
export function isResidentStatus(status: SessionStatus | null): boolean {
  return status === null || status === "open" || status === "suspended";
}

/** The kernel's summary of one session after the records written with it. */
export interface SessionSummary {
  sessionId: string;
  status: SessionStatus;
  /** Server time (Unix ms) of the session's newest accepted envelope. */
  activityMs: number;
  /** Opaque to the store: the kernel's binary macp.v1.SessionMetadata. */
  metadata: Uint8Array;
}

/** One row of the session index. */
export interface SessionIndexEntry {
  sessionId: string;
  /** Log position of the session's first record: sessions list in the order they started. */
  firstPosition: number;
  /**
   * Seq of the session's newest accepted envelope as of its last summary: a
   * session's row is written when it starts and whenever a summary comes
   * with a write (the kernel sends one when the state changes, so for a
   * closed session this is its last seq); envelopes in between do not
   * rewrite it.
   */
  lastSeq: number;
  /**
   * null until the kernel has summarised the session: rows created by the
   * schema-v2 migration from a v1 log, or by writes that carried no summary.
   * Such rows count as resident (rebuilt at restart).
   */
  status: SessionStatus | null;
  activityMs: number;
  /** The summary's metadata, or null with status. */
  metadata: Uint8Array | null;
}

/** A session's list row as the kernel hands it to append(). */
export interface ListRow {
  sessionId: string;
  /** Opaque to the store: the binary baton.v1.SessionSummary. */
  summary: Uint8Array;
  /** Participant ids whose move it is (empty once closed). */
  nextActors: readonly string[];
  /** The session is terminal: the row never changes again. */
  final: boolean;
}

/** A stored list row: the newest row of its session, at its change. */
export interface StoredListRow extends ListRow {
  /**
   * Position in the store's list-row feed, assigned at commit: strictly
   * increasing over the whole store, in commit order. A session's row gets a
   * new change each time it is written.
   */
  change: number;
}

/** Limits of one page of readSession(). */
export interface ReadPage {
  /** Only envelopes with seq <= upToSeq. */
  upToSeq?: number;
  /** At most this many records (at least 1). */
  maxRecords?: number;
  /**
   * Stop once the envelopes read add up to this many bytes; the record that
   * crosses the limit is included, so a page always makes progress.
   */
  maxBytes?: number;
}

/** Options of listSessions(). */
export interface ListSessionsPage {
  /** Sessions whose first position is greater than this (keyset paging). */
  afterPosition: number;
  /** Only sessions whose first position is at most this. */
  maxPosition?: number;
  limit: number;
  /** Only open, suspended or unsummarised sessions (what a restart rebuilds). */
  residentOnly?: boolean;
}

/** What was read from storage since the store was opened (both implementations). */
export interface StoreReadStats {
  /** Session-index rows read. */
  indexRows: number;
  /** Log records read (any read path). */
  records: number;
  /** Bytes of envelopes read. */
  envelopeBytes: number;
  /** Message-id lookups. */
  messageLookups: number;
}

export interface PolicyRecord {
  policyId: string;
  /** Binary macp.v1.PolicyDescriptor. */
  descriptor: Uint8Array;
}

/** Raised when stored data fails verification. Never swallowed. */
export class StoreCorruptionError extends Error {
  constructor(
    message: string,
    readonly position?: number,
  ) {
    super(message);
    this.name = "StoreCorruptionError";
  }
}

export interface Store {
  readonly description: string;
  /**
   * Every record in commit order, verified; throws StoreCorruptionError.
   * A full scan, for tools and tests: the runtime itself never calls it.
   */
  loadAll(): StoredRecord[];
  /** Currently registered (non-default) policies. */
  loadPolicies(): PolicyRecord[];
  /**
   * Queue records for durable commit. Records passed in one call commit
   * atomically and in order; calls made in the same event-loop turn are
   * grouped into one transaction (group commit). The promise resolves only
   * once the data is on disk (fsync'd), and rejects if the commit failed, in
   * which case none of the records of that group were stored.
   */
  append(records: LogRecord[], summaries?: readonly SessionSummary[], listRows?: readonly ListRow[]): Promise<void>;
  /**
   * List rows of sessions that have none yet (the backfill of a store that
   * was migrated from schema v2), committed like an append; a session that
   * has a row by the time the batch commits keeps it (the kernel's is newer).
   * `complete`: every session has a row now (listRowsBackfilled() turns true).
   */
  backfillListRows(rows: readonly ListRow[], complete?: boolean): Promise<void>;
  /** Whether every session has a list row (false only after a v2 → v3 migration, until the backfill is done). */
  listRowsBackfilled(): boolean;
  /** List rows with change > afterChange, in change order, verified; at most `limit`. */
  readListRows(afterChange: number, limit: number): StoredListRow[];
  /** Highest change assigned (0 when there is none). */
  lastListChange(): number;
  /**
   * Index rows of sessions with no list row, in first-position order after
   * `afterPosition` (what the backfill folds).
   */
  sessionsWithoutListRow(afterPosition: number, limit: number): SessionIndexEntry[];
  /**
   * Called after every commit that wrote list rows, once it is durable, with
   * those rows in change order (before the writes' promises settle).
   */
  onListRows(listener: (rows: readonly StoredListRow[]) => void): () => void;
  /**
   * Identity of this store: random, made once when the store was created (or
   * migrated to schema v3) and kept with it. Change cursors belong to it.
   */
  readonly storeId: string;
  /**
   * Accepted envelopes of one session with seq > afterSeq, in order; with
   * `page`, at most one page of them (call again after the last seq read).
   */
  readSession(sessionId: string, afterSeq: number, page?: ReadPage): StoredRecord[];
  /**
   * Every record of one session (envelopes and annotations) in commit order,
   * verified, read lazily as the iterator advances. For rebuilding one session.
   */
  sessionRecords(sessionId: string): IterableIterator<StoredRecord>;
  /** The session's index row, verified; undefined if the session has no records. */
  getSession(sessionId: string): SessionIndexEntry | undefined;
  /** A page of index rows in first-position order (the order sessions started). */
  listSessions(page: ListSessionsPage): SessionIndexEntry[];
  /** Whether the session has accepted an envelope with this message id. */
  hasMessage(sessionId: string, messageId: string): boolean;
  /** Highest committed log position (0 when empty). */
  lastPosition(): number;
  /**
   * Summaries and message ids of sessions whose rows have no summary yet
   * (after the schema-v2 migration), committed like an append.
   */
  indexSessions(entries: readonly { summary: SessionSummary; messageIds: readonly string[] }[]): Promise<void>;
  readStats(): StoreReadStats;
  putPolicy(policy: PolicyRecord): Promise<void>;
  deletePolicy(policyId: string): Promise<void>;
  close(): Promise<void>;
}
