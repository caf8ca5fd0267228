// Group commit, shared by both stores so that they behave identically.
//
// Every write (append, putPolicy, deletePolicy) is validated and copied
// synchronously, then queued. The first write of an event-loop turn schedules
// a flush with setImmediate; the flush hands the whole queue to the backend,
// which applies it in ONE transaction (one fsync for SQLite), and then settles
// the writes' promises in the order the calls were made. The backend is
// synchronous, so a flush runs to completion before anything else can queue
// or flush: batches are strictly ordered and never interleave.
import {
  asError,
  copyValidPolicy,
  copyValidListRows,
  copyValidRecords,
  copyValidSummaries,
  InvalidRecordError,
  isFatalStorageError,
  StoreFailedError,
  validPolicyId,
  type StoreLogger,
  type StoreStats,
} from "./common";
import { SessionDrafts, type IndexLookup, type SessionDraft } from "./session-drafts";
import type { ListRow, LogRecord, PolicyRecord, SessionSummary, StoredListRow } from "./types";

export type StoreOp =
  /** Records, and the list rows of their sessions as of after them (each gets the next change). */
  | { type: "append"; records: readonly LogRecord[]; listRows: readonly ListRow[] }
  /** List rows for sessions that have none (the schema-v3 backfill); a session with a row keeps it. */
  | { type: "backfillListRows"; rows: readonly ListRow[]; complete: boolean }
  /** Message ids of records already written (the schema-v2 backfill); summaries travel in the drafts. */
  | { type: "index"; messages: readonly (readonly [string, string])[] }
  | { type: "putPolicy"; policy: PolicyRecord }
  | { type: "deletePolicy"; policyId: string };

export interface CommitBackend {
  /**
   * Apply `ops` in order, then write `sessions` (the session-index rows as
   * they stand after all of `ops`), atomically and durably, filling in the
   * first position of each new session. Records' message ids go to the
   * message-id index. List rows get the next changes in the order they come
   * (an append's replacing an older row of the session). Returns the list
   * rows written, in change order. Throwing means nothing was applied.
   */
  commit(ops: readonly StoreOp[], sessions: readonly SessionDraft[]): readonly StoredListRow[];
  close(): void;
}

interface Pending {
  op: StoreOp;
  resolve: () => void;
  reject: (err: Error) => void;
}

export interface GroupCommitWriterOptions {
  backend: CommitBackend;
  /** For log messages, e.g. "sqlite /var/lib/baton/baton-runtime.sqlite". */
  description: string;
  logger: StoreLogger;
  /** The committed session index, read on demand to validate writes. */
  index: IndexLookup;
}

export class GroupCommitWriter {
  private readonly backend: CommitBackend;
  private readonly description: string;
  private readonly logger: StoreLogger;
  private readonly drafts: SessionDrafts;
  private pending: Pending[] = [];
  private scheduled: NodeJS.Immediate | null = null;
  private flushing = false;
  private closed = false;
  private closing: Promise<void> | null = null;
  private failure: StoreFailedError | null = null;
  private readonly counters: StoreStats = { transactions: 0, records: 0, policyWrites: 0, failedTransactions: 0 };
  private readonly listRowListeners = new Set<(rows: readonly StoredListRow[]) => void>();

  constructor(opts: GroupCommitWriterOptions) {
    this.backend = opts.backend;
    this.description = opts.description;
    this.logger = opts.logger;
    this.drafts = new SessionDrafts(opts.index);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** A commit failed since open (the file may not be as the log says; see StoreFailedError). */
  get hasFailed(): boolean {
    return this.counters.failedTransactions > 0;
  }

  stats(): StoreStats {
    return { ...this.counters };
  }

  append(records: LogRecord[], summaries?: readonly SessionSummary[], listRows?: readonly ListRow[]): Promise<void> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    let copies: LogRecord[];
    let rows: ListRow[];
    try {
      copies = copyValidRecords(records);
      rows = copyValidListRows(listRows, new Set(copies.map((r) => r.sessionId)));
      this.drafts.reserve(copies, copyValidSummaries(summaries));
    } catch (e) {
      return Promise.reject(asError(e));
    }
    return this.enqueue({ type: "append", records: copies, listRows: rows });
  }

