// Storage entry point for the runtime.
//
// Why SQLite in WAL mode: the runtime needs an append-only log that survives
// crashes and comes back exactly as acknowledged. SQLite transactions give
// all-or-nothing batches, and its write-ahead log is checksummed frame by
// frame with explicit commit markers, so a crash in the middle of a commit
// leaves a torn tail that recovery discards on its own: we get torn-tail
// recovery for free instead of writing a log format and its repair logic.
// `synchronous = FULL` fsyncs the WAL at every commit; group commit (all
// writes of one event-loop turn share one transaction, see writer.ts) pays
// that fsync once per turn instead of once per message. A single embedded
// file also means no server to run. Multi-instance deployments can add a
// PostgreSQL store implementing the same `Store` interface (types.ts).
import { openMemoryStore } from "./memory";
import { openSqliteStore } from "./sqlite";
import type { StoreLogger, StoreStats } from "./common";
import type { Store } from "./types";

export type { StoreLogger, StoreStats } from "./common";
export { InvalidRecordError, StoreFailedError } from "./common";
export { openMemoryStore, type MemoryStore } from "./memory";
export { openSqliteStore, type SqliteOpenReport, type SqliteStore } from "./sqlite";
export { StoreCorruptionError } from "./types";
export { WalDamageError } from "./wal-check";
export type {
  ListRow,
  ListSessionsPage,
  LogRecord,
  PolicyRecord,
  ReadPage,
  RecordKind,
  SessionIndexEntry,
  SessionStatus,
  SessionSummary,
  Store,
  StoredListRow,
  StoredRecord,
  StoreReadStats,
} from "./types";

export interface StoreConfig {
  /** MACP_MEMORY_ONLY=1: keep everything in memory, persist nothing. */
  memoryOnly: boolean;
  /** Folder for the SQLite database (ignored when memoryOnly). */
  dataDir: string;
  logger?: StoreLogger;
  /** MACP_STORE_INTEGRITY_CHECK: when PRAGMA quick_check runs at open (SQLite). */
  integrityCheck?: "auto" | "always";
}

/** A store plus its group-commit counters. */
export type RuntimeStore = Store & { stats(): StoreStats };

export function openStore(config: StoreConfig): RuntimeStore {
  if (config.memoryOnly) {
    config.logger?.warn({}, "runtime store: memory only (MACP_MEMORY_ONLY=1); nothing survives a restart");
    return openMemoryStore({ logger: config.logger });
  }
  return openSqliteStore({ dir: config.dataDir, logger: config.logger, integrityCheck: config.integrityCheck });
}
