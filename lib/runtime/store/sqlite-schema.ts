// The runtime store's SQLite schema: its migrations (user_version i → i + 1),
// the text of every statement the store prepares, and their prepared, typed
// form (sqlite-store.ts, sqlite-commit.ts).
import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import { sessionRowCrc } from "./row-crc";
import type { ListRowRow, LogRow, PolicyRow, SessionRow } from "./sqlite-rows";
import type { SessionIndexEntry } from "./types";

export const SQLITE_FILE_NAME = "baton-runtime.sqlite";
/** How long open() waits for another process holding the database. */
export const BUSY_TIMEOUT_MS = 1000;

/** migrations[i] takes the schema from user_version i to i + 1 (SQL text, or a step run in the same transaction). */
export const MIGRATIONS: readonly (string | ((db: Database.Database) => void))[] = [
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
  for (let after = ""; ;) {
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
  insertLog: "INSERT INTO log (session_id, kind, seq, recv_ms, envelope, bound_policy, crc) VALUES (?, ?, ?, ?, ?, ?, ?)",
  selectAll: `SELECT ${LOG_COLUMNS} FROM log ORDER BY position`,
  selectSession: `SELECT ${LOG_COLUMNS} FROM log WHERE session_id = ? AND kind = 'envelope' AND seq > ? ORDER BY seq`,
  /** One page of history: (session, afterSeq, upToSeq, limit). */
  selectSessionPage:
    `SELECT ${LOG_COLUMNS} FROM log WHERE session_id = ? AND kind = 'envelope' AND seq > ? AND seq <= ? ` + "ORDER BY seq LIMIT ?",
  /** Every record of one session after a position: (session, afterPosition, limit). */
  /** A session's annotations after a position: (session, afterPosition, limit). */
  selectAnnotations: `SELECT ${LOG_COLUMNS} FROM log WHERE session_id = ? AND kind <> 'envelope' AND position > ? ORDER BY position LIMIT ?`,
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
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE first_position > ? AND first_position <= ? ` + "ORDER BY first_position LIMIT ?",
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

/** The statements above, prepared once per open with their parameter and row types. */
export interface SqliteStatements {
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
}

export function prepareStatements(db: Database.Database): SqliteStatements {
  return {
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
}
