// The durable store: one SQLite file in WAL mode, written by a single
// connection with group commit (see writer.ts and index.ts for the why).
//
// Durability: `synchronous = FULL` makes SQLite fsync the WAL at every
// commit, so a transaction is on disk before `commit()` returns and before
// any append promise resolves. `locking_mode = EXCLUSIVE` takes the file lock
// at open and keeps it, so a second runtime pointed at the same folder fails
// to open instead of interleaving its writes (it also keeps the WAL index in
// process memory: no -shm file).
//
// Integrity: every row (log, session index, message ids, policies) carries a
// CRC-32 of its fields, checked on every read; reads check per-session seq
// continuity; `PRAGMA quick_check` runs at open unless the file is exactly as
// the last verified clean shutdown left it (clean-close.ts explains why and
// when). Any failure is a StoreCorruptionError, never a skipped row.
//
// Indexes (schema v2): `sessions` has one row per session (first position,
// and the kernel's summary as of the session's last change of state: status,
// last seq, last activity, metadata) and `messages` the message ids each
// session accepted; both are written in the same transaction as the log rows
// they describe. Per accepted envelope that is one log row, its
// `log_session_seq` entry and one `messages` row; the `sessions` row changes
// when the state does. A restart reads the `sessions_resident` partial index
// (open and suspended sessions only) and those sessions' records (envelopes
// through `log_session_seq`, annotations through the partial
// `log_session_annotations`); a closed session is answered from its
// `sessions` row, its history read page by page through `log_session_seq`,
// and a late resend recognised through `messages`.
//
// Crash recovery: if the previous process died mid-commit, the -wal file ends
// with frames of a transaction that has no valid commit frame (or with a torn
// frame). SQLite's WAL recovery replays only frames up to the last commit
// frame whose salts and cumulative checksum verify, so such a transaction
// disappears as a whole; that transaction had not been fsync'd, hence never
// acknowledged. We inspect the WAL before opening to report what happened,
// and refuse to open when committed transactions follow a damaged frame
// (wal.ts, wal-check.ts): SQLite would silently drop them.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import {
  asError,
  checkAfterSeq,
  checkListPage,
  compareUtf8,
  LogVerifier,
  noopLogger,
  verifySessionRun,
  type StoreLogger,
  type StoreStats,
} from "./common";
import { listRowCrc, messageCrc, policyCrc, recordCrc, sessionRowCrc } from "./row-crc";
import { type SessionDraft } from "./session-drafts";
import type { WalInspection } from "./wal";
import { checkWalBeforeOpen, logWalRecovery } from "./wal-check";
import { consumeCleanClose, forgetCleanClose, recordCleanClose, type TrustVerdict } from "./clean-close";
import { GroupCommitWriter, type CommitBackend, type StoreOp } from "./writer";
import { BUSY_TIMEOUT_MS, MIGRATIONS, SCHEMA_VERSION, SQL, SQLITE_FILE_NAME } from "./sqlite-schema";
import {
  decodeListRow,
  decodeLogRow,
  decodePolicyRow,
  decodeSessionRow,
  hex32,
  type ListRowRow,
  type LogRow,
  type PolicyRow,
  type SessionRow,
} from "./sqlite-rows";
import {
  isResidentStatus,
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

export { SCHEMA_VERSION, SQL, SQLITE_FILE_NAME } from "./sqlite-schema";

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

export interface SqliteStoreOptions {
  /** Folder for the database; created (mode 0700) if missing. */
  dir: string;
  logger?: StoreLogger;
  /**
   * "auto" (default): PRAGMA quick_check at open unless the file is unchanged
   * since a verified clean shutdown; "always": at every open.
   */
  integrityCheck?: "auto" | "always";
}

function errorCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

/** Pragmas, integrity check and schema migration. Throws on any problem. */
function prepareDatabase(
  db: Database.Database,
  file: string,
  trust: TrustVerdict,
): { schemaVersion: number; modes: Record<string, string>; quickCheck: SqliteOpenReport["quickCheck"] } {
  // Order matters: EXCLUSIVE must be set before the first access in WAL mode.
  const lockingMode = String(db.pragma("locking_mode = EXCLUSIVE", { simple: true }));
  const journalMode = String(db.pragma("journal_mode = WAL", { simple: true }));
  if (journalMode !== "wal") {
    throw new Error(`runtime store ${file}: could not switch to WAL journal mode (got "${journalMode}")`);
  }
  db.pragma("synchronous = FULL");
  // macOS: fsync() does not flush the drive's cache, F_FULLFSYNC does. No-op elsewhere.
  db.pragma("fullfsync = ON");
  db.pragma("checkpoint_fullfsync = ON");
  // Keep a WAL that grew during a large burst from staying large after checkpoint.
  db.pragma("journal_size_limit = 67108864");
  const syncLevel = Number(db.pragma("synchronous", { simple: true }));
  const synchronous = ["OFF", "NORMAL", "FULL", "EXTRA"][syncLevel] ?? String(syncLevel);
  if (syncLevel < 2) throw new Error(`runtime store ${file}: synchronous is ${synchronous}, expected FULL`);

  const checkStarted = performance.now();
  if (!trust.trusted) {
    const problems = (db.pragma("quick_check") as Array<Record<string, unknown>>).map((r) => String(Object.values(r)[0]));
    if (problems.length !== 1 || problems[0] !== "ok") {
      throw new StoreCorruptionError(`runtime store ${file}: PRAGMA quick_check failed: ${problems.join("; ")}`);
    }
  } else {
    // Still make SQLite read and parse the schema now, so a file that is not
    // a database at all fails here rather than at the first query.
    db.prepare("SELECT COUNT(*) FROM sqlite_schema").get();
  }
  const quickCheck = { ran: !trust.trusted, reason: trust.reason, ms: Math.round(performance.now() - checkStarted) };

  // BEGIN IMMEDIATE takes the write lock now; with EXCLUSIVE locking it is
  // held until close, so no other process can write this file meanwhile.
  const migrate = db.transaction((): number => {
    const from = Number(db.pragma("user_version", { simple: true }));
    if (!Number.isInteger(from) || from < 0 || from > SCHEMA_VERSION) {
      throw new Error(
        `runtime store ${file}: schema version ${from} is newer than this build supports (${SCHEMA_VERSION}); ` +
          "upgrade Baton or point it at another data folder",
      );
    }
    for (let v = from; v < MIGRATIONS.length; v++) {
      const step = MIGRATIONS[v] as string | ((d: Database.Database) => void);
      if (typeof step === "string") db.exec(step);
      else step(db);
      db.pragma(`user_version = ${v + 1}`);
    }
    return SCHEMA_VERSION;
  });
  const schemaVersion = migrate.immediate();
  return { schemaVersion, modes: { journalMode, synchronous, lockingMode }, quickCheck };
}

/** Records per query when a session's records are read in pages. */
const RECORDS_PER_QUERY = 64;
/** Bytes of envelopes per query when a session's records are read in pages. */
const BYTES_PER_QUERY = 1_048_576;

class SqliteStoreImpl implements SqliteStore {
  readonly description: string;
  readonly path: string;
  readonly openReport: SqliteOpenReport;
  private readonly writer: GroupCommitWriter;
  private fault: Error | "constraint" | null = null;
  /** Set when any read or commit saw damage: the next start must run quick_check. */
  private damaged = false;
  private readonly reads: StoreReadStats = { indexRows: 0, records: 0, envelopeBytes: 0, messageLookups: 0 };
  private readonly stmt: {
    insertLog: Database.Statement<[string, string, number, number, Uint8Array, Uint8Array | null, number]>;
    selectAll: Database.Statement<[], LogRow>;
    selectSession: Database.Statement<[string, number], LogRow>;
    selectSessionPage: Database.Statement<[string, number, number, number], LogRow>;
    selectAnnotations: Database.Statement<[string, number, number], LogRow>;
    lastSeq: Database.Statement<[string], { seq: number }>;
    lastPosition: Database.Statement<[], { last: number }>;
    bumpRecords: Database.Statement<[number]>;
    insertSession: Database.Statement<[string, number, number, string | null, number, number, Uint8Array | null, number]>;
    updateSession: Database.Statement<[number, string | null, number, Uint8Array | null, number, string]>;
    updateSessionResidency: Database.Statement<[number, string | null, number, number, Uint8Array | null, number, string]>;
    selectSessionRow: Database.Statement<[string], SessionRow>;
    listSessions: Database.Statement<[number, number, number], SessionRow>;
    listResidentSessions: Database.Statement<[number, number, number], SessionRow>;
    insertMessage: Database.Statement<[string, string, number]>;
    selectMessage: Database.Statement<[string, string], { crc: number }>;
    upsertPolicy: Database.Statement<[string, Uint8Array, number]>;
    deletePolicy: Database.Statement<[string]>;
    selectPolicies: Database.Statement<[], PolicyRow>;
    upsertListRow: Database.Statement<[string, number, number, Uint8Array, string, number]>;
    insertListRowIfMissing: Database.Statement<[string, number, number, Uint8Array, string, number]>;
    selectListRows: Database.Statement<[number, number], ListRowRow>;
    setListChange: Database.Statement<[number]>;
    setMeta: Database.Statement<[string, string]>;
    sessionsWithoutListRow: Database.Statement<[number, number], SessionRow>;
  };
  readonly storeId: string;
  /** Highest change committed. */
  private listChange: number;
  private backfilled: boolean;

  constructor(db: Database.Database, file: string, report: SqliteOpenReport, logger: StoreLogger) {
    this.path = file;
    this.description = `sqlite ${file}`;
    this.openReport = report;
    this.stmt = {
      insertLog: db.prepare(SQL.insertLog),
      selectAll: db.prepare(SQL.selectAll),
      selectSession: db.prepare(SQL.selectSession),
      selectSessionPage: db.prepare(SQL.selectSessionPage),
      selectAnnotations: db.prepare(SQL.selectAnnotations),
      lastSeq: db.prepare(SQL.lastSeq),
      lastPosition: db.prepare(SQL.lastPosition),
      bumpRecords: db.prepare(SQL.bumpRecords),
      insertSession: db.prepare(SQL.insertSession),
      updateSession: db.prepare(SQL.updateSession),
      updateSessionResidency: db.prepare(SQL.updateSessionResidency),
      selectSessionRow: db.prepare(SQL.selectSessionRow),
      listSessions: db.prepare(SQL.listSessions),
      listResidentSessions: db.prepare(SQL.listResidentSessions),
      insertMessage: db.prepare(SQL.insertMessage),
      selectMessage: db.prepare(SQL.selectMessage),
      upsertPolicy: db.prepare(SQL.upsertPolicy),
      deletePolicy: db.prepare(SQL.deletePolicy),
      selectPolicies: db.prepare(SQL.selectPolicies),
      upsertListRow: db.prepare(SQL.upsertListRow),
      insertListRowIfMissing: db.prepare(SQL.insertListRowIfMissing),
      selectListRows: db.prepare(SQL.selectListRows),
      setListChange: db.prepare(SQL.setListChange),
      setMeta: db.prepare(SQL.setMeta),
      sessionsWithoutListRow: db.prepare(SQL.sessionsWithoutListRow),
    };
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
    const tx = db.transaction((ops: readonly StoreOp[], sessions: readonly SessionDraft[]) => {
      const firstPositions = new Map<string, number>();
      let records = 0;
      let change = this.listChange;
      let complete = false;
      const written: StoredListRow[] = [];
      const writeRow = (row: ListRow, onlyIfMissing: boolean) => {
        const stored: StoredListRow = { ...row, change: change + 1 };
        const stmt = onlyIfMissing ? this.stmt.insertListRowIfMissing : this.stmt.upsertListRow;
        const info = stmt.run(
          row.sessionId,
          stored.change,
          row.final ? 1 : 0,
          row.summary,
          JSON.stringify(row.nextActors),
          listRowCrc(stored),
        );
        if (info.changes === 0) return;
        change = stored.change;
        written.push(stored);
      };
      for (const op of ops) {
        if (op.type === "append") {
          for (const r of op.records) {
            const position = this.insert(r);
            records++;
            if (!firstPositions.has(r.sessionId)) firstPositions.set(r.sessionId, position);
            if (r.messageId) this.stmt.insertMessage.run(r.sessionId, r.messageId, messageCrc(r.sessionId, r.messageId));
          }
          for (const row of op.listRows) writeRow(row, false);
        } else if (op.type === "backfillListRows") {
          for (const row of op.rows) writeRow(row, true);
          if (op.complete) complete = true;
        } else if (op.type === "index") {
          for (const [sessionId, messageId] of op.messages) {
            this.stmt.insertMessage.run(sessionId, messageId, messageCrc(sessionId, messageId));
          }
        } else if (op.type === "putPolicy") {
          this.stmt.upsertPolicy.run(op.policy.policyId, op.policy.descriptor, policyCrc(op.policy));
        } else {
          this.stmt.deletePolicy.run(op.policyId);
        }
      }
      for (const d of sessions) {
        const before = d.committed;
        if (before && !d.summarised) continue; // no new summary: the row stays as it is
        if (!d.firstPosition) d.firstPosition = firstPositions.get(d.sessionId) ?? 0;
        const entry: SessionIndexEntry = {
          sessionId: d.sessionId,
          firstPosition: d.firstPosition,
          lastSeq: d.lastSeq,
          status: d.status,
          activityMs: d.activityMs,
          metadata: d.metadata,
        };
        const crc = sessionRowCrc(entry);
        const resident = isResidentStatus(entry.status);
        if (!before) {
          this.stmt.insertSession.run(
            entry.sessionId,
            entry.firstPosition,
            entry.lastSeq,
            entry.status,
            resident ? 1 : 0,
            entry.activityMs,
            entry.metadata,
            crc,
          );
        } else if (isResidentStatus(before.status) !== resident) {
          this.stmt.updateSessionResidency.run(
            entry.lastSeq,
            entry.status,
            resident ? 1 : 0,
            entry.activityMs,
            entry.metadata,
            crc,
            entry.sessionId,
          );
        } else {
          this.stmt.updateSession.run(entry.lastSeq, entry.status, entry.activityMs, entry.metadata, crc, entry.sessionId);
        }
      }
      if (records > 0) this.stmt.bumpRecords.run(records);
      if (change !== this.listChange) this.stmt.setListChange.run(change);
      if (complete) this.stmt.setMeta.run("1", "list_rows_backfilled");
      const fault = this.fault;
      if (fault !== null) {
        this.fault = null;
        if (fault === "constraint") db.prepare(SQL.testFault).run();
        else throw fault;
      }
      return { written, change, complete };
    });
    const backend: CommitBackend = {
      commit: (ops, sessions) => {
        const done = tx.immediate(ops, sessions);
        // Only once the transaction committed: a rolled-back batch assigned nothing.
        this.listChange = done.change;
        if (done.complete) this.backfilled = true;
        return done.written;
      },
      close: () => {
        if (db.open) db.close();
      },
    };
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

  private insert(r: LogRecord): number {
    const info = this.stmt.insertLog.run(r.sessionId, r.kind, r.seq, r.recvMs, r.envelope, r.boundPolicy ?? null, recordCrc(r));
    return Number(info.lastInsertRowid);
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

function closeDb(db: Database.Database): void {
  if (db.open) db.close();
}

export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const logger = options.logger ?? noopLogger;
  const dir = path.resolve(options.dir);
  const createdDir = fs.mkdirSync(dir, { recursive: true, mode: 0o700 }) !== undefined;
  if (!createdDir && (fs.statSync(dir).mode & 0o077) !== 0) {
    logger.warn({ dir }, "runtime store: data folder is accessible to other users; expected mode 0700");
  }
  const file = path.join(dir, SQLITE_FILE_NAME);
  const created = !fs.existsSync(file);
  // Must happen before SQLite opens the file and replays/checkpoints the WAL:
  // throws WalDamageError if that would drop committed transactions.
  const wal = checkWalBeforeOpen(file);
  // Before SQLite touches the file: is it exactly as a verified clean shutdown left it?
  const verdict = consumeCleanClose(file);
  const trust: TrustVerdict =
    options.integrityCheck === "always" ? { trusted: false, reason: "MACP_STORE_INTEGRITY_CHECK=always" } : verdict;

  let db: Database.Database;
  let prepared: ReturnType<typeof prepareDatabase>;
  try {
    db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  } catch (e) {
    throw new Error(`runtime store: cannot open ${file}: ${asError(e).message}`, { cause: e });
  }
  try {
    prepared = prepareDatabase(db, file, trust);
  } catch (e) {
    closeDb(db);
    const code = errorCode(e);
    if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
      throw new Error(`runtime store ${file} is in use by another process (is another Baton runtime running?)`, {
        cause: e,
      });
    }
    if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") {
      throw new StoreCorruptionError(`runtime store ${file} is damaged: ${asError(e).message}`);
    }
    throw e;
  }

  let store: SqliteStoreImpl;
  try {
    const summary = db.prepare<[], { n: number; last: number }>(SQL.logSummary).get();
    const policies = db.prepare<[], { n: number }>(SQL.countPolicies).get();
    const report: SqliteOpenReport = {
      path: file,
      created,
      walBytesBefore: wal?.bytes ?? 0,
      wal,
      recoveredRecords: summary?.n ?? 0,
      lastPosition: summary?.last ?? 0,
      policies: policies?.n ?? 0,
      checkedOk: true,
      quickCheck: prepared.quickCheck,
      schemaVersion: prepared.schemaVersion,
      journalMode: prepared.modes.journalMode ?? "",
      synchronous: prepared.modes.synchronous ?? "",
      lockingMode: prepared.modes.lockingMode ?? "",
    };
    store = new SqliteStoreImpl(db, file, report, logger);
  } catch (e) {
    closeDb(db);
    throw e;
  }
  const r = store.openReport;
  if (wal && wal.bytes > 0) {
    logWalRecovery(logger, file, wal, { records: r.recoveredRecords, lastPosition: r.lastPosition });
  } else {
    logger.info(
      {
        path: file,
        created,
        records: r.recoveredRecords,
        lastPosition: r.lastPosition,
        policies: r.policies,
        quickCheck: r.quickCheck.ran ? `ran (${r.quickCheck.ms} ms): ${r.quickCheck.reason}` : `skipped: ${r.quickCheck.reason}`,
      },
      "runtime store: opened",
    );
  }
  return store;
}
