// In-memory store (MACP_MEMORY_ONLY=1 and tests). Same group commit, same
// validation, same ordering, the same indexes and the same all-or-nothing
// batches as the SQLite store; only durability differs: everything is gone
// when the process exits.
import { randomUUID } from "node:crypto";
import {
  checkAfterSeq,
  checkListPage,
  compareUtf8,
  LogVerifier,
  noopLogger,
  verifySessionRun,
  type StoreLogger,
  type StoreStats,
} from "./common";
import { type CommittedSession, type SessionDraft } from "./session-drafts";
import { GroupCommitWriter, type CommitBackend, type StoreOp } from "./writer";
import {
  isResidentStatus,
  type ListRow,
  type ListSessionsPage,
  type LogRecord,
  type PolicyRecord,
  type ReadPage,
  type SessionIndexEntry,
  type SessionSummary,
  type Store,
  type StoredListRow,
  type StoredRecord,
  type StoreReadStats,
} from "./types";

export interface MemoryStore extends Store {
  stats(): StoreStats;
  /** TEST ONLY. Makes the next commit fail (nothing of it applied), throwing `error` or a generic error. */
  __failNextCommitForTests(error?: Error): void;
}

function copyRecord(r: StoredRecord): StoredRecord {
  const out: StoredRecord = {
    position: r.position,
    sessionId: r.sessionId,
    kind: r.kind,
    seq: r.seq,
    recvMs: r.recvMs,
    envelope: r.envelope.slice(),
  };
  if (r.boundPolicy !== undefined) out.boundPolicy = r.boundPolicy.slice();
  return out;
}

interface MemorySession {
  row: SessionIndexEntry;
  /** Accepted envelopes; index i holds seq i + 1. */
  envelopes: StoredRecord[];
  /** Every record of the session, in position order. */
  all: StoredRecord[];
  messages: Set<string>;
}

function copyListRow(r: StoredListRow): StoredListRow {
  return { ...r, summary: r.summary.slice(), nextActors: [...r.nextActors] };
}

class MemoryStoreImpl implements MemoryStore {
  readonly description = "memory (nothing is persisted)";
  private log: StoredRecord[] = [];
  private sessions = new Map<string, MemorySession>();
  /** Sessions in first-position order (the order they were created in). */
  private order: MemorySession[] = [];
  private policies = new Map<string, PolicyRecord>();
  private fault: Error | null = null;
  private readonly writer: GroupCommitWriter;
  private readonly reads: StoreReadStats = { indexRows: 0, records: 0, envelopeBytes: 0, messageLookups: 0 };
  readonly storeId = randomUUID();
  /** Each session's newest list row. */
  private listRows = new Map<string, StoredListRow>();
  /**
   * Changes in increasing order, with holes where a session's row was
   * replaced by a newer one (`byChange` no longer has them); compacted when
   * the holes outnumber the rows.
   */
  private changes: number[] = [];
  private byChange = new Map<number, StoredListRow>();
  private listChange = 0;

  constructor(logger: StoreLogger) {
    const backend: CommitBackend = {
      commit: (ops, drafts) => this.commit(ops, drafts),
      close: () => {},
    };
    this.writer = new GroupCommitWriter({
      backend,
      description: this.description,
      logger,
      index: {
        session: (id): CommittedSession | undefined => {
          const s = this.sessions.get(id);
          // The row's last seq is as of its last summary; the log has the newest.
          return s ? { ...s.row, lastSeq: s.envelopes.length } : undefined;
        },
        hasMessage: (id, messageId) => this.sessions.get(id)?.messages.has(messageId) ?? false,
      },
    });
  }

