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
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import {
  asError,
  checkAfterSeq,
  checkListPage,
  compareUtf8,
  isRecordKind,
  isSessionStatus,
  listRowCrc,
  LogVerifier,
  messageCrc,
  noopLogger,
  policyCrc,
  recordCrc,
  sessionRowCrc,
  verifySessionRun,
  type SessionDraft,
  type StoreLogger,
  type StoreStats,
} from "./common";
import type { WalInspection } from "./wal";
import { checkWalBeforeOpen, logWalRecovery } from "./wal-check";
import { consumeCleanClose, forgetCleanClose, recordCleanClose, type TrustVerdict } from "./clean-close";
import { GroupCommitWriter, type CommitBackend, type StoreOp } from "./writer";
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

export const SQLITE_FILE_NAME = "baton-runtime.sqlite";
/** How long open() waits for another process holding the database. */
const BUSY_TIMEOUT_MS = 1000;

/** migrations[i] takes the schema from user_version i to i + 1 (SQL text, or a step run in the same transaction). */
const MIGRATIONS: readonly (string | ((db: Database.Database) => void))[] = [
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
  migrateToV2,
  migrateToV3,
];

/**
 * v2 → v3: the list rows (each session's console row, numbered by a
 * store-wide change counter), the store's identity, and whether every
 * session has a list row. A store created at v3 has; one migrated from v2
 * with sessions has not: the kernel folds the missing rows in the background
 * after it starts (Kernel.backfillListRows) and then marks it done.
 */
function migrateToV3(db: Database.Database): void {
  db.exec(`
  CREATE TABLE list_rows (
    session_id  TEXT    PRIMARY KEY NOT NULL CHECK (length(session_id) > 0),
    change      INTEGER NOT NULL UNIQUE CHECK (change > 0),
    final       INTEGER NOT NULL CHECK (final IN (0, 1)),
    -- Binary baton.v1.SessionSummary.
    summary     BLOB    NOT NULL,
    -- JSON array of participant ids.
    next_actors TEXT    NOT NULL,
    crc         INTEGER NOT NULL CHECK (crc BETWEEN 0 AND 4294967295)
  ) STRICT;
  CREATE TABLE store_meta (
    name  TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
  INSERT INTO counters (name, value) VALUES ('list_change', 0);
  `);
  const insert = db.prepare("INSERT INTO store_meta (name, value) VALUES (?, ?)");
  insert.run("store_id", randomUUID());
  const sessions = db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM sessions").get()?.n ?? 0;
  insert.run("list_rows_backfilled", sessions === 0 ? "1" : "0");
}

/**
 * v1 → v2: the session index, the message-id index, the record counter and a
 * (session, position) index on the log. Existing sessions get rows with their
 * first position and last seq but no summary (status NULL): the kernel
 * replays them once at its next start, writes their summaries and message
 * ids, and from then on restarts read only open and suspended sessions.
 */
function migrateToV2(db: Database.Database): void {
  db.exec(`
  -- Annotations (cancel, suspend, resume, expire) of a session in order; envelopes are in log_session_seq.
  CREATE INDEX log_session_annotations ON log (session_id, position) WHERE kind <> 'envelope';
  CREATE TABLE sessions (
    session_id     TEXT    PRIMARY KEY NOT NULL CHECK (length(session_id) > 0),
    first_position INTEGER NOT NULL UNIQUE CHECK (first_position > 0),
    last_seq       INTEGER NOT NULL CHECK (last_seq >= 0),
    status         TEXT    CHECK (status IN ('open', 'suspended', 'resolved', 'expired', 'cancelled')),
    resident       INTEGER NOT NULL CHECK (resident = (status IS NULL OR status IN ('open', 'suspended'))),
    activity_ms    INTEGER NOT NULL CHECK (activity_ms >= 0),
    metadata       BLOB    CHECK ((metadata IS NULL) = (status IS NULL)),
    crc            INTEGER NOT NULL CHECK (crc BETWEEN 0 AND 4294967295)
  ) STRICT;
  -- What a restart rebuilds: open, suspended and not yet summarised sessions.
  CREATE INDEX sessions_resident ON sessions (first_position) WHERE resident = 1;
  CREATE TABLE messages (
    session_id TEXT    NOT NULL,
    message_id TEXT    NOT NULL CHECK (length(message_id) > 0),
    crc        INTEGER NOT NULL CHECK (crc BETWEEN 0 AND 4294967295),
    PRIMARY KEY (session_id, message_id)
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE counters (
    name  TEXT    PRIMARY KEY NOT NULL,
    value INTEGER NOT NULL CHECK (value >= 0)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO counters (name, value) VALUES ('records', (SELECT COUNT(*) FROM log));
  `);
  const page = db.prepare<[string], { session_id: string; first: number; last_seq: number }>(
    "SELECT session_id, MIN(position) AS first, MAX(seq) AS last_seq FROM log " +
      "WHERE session_id > ? GROUP BY session_id ORDER BY session_id LIMIT 1000",
  );
  const insert = db.prepare(SQL.insertSession);
  for (let after = ""; ; ) {
    const rows = page.all(after);
    if (rows.length === 0) break;
    for (const r of rows) {
      const entry: SessionIndexEntry = {
        sessionId: r.session_id,
        firstPosition: r.first,
        lastSeq: r.last_seq,
        status: null,
        activityMs: 0,
        metadata: null,
      };
      insert.run(r.session_id, r.first, r.last_seq, null, 1, 0, null, sessionRowCrc(entry));
    }
    after = (rows[rows.length - 1] as { session_id: string }).session_id;
  }
}