  /** See Store.backfillListRows. */
  backfillListRows(rows: readonly ListRow[], complete = false): Promise<void> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    let copies: ListRow[];
    try {
      copies = copyValidListRows(rows);
    } catch (e) {
      return Promise.reject(asError(e));
    }
    if (typeof complete !== "boolean") return Promise.reject(new InvalidRecordError("complete must be a boolean"));
    return this.enqueue({ type: "backfillListRows", rows: copies, complete });
  }

  /** See Store.onListRows. */
  onListRows(listener: (rows: readonly StoredListRow[]) => void): () => void {
    this.listRowListeners.add(listener);
    return () => void this.listRowListeners.delete(listener);
  }

  /** Summaries and message ids of sessions already written (see Store.indexSessions). */
  indexSessions(entries: readonly { summary: SessionSummary; messageIds: readonly string[] }[]): Promise<void> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    const messages: (readonly [string, string])[] = [];
    try {
      if (!Array.isArray(entries)) throw new InvalidRecordError("indexSessions() expects an array");
      const summaries = copyValidSummaries(entries.map((e) => e.summary));
      entries.forEach((e, i) => {
        if (!Array.isArray(e.messageIds) || !e.messageIds.every((m: unknown) => typeof m === "string" && m !== "")) {
          throw new InvalidRecordError(`entry ${i}: messageIds must be non-empty strings`);
        }
        for (const m of e.messageIds) messages.push([e.summary.sessionId, m]);
      });
      this.drafts.reserve([], summaries, messages);
    } catch (e) {
      return Promise.reject(asError(e));
    }
    return this.enqueue({ type: "index", messages });
  }

  putPolicy(policy: PolicyRecord): Promise<void> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    let copy: PolicyRecord;
    try {
      copy = copyValidPolicy(policy);
    } catch (e) {
      return Promise.reject(asError(e));
    }
    return this.enqueue({ type: "putPolicy", policy: copy });
  }

  deletePolicy(policyId: string): Promise<void> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    try {
      validPolicyId(policyId);
    } catch (e) {
      return Promise.reject(asError(e));
    }
    return this.enqueue({ type: "deletePolicy", policyId });
  }

  /** Flush whatever is queued, then close the backend. Idempotent. */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closed = true;
    if (this.scheduled) {
      clearImmediate(this.scheduled);
      this.scheduled = null;
    }
    this.flush();
    try {
      this.backend.close();
      this.closing = Promise.resolve();
    } catch (e) {
      const err = asError(e);
      this.logger.error({ err, store: this.description }, "runtime store: close failed");
      this.closing = Promise.reject(err);
    }
    return this.closing;
  }

  private refusal(): Error | null {
    if (this.closed) return new Error(`runtime store is closed (${this.description})`);
    return this.failure;
  }

  private enqueue(op: StoreOp): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ op, resolve, reject });
      if (this.scheduled === null) this.scheduled = setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = null;
    if (this.pending.length === 0) return;
    if (this.flushing) throw new Error("runtime store: re-entrant flush (internal error)");
    const batch = this.pending;
    this.pending = [];
    const ops = batch.map((p) => p.op);
    let records = 0;
    let policyWrites = 0;
    let indexWrites = 0;
    for (const op of ops) {
      if (op.type === "append") records += op.records.length;
      else if (op.type === "index" || op.type === "backfillListRows") indexWrites++;
      else policyWrites++;
    }
    const sessions = this.drafts.pending();
    let listRows: readonly StoredListRow[] = [];

    if (records + policyWrites + indexWrites + sessions.length > 0) {
      this.flushing = true;
      try {
        listRows = this.backend.commit(ops, sessions);
      } catch (e) {
        const err = asError(e);
        this.drafts.reset(false);
        this.counters.failedTransactions++;
        this.logger.error(
          { err, store: this.description, calls: batch.length, records, policyWrites },
          "runtime store: COMMIT FAILED; the whole group was rolled back and every write in it is rejected",
        );
        if (isFatalStorageError(err) && !this.failure) {
          this.failure = new StoreFailedError(`runtime store refuses further writes after a storage error: ${err.message}`, err);
          this.logger.error(
            { err, store: this.description },
            "runtime store: I/O or corruption error during commit; all further writes will be refused until restart",
          );
        }
        for (const p of batch) p.reject(err);
        return;
      } finally {
        this.flushing = false;
      }
      this.counters.transactions++;
      this.counters.records += records;
      this.counters.policyWrites += policyWrites;
    }
    this.drafts.reset(true);
    if (listRows.length > 0) {
      for (const l of [...this.listRowListeners]) {
        try {
          l(listRows);
        } catch (e) {
          this.logger.error({ err: asError(e), store: this.description }, "runtime store: a list-row listener failed");
        }
      }
    }
    for (const p of batch) p.resolve();
  }
}
