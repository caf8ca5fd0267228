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
// Integrity: every row carries a CRC-32 of its fields, checked on every read;
// open runs `PRAGMA quick_check`; full scans check positions and per-session
// seq continuity. Any failure is a StoreCorruptionError, never a skipped row.
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
  compareUtf8,
  isRecordKind,
  LogVerifier,
  noopLogger,
  policyCrc,
  recordCrc,
  verifySessionRun,
  type StoreLogger,
  type StoreStats,
} from "./common";
import type { WalInspection } from "./wal";
import { checkWalBeforeOpen, logWalRecovery } from "./wal-check";
import { GroupCommitWriter, type CommitBackend, type StoreOp } from "./writer";
import { StoreCorruptionError, type LogRecord, type PolicyRecord, type Store, type StoredRecord } from "./types";

export const SQLITE_FILE_NAME = "baton-runtime.sqlite";
/** How long open() waits for another process holding the database. */
const BUSY_TIMEOUT_MS = 1000;

/** migrations[i] takes the schema from user_version i to i + 1. */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE log (
    position     INTEGER PRIMARY KEY,
    session_id   TEXT    NOT NULL CHECK (length(session_id) > 0),
    kind         TEXT    NOT NULL CHECK (kind IN ('envelope', 'cancel', 'suspend', 'resume', 'expire')),
    seq          INTEGER NOT NULL CHECK (seq >= 0),
    recv_ms      INTEGER NOT NULL CHECK (recv_ms >= 0),
    envelope     BLOB    NOT NULL,
    bound_policy BLOB,
    crc          INTEGER NOT NULL CHECK (crc BETWEEN 0 AND 4294967295),
    CHECK ((kind = 'envelope') = (seq > 0))
  ) STRICT;
  -- One row per (session, seq) among accepted envelopes; annotations (seq 0)
  -- are not in this index. readSession() reads through it.
  CREATE UNIQUE INDEX log_session_seq ON log (session_id, seq) WHERE kind = 'envelope';
  CREATE TABLE policies (
    policy_id  TEXT    PRIMARY KEY NOT NULL CHECK (length(policy_id) > 0),
    descriptor BLOB    NOT NULL,
    crc        INTEGER NOT NULL CHECK (crc BETWEEN 0 AND 4294967295)
  ) STRICT;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

const LOG_COLUMNS = "position, session_id, kind, seq, recv_ms, envelope, bound_policy, crc";

/** SQL text of the statements, exported so tests can EXPLAIN them. */
export const SQL = {
  insertLog:
    "INSERT INTO log (session_id, kind, seq, recv_ms, envelope, bound_policy, crc) VALUES (?, ?, ?, ?, ?, ?, ?)",
  selectAll: `SELECT ${LOG_COLUMNS} FROM log ORDER BY position`,
  selectSession: `SELECT ${LOG_COLUMNS} FROM log WHERE session_id = ? AND kind = 'envelope' AND seq > ? ORDER BY seq`,
  lastSeqs: "SELECT session_id, MAX(seq) AS seq FROM log WHERE kind = 'envelope' GROUP BY session_id",
  logSummary: "SELECT COUNT(*) AS n, COALESCE(MAX(position), 0) AS last FROM log",
  countPolicies: "SELECT COUNT(*) AS n FROM policies",
  upsertPolicy:
    "INSERT INTO policies (policy_id, descriptor, crc) VALUES (?, ?, ?) " +
    "ON CONFLICT (policy_id) DO UPDATE SET descriptor = excluded.descriptor, crc = excluded.crc",
  deletePolicy: "DELETE FROM policies WHERE policy_id = ?",
  selectPolicies: "SELECT policy_id, descriptor, crc FROM policies ORDER BY policy_id",
  /** Violates the kind CHECK: used only by __failNextCommitForTests. */
  testFault:
    "INSERT INTO log (session_id, kind, seq, recv_ms, envelope, bound_policy, crc) " +
    "VALUES ('__test_fault__', '__test_fault__', 0, 0, X'', NULL, 0)",
} as const;

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
  /** PRAGMA quick_check returned "ok" (open throws otherwise). */
  checkedOk: boolean;
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
}

