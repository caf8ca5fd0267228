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
//   late resend to a closed session is recognised without reading its log.

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
  append(records: LogRecord[], summaries?: readonly SessionSummary[]): Promise<void>;
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