export const SCHEMA_VERSION = MIGRATIONS.length;

const LOG_COLUMNS = "position, session_id, kind, seq, recv_ms, envelope, bound_policy, crc";
const SESSION_COLUMNS = "session_id, first_position, last_seq, status, activity_ms, metadata, crc";

/** SQL text of the statements, exported so tests can EXPLAIN them. */
export const SQL = {
  insertLog:
    "INSERT INTO log (session_id, kind, seq, recv_ms, envelope, bound_policy, crc) VALUES (?, ?, ?, ?, ?, ?, ?)",
  selectAll: `SELECT ${LOG_COLUMNS} FROM log ORDER BY position`,
  selectSession: `SELECT ${LOG_COLUMNS} FROM log WHERE session_id = ? AND kind = 'envelope' AND seq > ? ORDER BY seq`,
  /** One page of history: (session, afterSeq, upToSeq, limit). */
  selectSessionPage:
    `SELECT ${LOG_COLUMNS} FROM log WHERE session_id = ? AND kind = 'envelope' AND seq > ? AND seq <= ? ` +
    "ORDER BY seq LIMIT ?",
  /** Every record of one session after a position: (session, afterPosition, limit). */
  /** A session's annotations after a position: (session, afterPosition, limit). */
  selectAnnotations:
    `SELECT ${LOG_COLUMNS} FROM log WHERE session_id = ? AND kind <> 'envelope' AND position > ? ORDER BY position LIMIT ?`,
  /** The last accepted seq of a session, from log_session_seq. */
  lastSeq: "SELECT COALESCE(MAX(seq), 0) AS seq FROM log WHERE session_id = ? AND kind = 'envelope'",
  logSummary: "SELECT COALESCE(MAX(position), 0) AS last, (SELECT value FROM counters WHERE name = 'records') AS n FROM log",
  lastPosition: "SELECT COALESCE(MAX(position), 0) AS last FROM log",
  bumpRecords: "UPDATE counters SET value = value + ? WHERE name = 'records'",
  insertSession:
    "INSERT INTO sessions (session_id, first_position, last_seq, status, resident, activity_ms, metadata, crc) " +
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  /** A row whose residency does not change: the indexes on first_position stay untouched. */
  updateSession: "UPDATE sessions SET last_seq = ?, status = ?, activity_ms = ?, metadata = ?, crc = ? WHERE session_id = ?",
  updateSessionResidency:
    "UPDATE sessions SET last_seq = ?, status = ?, resident = ?, activity_ms = ?, metadata = ?, crc = ? WHERE session_id = ?",
  selectSessionRow: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE session_id = ?`,
  /** (afterPosition, maxPosition, limit) */
  listSessions:
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE first_position > ? AND first_position <= ? ` +
    "ORDER BY first_position LIMIT ?",
  /** (afterPosition, maxPosition, limit), through the sessions_resident partial index. */
  listResidentSessions:
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE resident = 1 AND first_position > ? AND first_position <= ? ` +
    "ORDER BY first_position LIMIT ?",
  insertMessage: "INSERT INTO messages (session_id, message_id, crc) VALUES (?, ?, ?)",
  selectMessage: "SELECT crc FROM messages WHERE session_id = ? AND message_id = ?",
  /** (session, change, final, summary, next_actors, crc): a session's newest row. */
  upsertListRow:
    "INSERT INTO list_rows (session_id, change, final, summary, next_actors, crc) VALUES (?, ?, ?, ?, ?, ?) " +
    "ON CONFLICT (session_id) DO UPDATE SET change = excluded.change, final = excluded.final, summary = excluded.summary, " +
    "next_actors = excluded.next_actors, crc = excluded.crc",
  /** The same for the backfill: a session that has a row keeps it. */
  insertListRowIfMissing:
    "INSERT INTO list_rows (session_id, change, final, summary, next_actors, crc) VALUES (?, ?, ?, ?, ?, ?) " +
    "ON CONFLICT (session_id) DO NOTHING",
  /** (afterChange, limit), through the unique index on change. */
  selectListRows: "SELECT session_id, change, final, summary, next_actors, crc FROM list_rows WHERE change > ? ORDER BY change LIMIT ?",
  listChange: "SELECT value FROM counters WHERE name = 'list_change'",
  setListChange: "UPDATE counters SET value = ? WHERE name = 'list_change'",
  selectMeta: "SELECT value FROM store_meta WHERE name = ?",
  setMeta: "UPDATE store_meta SET value = ? WHERE name = ?",
  /** (afterPosition, limit): sessions with no list row, in the order they started. */
  sessionsWithoutListRow:
    `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE first_position > ? ` +
    "AND NOT EXISTS (SELECT 1 FROM list_rows l WHERE l.session_id = s.session_id) ORDER BY first_position LIMIT ?",
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

interface SessionRow {
  session_id: string;
  first_position: number;
  last_seq: number;
  status: string | null;
  activity_ms: number;
  metadata: Buffer | null;
  crc: number;
}

interface ListRowRow {
  session_id: string;
  change: number;
  final: number;
  summary: Buffer;
  next_actors: string;
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

/** Turn a session-index row into an entry, checking its types and CRC. */
function decodeSessionRow(row: SessionRow): SessionIndexEntry {
  const id = String(row.session_id);
  if (
    typeof row.session_id !== "string" ||
    typeof row.first_position !== "number" ||
    typeof row.last_seq !== "number" ||
    (row.status !== null && !isSessionStatus(row.status)) ||
    typeof row.activity_ms !== "number" ||
    (row.metadata !== null && !Buffer.isBuffer(row.metadata)) ||
    typeof row.crc !== "number"
  ) {
    throw new StoreCorruptionError(`session index row for ${id}: unexpected column types or status`);
  }
  const entry: SessionIndexEntry = {
    sessionId: row.session_id,
    firstPosition: row.first_position,
    lastSeq: row.last_seq,
    status: row.status as SessionIndexEntry["status"],
    activityMs: row.activity_ms,
    metadata: row.metadata === null ? null : view(row.metadata),
  };
  const crc = sessionRowCrc(entry);
  if (crc !== row.crc) {
    throw new StoreCorruptionError(
      `session index row for ${id}: checksum mismatch (stored ${hex32(row.crc)}, computed ${hex32(crc)})`,
      row.first_position,
    );
  }
  return entry;
}

/** Turn a list_rows row into a list row, checking its types and CRC. */
function decodeListRow(row: ListRowRow): StoredListRow {
  const id = String(row.session_id);
  let actors: unknown;
  try {
    actors = JSON.parse(String(row.next_actors));
  } catch {
    actors = null;
  }
  if (
    typeof row.session_id !== "string" ||
    typeof row.change !== "number" ||
    (row.final !== 0 && row.final !== 1) ||
    !Buffer.isBuffer(row.summary) ||
    !Array.isArray(actors) ||
    !actors.every((a) => typeof a === "string") ||
    typeof row.crc !== "number"
  ) {
    throw new StoreCorruptionError(`list row of ${id}: unexpected column types`);
  }
  const out: StoredListRow = { sessionId: id, change: row.change, final: row.final === 1, summary: view(row.summary), nextActors: actors as string[] };
  const crc = listRowCrc(out);
  if (crc !== row.crc) {
    throw new StoreCorruptionError(`list row of ${id} (change ${row.change}): checksum mismatch (stored ${hex32(row.crc)}, computed ${hex32(crc)})`);
  }
  return out;
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
    const problems = (db.pragma("quick_check") as Array<Record<string, unknown>>).map((r) =>
      String(Object.values(r)[0]),
    );
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
    if (!/^[0-9a-f-]{36}$/.test(this.storeId)) throw new StoreCorruptionError(`runtime store ${file}: store_id ${JSON.stringify(this.storeId)} is malformed`);
    this.backfilled = meta("list_rows_backfilled") === "1";
    const change = db.prepare<[], { value: number }>(SQL.listChange).get()?.value;
    if (typeof change !== "number" || !Number.isSafeInteger(change)) throw new StoreCorruptionError(`runtime store ${file}: the list-change counter is missing`);
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
        const info = stmt.run(row.sessionId, stored.change, row.final ? 1 : 0, row.summary, JSON.stringify(row.nextActors), listRowCrc(stored));
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
          this.stmt.insertSession.run(entry.sessionId, entry.firstPosition, entry.lastSeq, entry.status, resident ? 1 : 0, entry.activityMs, entry.metadata, crc);
        } else if (isResidentStatus(before.status) !== resident) {
          this.stmt.updateSessionResidency.run(entry.lastSeq, entry.status, resident ? 1 : 0, entry.activityMs, entry.metadata, crc, entry.sessionId);
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
    const envelopes = this.pages((after) => this.readSession(sessionId, after, { maxRecords: RECORDS_PER_QUERY, maxBytes: BYTES_PER_QUERY }), (r) => r.seq);
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
    for (let after = 0; ; ) {
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
      this.stmt.selectPolicies.all().map(decodePolicyRow).sort((a, b) => compareUtf8(a.policyId, b.policyId)),
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