interface LogRow {
  position: number;
  session_id: string;
  kind: string;
  seq: number;
  recv_ms: number;
  envelope: Buffer;
  bound_policy: Buffer | null;
  crc: number;
}

interface PolicyRow {
  policy_id: string;
  descriptor: Buffer;
  crc: number;
}

function view(buf: Buffer): Uint8Array {
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

function hex32(n: number): string {
  return `0x${(n >>> 0).toString(16).padStart(8, "0")}`;
}

/** Turn a row into a record, checking its types and CRC. */
function decodeLogRow(row: LogRow): StoredRecord {
  const p = row.position;
  if (
    typeof row.session_id !== "string" ||
    !isRecordKind(row.kind) ||
    typeof row.seq !== "number" ||
    typeof row.recv_ms !== "number" ||
    !Buffer.isBuffer(row.envelope) ||
    (row.bound_policy !== null && !Buffer.isBuffer(row.bound_policy)) ||
    typeof row.crc !== "number"
  ) {
    throw new StoreCorruptionError(`log row at position ${p}: unexpected column types or kind`, p);
  }
  const record: StoredRecord = {
    position: p,
    sessionId: row.session_id,
    kind: row.kind,
    seq: row.seq,
    recvMs: row.recv_ms,
    envelope: view(row.envelope),
  };
  if (row.bound_policy !== null) record.boundPolicy = view(row.bound_policy);
  const crc = recordCrc(record);
  if (crc !== row.crc) {
    throw new StoreCorruptionError(
      `log row at position ${p} (session ${row.session_id}, seq ${row.seq}): checksum mismatch ` +
        `(stored ${hex32(row.crc)}, computed ${hex32(crc)})`,
      p,
    );
  }
  return record;
}

function decodePolicyRow(row: PolicyRow): PolicyRecord {
  if (typeof row.policy_id !== "string" || !Buffer.isBuffer(row.descriptor) || typeof row.crc !== "number") {
    throw new StoreCorruptionError(`policy ${String(row.policy_id)}: unexpected column types`);
  }
  const policy: PolicyRecord = { policyId: row.policy_id, descriptor: view(row.descriptor) };
  const crc = policyCrc(policy);
  if (crc !== row.crc) {
    throw new StoreCorruptionError(
      `policy ${row.policy_id}: checksum mismatch (stored ${hex32(row.crc)}, computed ${hex32(crc)})`,
    );
  }
  return policy;
}

function errorCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}

/** Pragmas, integrity check and schema migration. Throws on any problem. */
function prepareDatabase(db: Database.Database, file: string): { schemaVersion: number; modes: Record<string, string> } {
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

  const problems = (db.pragma("quick_check") as Array<Record<string, unknown>>).map((r) =>
    String(Object.values(r)[0]),
  );
  if (problems.length !== 1 || problems[0] !== "ok") {
    throw new StoreCorruptionError(`runtime store ${file}: PRAGMA quick_check failed: ${problems.join("; ")}`);
  }

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
      db.exec(MIGRATIONS[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    }
    return SCHEMA_VERSION;
  });
  const schemaVersion = migrate.immediate();
  return { schemaVersion, modes: { journalMode, synchronous, lockingMode } };
}

class SqliteStoreImpl implements SqliteStore {
  readonly description: string;
  readonly path: string;
  readonly openReport: SqliteOpenReport;
  private readonly writer: GroupCommitWriter;
  private fault: Error | "constraint" | null = null;
  private readonly stmt: {
    insertLog: Database.Statement<[string, string, number, number, Uint8Array, Uint8Array | null, number]>;
    selectAll: Database.Statement<[], LogRow>;
    selectSession: Database.Statement<[string, number], LogRow>;
    upsertPolicy: Database.Statement<[string, Uint8Array, number]>;
    deletePolicy: Database.Statement<[string]>;
    selectPolicies: Database.Statement<[], PolicyRow>;
  };

