// The durable store: one SQLite file in WAL mode, written by a single
// connection with group commit (see writer.ts and index.ts for the why).
// This file opens it (pragmas, integrity check, migrations, the open report);
// the open store's reads are sqlite-store.ts, its commits sqlite-commit.ts,
// its schema and statements sqlite-schema.ts.
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
import { asError, noopLogger, type StoreLogger } from "./common";
import { consumeCleanClose, type TrustVerdict } from "./clean-close";
import { BUSY_TIMEOUT_MS, MIGRATIONS, SCHEMA_VERSION, SQL, SQLITE_FILE_NAME } from "./sqlite-schema";
import { errorCode, SqliteStoreImpl, type SqliteOpenReport, type SqliteStore } from "./sqlite-store";
import { StoreCorruptionError } from "./types";
import { checkWalBeforeOpen, logWalRecovery } from "./wal-check";

export { SCHEMA_VERSION, SQL, SQLITE_FILE_NAME } from "./sqlite-schema";
export type { SqliteOpenReport, SqliteStore } from "./sqlite-store";

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
