// The SQLite store once open: the Store's reads (each row's CRC and each
// session's seq continuity checked, history in bounded pages) and its writes
// handed to the group-commit writer, whose backend is sqlite-commit.ts.
// Opening the file (pragmas, integrity check, migrations) is sqlite.ts.
import type Database from "better-sqlite3";
import { checkAfterSeq, checkListPage, compareUtf8, LogVerifier, verifySessionRun, type StoreLogger, type StoreStats } from "./common";
import { forgetCleanClose, recordCleanClose } from "./clean-close";
import { messageCrc } from "./row-crc";
import { sqliteCommitBackend } from "./sqlite-commit";
import { decodeListRow, decodeLogRow, decodePolicyRow, decodeSessionRow, hex32, type LogRow } from "./sqlite-rows";
import { prepareStatements, SQL, type SqliteStatements } from "./sqlite-schema";
import {
  StoreCorruptionError,
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
import type { WalInspection } from "./wal";
import { GroupCommitWriter } from "./writer";

export interface SqliteOpenReport {
  /** Absolute path of the database file. */
  path: string;
  /** The file did not exist before this open. */
  created: boolean;
  /** Size of the -wal file found at open; 0 after a clean shutdown. */
  walBytesBefore: number;
  /** What that WAL contained (null if there was none); SQLite replays `committedFrames` of it. */
  wal: WalInspection | null;
  /** Log records present after recovery: everything that was committed. */
  recoveredRecords: number;
  /** Highest log position (0 for an empty log). */
  lastPosition: number;
  policies: number;
  /**
   * The file is verified: PRAGMA quick_check returned "ok" at this open (open
   * throws otherwise), or it was skipped for a file left exactly as a
   * verified clean shutdown left it (see `quickCheck`).
   */
  checkedOk: boolean;
  /** Whether PRAGMA quick_check ran at this open, and why. */
  quickCheck: { ran: boolean; reason: string; ms: number };
  schemaVersion: number;
  journalMode: string;
  synchronous: string;
  lockingMode: string;
}

export interface SqliteStore extends Store {
  /** Absolute path of the database file. */
  readonly path: string;
  readonly openReport: SqliteOpenReport;
  stats(): StoreStats;
  /**
   * TEST ONLY. Makes the next commit fail inside its transaction, after the
   * batch's rows were inserted: with no argument by inserting a row that
   * violates a CHECK constraint (a real SQLite error and rollback), otherwise
   * by throwing `error`.
   */
  __failNextCommitForTests(error?: Error): void;
}

export function errorCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

/** Records per query when a session's records are read in pages. */
const RECORDS_PER_QUERY = 64;
/** Bytes of envelopes per query when a session's records are read in pages. */
const BYTES_PER_QUERY = 1_048_576;

export class SqliteStoreImpl implements SqliteStore {
  readonly description: string;
  readonly path: string;
  readonly openReport: SqliteOpenReport;
  private readonly writer: GroupCommitWriter;
  private fault: Error | "constraint" | null = null;
  /** Set when any read or commit saw damage: the next start must run quick_check. */
  private damaged = false;
  private readonly reads: StoreReadStats = { indexRows: 0, records: 0, envelopeBytes: 0, messageLookups: 0 };
  private readonly stmt: SqliteStatements;
  readonly storeId: string;
  /** Highest change committed. */
  private listChange: number;
  private backfilled: boolean;

  constructor(db: Database.Database, file: string, report: SqliteOpenReport, logger: StoreLogger) {
    this.path = file;
    this.description = `sqlite ${file}`;
    this.openReport = report;
    this.stmt = prepareStatements(db);
    const meta = (name: string): string => {
      const row = db.prepare<[string], { value: string }>(SQL.selectMeta).get(name);
      if (typeof row?.value !== "string") throw new StoreCorruptionError(`runtime store ${file}: store_meta has no ${name}`);
      return row.value;
    };
    this.storeId = meta("store_id");
    if (!/^[0-9a-f-]{36}$/.test(this.storeId))
      throw new StoreCorruptionError(`runtime store ${file}: store_id ${JSON.stringify(this.storeId)} is malformed`);
    this.backfilled = meta("list_rows_backfilled") === "1";
    const change = db.prepare<[], { value: number }>(SQL.listChange).get()?.value;
    if (typeof change !== "number" || !Number.isSafeInteger(change))
      throw new StoreCorruptionError(`runtime store ${file}: the list-change counter is missing`);
    this.listChange = change;
    const backend = sqliteCommitBackend(db, this.stmt, {
      listChange: () => this.listChange,
      committed: (last, complete) => {
        this.listChange = last;
        if (complete) this.backfilled = true;
      },
      takeFault: () => {
        const fault = this.fault;
        this.fault = null;
        return fault;
      },
    });
    this.writer = new GroupCommitWriter({
      backend,
      description: this.description,
      logger,
      index: {
        session: (id) => {
          const row = this.stmt.selectSessionRow.get(id);
          if (!row) return undefined;
          const entry = this.verified(() => decodeSessionRow(row));
          // The row's last seq is as of its last summary; the log has the newest.
          return { ...entry, lastSeq: this.stmt.lastSeq.get(id)?.seq ?? entry.lastSeq };
        },
        hasMessage: (id, messageId) => this.hasMessage(id, messageId),
      },
    });
  }

  /** Run a read; remember damage it reports, so the next start checks the whole file. */
  private verified<T>(read: () => T): T {
    try {
      return read();
    } catch (e) {
      if (e instanceof StoreCorruptionError || errorCode(e).startsWith("SQLITE_CORRUPT")) this.damaged = true;
      throw e;
    }
  }

  private counted(row: LogRow): StoredRecord {
    const r = decodeLogRow(row);
    this.reads.records++;
    this.reads.envelopeBytes += r.envelope.length;
    return r;
  }

  // Store ------------------------------------------------------------------

  async close(): Promise<void> {
    await this.writer.close();
    // Vouch for the file only after a close with nothing amiss (see clean-close.ts).
    if (this.damaged || this.writer.hasFailed || !this.openReport.checkedOk) return;
    try {
      recordCleanClose(this.path);
    } catch {
      forgetCleanClose(this.path);
    }
  }

  append(records: LogRecord[], summaries?: readonly SessionSummary[], listRows?: readonly ListRow[]): Promise<void> {
    return this.writer.append(records, summaries, listRows);
  }

  indexSessions(entries: readonly { summary: SessionSummary; messageIds: readonly string[] }[]): Promise<void> {
    return this.writer.indexSessions(entries);
  }

  backfillListRows(rows: readonly ListRow[], complete = false): Promise<void> {
    return this.writer.backfillListRows(rows, complete);
  }

  listRowsBackfilled(): boolean {
    return this.backfilled;
  }

  onListRows(listener: (rows: readonly StoredListRow[]) => void): () => void {
    return this.writer.onListRows(listener);
  }

  readListRows(afterChange: number, limit: number): StoredListRow[] {
    this.ensureOpen();
    checkListPage(afterChange, limit);
    return this.verified(() => this.stmt.selectListRows.all(afterChange, limit).map(decodeListRow));
  }

  lastListChange(): number {
    this.ensureOpen();
    return this.listChange;
  }

  sessionsWithoutListRow(afterPosition: number, limit: number): SessionIndexEntry[] {
    this.ensureOpen();
    return this.verified(() => {
      const rows = this.stmt.sessionsWithoutListRow.all(afterPosition, Math.max(0, limit));
      this.reads.indexRows += rows.length;
      return rows.map(decodeSessionRow);
    });
  }

  putPolicy(policy: PolicyRecord): Promise<void> {
    return this.writer.putPolicy(policy);
  }

  deletePolicy(policyId: string): Promise<void> {
    return this.writer.deletePolicy(policyId);
  }

  loadAll(): StoredRecord[] {
    this.ensureOpen();
    return this.verified(() => {
      const verifier = new LogVerifier();
      const out: StoredRecord[] = [];
      for (const row of this.stmt.selectAll.iterate()) {
        const record = this.counted(row);
        verifier.check(record);
        out.push(record);
      }
      return out;
    });
  }

  readSession(sessionId: string, afterSeq: number, page?: ReadPage): StoredRecord[] {
    this.ensureOpen();
    checkAfterSeq(afterSeq);
    return this.verified(() => {
      let out: StoredRecord[];
      if (page === undefined) {
        out = this.stmt.selectSession.all(sessionId, afterSeq).map((row) => this.counted(row));
      } else {
        const maxBytes = page.maxBytes ?? Number.POSITIVE_INFINITY;
        const limit = Math.max(1, Math.min(page.maxRecords ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
        out = [];
        let bytes = 0;
        for (const row of this.stmt.selectSessionPage.iterate(sessionId, afterSeq, page.upToSeq ?? Number.MAX_SAFE_INTEGER, limit)) {
          const r = this.counted(row);
          out.push(r);
          bytes += r.envelope.length;
          if (bytes >= maxBytes) break;
        }
      }
      verifySessionRun(out, sessionId, afterSeq);
      return out;
    });
  }

  *sessionRecords(sessionId: string): IterableIterator<StoredRecord> {
    this.ensureOpen();
    // Envelopes (by seq) and annotations (by position) come from two indexes,
    // each read in bounded pages and merged by position; no statement stays
    // open across a yield, so the caller may use the store in between.
    const verifier = new LogVerifier();
    const envelopes = this.pages(
      (after) => this.readSession(sessionId, after, { maxRecords: RECORDS_PER_QUERY, maxBytes: BYTES_PER_QUERY }),
      (r) => r.seq,
    );
    const annotations = this.pages(
      (after) => this.verified(() => this.stmt.selectAnnotations.all(sessionId, after, RECORDS_PER_QUERY).map((row) => this.counted(row))),
      (r) => r.position,
    );
    let e = envelopes.next();
    let a = annotations.next();
    while (!e.done || !a.done) {
      const takeEnvelope = a.done || (!e.done && e.value.position < a.value.position);
      const r = (takeEnvelope ? e.value : a.value) as StoredRecord;
      if (r.sessionId !== sessionId) {
        this.damaged = true;
        throw new StoreCorruptionError(`log row at position ${r.position}: belongs to session ${r.sessionId}`, r.position);
      }
      this.verified(() => verifier.check(r));
      yield r;
      if (takeEnvelope) e = envelopes.next();
      else a = annotations.next();
    }
  }

  /**
   * Records one page at a time from `read(after)`, continuing after `key` of
   * the last one; a page with fewer than RECORDS_PER_QUERY records that did
   * not reach BYTES_PER_QUERY was the last.
   */
  private *pages(read: (after: number) => StoredRecord[], key: (r: StoredRecord) => number): Generator<StoredRecord, void, undefined> {
    for (let after = 0; ;) {
      const page = read(after);
      if (page.length === 0) return;
      yield* page;
      if (page.length < RECORDS_PER_QUERY && page.reduce((n, r) => n + r.envelope.length, 0) < BYTES_PER_QUERY) return;
      after = key(page[page.length - 1] as StoredRecord);
    }
  }

  getSession(sessionId: string): SessionIndexEntry | undefined {
    this.ensureOpen();
    return this.verified(() => {
      const row = this.stmt.selectSessionRow.get(sessionId);
      if (!row) return undefined;
      this.reads.indexRows++;
      return decodeSessionRow(row);
    });
  }

  listSessions(page: ListSessionsPage): SessionIndexEntry[] {
    this.ensureOpen();
    const stmt = page.residentOnly ? this.stmt.listResidentSessions : this.stmt.listSessions;
    return this.verified(() => {
      const rows = stmt.all(page.afterPosition, page.maxPosition ?? Number.MAX_SAFE_INTEGER, Math.max(0, page.limit));
      this.reads.indexRows += rows.length;
      return rows.map(decodeSessionRow);
    });
  }

  hasMessage(sessionId: string, messageId: string): boolean {
    this.ensureOpen();
    this.reads.messageLookups++;
    return this.verified(() => {
      const row = this.stmt.selectMessage.get(sessionId, messageId);
      if (!row) return false;
      const crc = messageCrc(sessionId, messageId);
      if (row.crc !== crc) {
        throw new StoreCorruptionError(
          `message index row (${sessionId}, ${messageId}): checksum mismatch (stored ${hex32(row.crc)}, computed ${hex32(crc)})`,
        );
      }
      return true;
    });
  }

  lastPosition(): number {
    this.ensureOpen();
    return this.stmt.lastPosition.get()?.last ?? 0;
  }

  loadPolicies(): PolicyRecord[] {
    this.ensureOpen();
    // SQLite already orders by BINARY (UTF-8 bytes); sorting again is cheap
    // and keeps the order identical to the memory store by construction.
    return this.verified(() =>
      this.stmt.selectPolicies
        .all()
        .map(decodePolicyRow)
        .sort((a, b) => compareUtf8(a.policyId, b.policyId)),
    );
  }

  stats(): StoreStats {
    return this.writer.stats();
  }

  readStats(): StoreReadStats {
    return { ...this.reads };
  }

  __failNextCommitForTests(error?: Error): void {
    this.fault = error ?? "constraint";
  }

  private ensureOpen(): void {
    if (this.writer.isClosed) throw new Error(`runtime store is closed (${this.description})`);
  }
}
