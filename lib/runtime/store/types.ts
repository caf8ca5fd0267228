// The runtime's storage contract. The kernel owns all protocol logic; a store
// only persists what the kernel has decided, in order, durably, and gives it
// back on restart. Implementations: sqlite.ts (default, durable) and
// memory.ts (MACP_MEMORY_ONLY=1, tests). A PostgreSQL store for multi-instance
// deployments would implement the same interface.

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
   * Only on a SessionStart record: the binary macp.v1.PolicyDescriptor the
   * session bound at start, so replay uses the bound copy, not the registry.
   */
  boundPolicy?: Uint8Array;
}

export interface StoredRecord extends LogRecord {
  /** Global, strictly increasing commit position. */
  position: number;
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
  /** Every record in commit order, verified; throws StoreCorruptionError. */
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
  append(records: LogRecord[]): Promise<void>;
  /** Accepted envelopes of one session with seq > afterSeq, in order. */
  readSession(sessionId: string, afterSeq: number): StoredRecord[];
  putPolicy(policy: PolicyRecord): Promise<void>;
  deletePolicy(policyId: string): Promise<void>;
  close(): Promise<void>;
}