  /** Stage everything first, then publish it in one step: all or nothing. */
  private commit(ops: readonly StoreOp[], drafts: readonly SessionDraft[]): readonly StoredListRow[] {
    let position = this.log.length === 0 ? 0 : (this.log[this.log.length - 1] as StoredRecord).position;
    const added: StoredRecord[] = [];
    const messages: [string, string][] = [];
    const policies = new Map(this.policies);
    let change = this.listChange;
    const rowsWritten: StoredListRow[] = [];
    /** Sessions whose row is written in this batch (the backfill leaves them alone). */
    const rowed = new Set<string>();
    const writeRow = (row: ListRow, onlyIfMissing: boolean) => {
      if (onlyIfMissing && (this.listRows.has(row.sessionId) || rowed.has(row.sessionId))) return;
      rowed.add(row.sessionId);
      rowsWritten.push({ ...row, change: ++change });
    };
    for (const op of ops) {
      if (op.type === "append") {
        for (const r of op.records as LogRecord[]) {
          const { messageId, ...rest } = r;
          added.push({ ...rest, position: ++position });
          if (messageId) messages.push([r.sessionId, messageId]);
        }
        for (const row of op.listRows) writeRow(row, false);
      } else if (op.type === "backfillListRows") {
        for (const row of op.rows) writeRow(row, true);
      } else if (op.type === "index") {
        messages.push(...op.messages.map(([s, m]) => [s, m] as [string, string]));
      } else if (op.type === "putPolicy") {
        policies.set(op.policy.policyId, op.policy);
      } else {
        policies.delete(op.policyId);
      }
    }
    const firstPositions = new Map<string, number>();
    for (const r of added) if (!firstPositions.has(r.sessionId)) firstPositions.set(r.sessionId, r.position);
    // Like SQLite: a session's row is written when it is new or a summary came with the batch.
    const written = drafts.filter((d) => !d.committed || d.summarised);
    const rows = written.map((d): SessionIndexEntry => ({
      sessionId: d.sessionId,
      firstPosition: d.firstPosition || (firstPositions.get(d.sessionId) ?? 0),
      lastSeq: d.lastSeq,
      status: d.status,
      activityMs: d.activityMs,
      metadata: d.metadata,
    }));
    const fault = this.fault;
    if (fault !== null) {
      this.fault = null;
      throw fault;
    }
    // Nothing below can throw.
    written.forEach((d, i) => (d.firstPosition = (rows[i] as SessionIndexEntry).firstPosition));
    for (const row of rows) {
      const s = this.sessions.get(row.sessionId);
      if (s) s.row = row;
      else {
        const created: MemorySession = { row, envelopes: [], all: [], messages: new Set() };
        this.sessions.set(row.sessionId, created);
        this.order.push(created);
      }
    }
    for (const r of added) {
      this.log.push(r);
      const s = this.sessions.get(r.sessionId) as MemorySession;
      s.all.push(r);
      if (r.kind === "envelope") s.envelopes.push(r);
    }
    for (const [sessionId, messageId] of messages) this.sessions.get(sessionId)?.messages.add(messageId);
    this.policies = policies;
    for (const row of rowsWritten) {
      const old = this.listRows.get(row.sessionId);
      if (old) this.byChange.delete(old.change);
      this.listRows.set(row.sessionId, row);
      this.byChange.set(row.change, row);
      this.changes.push(row.change);
    }
    if (this.changes.length > 64 && this.changes.length > 2 * this.byChange.size) {
      this.changes = this.changes.filter((c) => this.byChange.has(c));
    }
    this.listChange = change;
    return rowsWritten;
  }

  backfillListRows(rows: readonly ListRow[], complete = false): Promise<void> {
    return this.writer.backfillListRows(rows, complete);
  }

  /** A memory store is never migrated: every session it holds was written with its row. */
  listRowsBackfilled(): boolean {
    return true;
  }

  onListRows(listener: (rows: readonly StoredListRow[]) => void): () => void {
    return this.writer.onListRows(listener);
  }