  constructor(db: Database.Database, file: string, report: SqliteOpenReport, logger: StoreLogger) {
    this.path = file;
    this.description = `sqlite ${file}`;
    this.openReport = report;
    this.stmt = {
      insertLog: db.prepare(SQL.insertLog),
      selectAll: db.prepare(SQL.selectAll),
      selectSession: db.prepare(SQL.selectSession),
      upsertPolicy: db.prepare(SQL.upsertPolicy),
      deletePolicy: db.prepare(SQL.deletePolicy),
      selectPolicies: db.prepare(SQL.selectPolicies),
    };
    const tx = db.transaction((ops: readonly StoreOp[]) => {
      for (const op of ops) {
        if (op.type === "append") {
          for (const r of op.records) this.insert(r);
        } else if (op.type === "putPolicy") {
          this.stmt.upsertPolicy.run(op.policy.policyId, op.policy.descriptor, policyCrc(op.policy));
        } else {
          this.stmt.deletePolicy.run(op.policyId);
        }
      }
      const fault = this.fault;
      if (fault !== null) {
        this.fault = null;
        if (fault === "constraint") db.prepare(SQL.testFault).run();
        else throw fault;
      }
    });
    const backend: CommitBackend = {
      commit: (ops) => tx.immediate(ops),
      close: () => {
        if (db.open) db.close();
      },
    };
    const lastSeqs = db
      .prepare<[], { session_id: string; seq: number }>(SQL.lastSeqs)
      .all()
      .map((r) => [r.session_id, r.seq] as const);
    this.writer = new GroupCommitWriter({ backend, description: this.description, logger, lastSeqs });
  }

  private insert(r: LogRecord): void {
    this.stmt.insertLog.run(r.sessionId, r.kind, r.seq, r.recvMs, r.envelope, r.boundPolicy ?? null, recordCrc(r));
  }

  // Store ------------------------------------------------------------------

  close(): Promise<void> {
    return this.writer.close();
  }

  append(records: LogRecord[]): Promise<void> {
    return this.writer.append(records);
  }

  putPolicy(policy: PolicyRecord): Promise<void> {
    return this.writer.putPolicy(policy);
  }

  deletePolicy(policyId: string): Promise<void> {
    return this.writer.deletePolicy(policyId);
  }

  loadAll(): StoredRecord[] {
    this.ensureOpen();
    const verifier = new LogVerifier();
    const out: StoredRecord[] = [];
    for (const row of this.stmt.selectAll.iterate()) {
      const record = decodeLogRow(row);
      verifier.check(record);
      out.push(record);
    }
    return out;
  }

  readSession(sessionId: string, afterSeq: number): StoredRecord[] {
    this.ensureOpen();
    checkAfterSeq(afterSeq);
    const out = this.stmt.selectSession.all(sessionId, afterSeq).map(decodeLogRow);
    verifySessionRun(out, sessionId, afterSeq);
    return out;
  }

  loadPolicies(): PolicyRecord[] {
    this.ensureOpen();
    // SQLite already orders by BINARY (UTF-8 bytes); sorting again is cheap
    // and keeps the order identical to the memory store by construction.
    return this.stmt.selectPolicies.all().map(decodePolicyRow).sort((a, b) => compareUtf8(a.policyId, b.policyId));
  }

  stats(): StoreStats {
    return this.writer.stats();
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

  let db: Database.Database;
  let prepared: ReturnType<typeof prepareDatabase>;
  try {
    db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  } catch (e) {
    throw new Error(`runtime store: cannot open ${file}: ${asError(e).message}`, { cause: e });
  }
  try {
    prepared = prepareDatabase(db, file);
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
      { path: file, created, records: r.recoveredRecords, lastPosition: r.lastPosition, policies: r.policies },
      "runtime store: opened",
    );
  }
  return store;
}
