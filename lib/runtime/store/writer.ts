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
  copyValidRecords,
  isFatalStorageError,
  SeqTracker,
  StoreFailedError,
  validPolicyId,
  type StoreLogger,
  type StoreStats,
} from "./common";
import type { LogRecord, PolicyRecord } from "./types";

export type StoreOp =
  | { type: "append"; records: readonly LogRecord[] }
  | { type: "putPolicy"; policy: PolicyRecord }
  | { type: "deletePolicy"; policyId: string };

export interface CommitBackend {
  /**
   * Apply `ops` in order, atomically and durably. Throwing means nothing of
   * `ops` was applied.
   */
  commit(ops: readonly StoreOp[]): void;
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
  /** Last committed envelope seq of every session. */
  lastSeqs: Iterable<readonly [string, number]>;
}

export class GroupCommitWriter {
  private readonly backend: CommitBackend;
  private readonly description: string;
  private readonly logger: StoreLogger;
  private readonly seqs: SeqTracker;
  private pending: Pending[] = [];
  private scheduled: NodeJS.Immediate | null = null;
  private flushing = false;
  private closed = false;
  private closing: Promise<void> | null = null;
  private failure: StoreFailedError | null = null;
  private readonly counters: StoreStats = { transactions: 0, records: 0, policyWrites: 0, failedTransactions: 0 };

  constructor(opts: GroupCommitWriterOptions) {
    this.backend = opts.backend;
    this.description = opts.description;
    this.logger = opts.logger;
    this.seqs = new SeqTracker(opts.lastSeqs);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  stats(): StoreStats {
    return { ...this.counters };
  }

  append(records: LogRecord[]): Promise<void> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    let copies: LogRecord[];
    try {
      copies = copyValidRecords(records);
      this.seqs.reserve(copies);
    } catch (e) {
      return Promise.reject(asError(e));
    }
    return this.enqueue({ type: "append", records: copies });
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
    for (const op of ops) {
      if (op.type === "append") records += op.records.length;
      else policyWrites++;
    }

    if (records + policyWrites > 0) {
      this.flushing = true;
      try {
        this.backend.commit(ops);
      } catch (e) {
        const err = asError(e);
        this.seqs.rollbackBatch();
        this.counters.failedTransactions++;
        this.logger.error(
          { err, store: this.description, calls: batch.length, records, policyWrites },
          "runtime store: COMMIT FAILED; the whole group was rolled back and every write in it is rejected",
        );
        if (isFatalStorageError(err) && !this.failure) {
          this.failure = new StoreFailedError(
            `runtime store refuses further writes after a storage error: ${err.message}`,
            err,
          );
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
    this.seqs.commitBatch();
    for (const p of batch) p.resolve();
  }
}