  readListRows(afterChange: number, limit: number): StoredListRow[] {
    this.ensureOpen();
    checkListPage(afterChange, limit);
    let lo = 0;
    let hi = this.changes.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.changes[mid] as number) <= afterChange) lo = mid + 1;
      else hi = mid;
    }
    const out: StoredListRow[] = [];
    for (let i = lo; i < this.changes.length && out.length < limit; i++) {
      const row = this.byChange.get(this.changes[i] as number);
      if (row) out.push(copyListRow(row));
    }
    return out;
  }

  lastListChange(): number {
    this.ensureOpen();
    return this.listChange;
  }

  sessionsWithoutListRow(afterPosition: number, limit: number): SessionIndexEntry[] {
    this.ensureOpen();
    const out: SessionIndexEntry[] = [];
    for (const s of this.order) {
      if (out.length >= limit) break;
      if (s.row.firstPosition <= afterPosition || this.listRows.has(s.row.sessionId)) continue;
      this.reads.indexRows++;
      out.push(copyRow(s.row));
    }
    return out;
  }

  append(records: LogRecord[], summaries?: readonly SessionSummary[], listRows?: readonly ListRow[]): Promise<void> {
    return this.writer.append(records, summaries, listRows);
  }

  indexSessions(entries: readonly { summary: SessionSummary; messageIds: readonly string[] }[]): Promise<void> {
    return this.writer.indexSessions(entries);
  }

  putPolicy(policy: PolicyRecord): Promise<void> {
    return this.writer.putPolicy(policy);
  }

  deletePolicy(policyId: string): Promise<void> {
    return this.writer.deletePolicy(policyId);
  }

  close(): Promise<void> {
    return this.writer.close();
  }

  loadAll(): StoredRecord[] {
    this.ensureOpen();
    const verifier = new LogVerifier();
    return this.log.map((r) => {
      verifier.check(r);
      return this.counted(r);
    });
  }

  readSession(sessionId: string, afterSeq: number, page: ReadPage = {}): StoredRecord[] {
    this.ensureOpen();
    checkAfterSeq(afterSeq);
    const list = this.sessions.get(sessionId)?.envelopes ?? [];
    const maxRecords = Math.max(1, page.maxRecords ?? Number.POSITIVE_INFINITY);
    const maxBytes = page.maxBytes ?? Number.POSITIVE_INFINITY;
    const upTo = page.upToSeq ?? Number.POSITIVE_INFINITY;
    const out: StoredRecord[] = [];
    let bytes = 0;
    // list[i] has seq i + 1, so "seq > afterSeq" starts at index floor(afterSeq).
    for (let i = Math.max(0, Math.floor(afterSeq)); i < list.length; i++) {
      const r = list[i] as StoredRecord;
      if (r.seq > upTo || out.length >= maxRecords || bytes >= maxBytes) break;
      out.push(this.counted(r));
      bytes += r.envelope.length;
    }
    verifySessionRun(out, sessionId, afterSeq);
    return out;
  }

  *sessionRecords(sessionId: string): IterableIterator<StoredRecord> {
    this.ensureOpen();
    const s = this.sessions.get(sessionId);
    if (!s) return;
    const verifier = new LogVerifier();
    for (const r of s.all) {
      verifier.check(r);
      yield this.counted(r);
    }
  }

  getSession(sessionId: string): SessionIndexEntry | undefined {
    this.ensureOpen();
    const row = this.sessions.get(sessionId)?.row;
    if (!row) return undefined;
    this.reads.indexRows++;
    return copyRow(row);
  }

  listSessions(page: ListSessionsPage): SessionIndexEntry[] {
    this.ensureOpen();
    const out: SessionIndexEntry[] = [];
    const max = page.maxPosition ?? Number.POSITIVE_INFINITY;
    // `order` is sorted by first position: binary search for the start.
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.order[mid] as MemorySession).row.firstPosition <= page.afterPosition) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.order.length && out.length < page.limit; i++) {
      const row = (this.order[i] as MemorySession).row;
      if (row.firstPosition > max) break;
      if (page.residentOnly && !isResidentStatus(row.status)) continue;
      this.reads.indexRows++;
      out.push(copyRow(row));
    }
    return out;
  }

  hasMessage(sessionId: string, messageId: string): boolean {
    this.ensureOpen();
    this.reads.messageLookups++;
    return this.sessions.get(sessionId)?.messages.has(messageId) ?? false;
  }

  lastPosition(): number {
    this.ensureOpen();
    return this.log.length === 0 ? 0 : (this.log[this.log.length - 1] as StoredRecord).position;
  }

  loadPolicies(): PolicyRecord[] {
    this.ensureOpen();
    return [...this.policies.values()]
      .map((p) => ({ policyId: p.policyId, descriptor: p.descriptor.slice() }))
      .sort((a, b) => compareUtf8(a.policyId, b.policyId));
  }

  stats(): StoreStats {
    return this.writer.stats();
  }

  readStats(): StoreReadStats {
    return { ...this.reads };
  }

  __failNextCommitForTests(error?: Error): void {
    this.fault = error ?? new Error("injected commit failure (test)");
  }

  private counted(r: StoredRecord): StoredRecord {
    this.reads.records++;
    this.reads.envelopeBytes += r.envelope.length;
    return copyRecord(r);
  }

  private ensureOpen(): void {
    if (this.writer.isClosed) throw new Error(`runtime store is closed (${this.description})`);
  }
}

function copyRow(row: SessionIndexEntry): SessionIndexEntry {
  return { ...row, metadata: row.metadata === null ? null : row.metadata.slice() };
}

export function openMemoryStore(options: { logger?: StoreLogger } = {}): MemoryStore {
  return new MemoryStoreImpl(options.logger ?? noopLogger);
}
