// The catalog's SQLite schema and how a file is brought to it at open: the
// tables and indexes (one index per sort, partial indexes for the few rows a
// filter or the feeder looks at, an FTS5 trigram table for search), the
// migrations, and the binding of a file to the runtime it describes.
//
// The catalog is a read model: everything in it can be rebuilt from the
// runtime and the watched directories. Schema 2 (before file rows and the
// stuck column) is migrated in place, keeping its rows; an older file is
// emptied and filled again (the feeder reads the history once more); a newer
// schema is refused.
import type Database from "better-sqlite3";
import { fromBinary } from "@bufbuild/protobuf";
import { SessionSummarySchema } from "@/lib/gen/baton/v1/console_pb";
import { stuckSinceOf } from "./sqlite-rows";

export const CATALOG_SCHEMA_VERSION = 3;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
-- Every participant id seen in a session (the people picker's agents), with
-- how many sessions and the newest start: one row per distinct id.
CREATE TABLE IF NOT EXISTS actors (
  participant_id TEXT PRIMARY KEY,
  sessions INTEGER NOT NULL,
  last_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS actors_recent ON actors (last_ms);
CREATE TABLE IF NOT EXISTS sessions (
  n INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL UNIQUE,
  mode TEXT NOT NULL,
  state INTEGER NOT NULL,
  state_rank INTEGER NOT NULL,
  phase TEXT NOT NULL,
  phase_rank INTEGER NOT NULL,
  intent_lc TEXT NOT NULL,
  owner_lc TEXT NOT NULL,
  target_lc TEXT NOT NULL,
  participants_lc TEXT NOT NULL,
  hay TEXT NOT NULL,
  started_ms INTEGER NOT NULL,
  ttl_key INTEGER NOT NULL,
  activity_ms INTEGER NOT NULL,
  folded INTEGER NOT NULL,
  final INTEGER NOT NULL,
  needs_read INTEGER NOT NULL,
  read_after INTEGER NOT NULL DEFAULT 0,
  next_actors TEXT NOT NULL,
  version INTEGER NOT NULL,
  summary BLOB NOT NULL,
  stuck_since_ms INTEGER NOT NULL DEFAULT 0,
  kind TEXT NOT NULL DEFAULT 'macp'
) STRICT;
CREATE INDEX IF NOT EXISTS sessions_activity ON sessions (activity_ms, session_id);
CREATE INDEX IF NOT EXISTS sessions_started ON sessions (started_ms, activity_ms, session_id);
CREATE INDEX IF NOT EXISTS sessions_ttl ON sessions (ttl_key, activity_ms, session_id);
CREATE INDEX IF NOT EXISTS sessions_intent ON sessions (intent_lc, activity_ms, session_id);
CREATE INDEX IF NOT EXISTS sessions_phase ON sessions (phase_rank, activity_ms, session_id);
CREATE INDEX IF NOT EXISTS sessions_state ON sessions (state_rank, activity_ms, session_id);
CREATE INDEX IF NOT EXISTS sessions_mode ON sessions (mode, activity_ms, session_id);
CREATE INDEX IF NOT EXISTS sessions_owner ON sessions (owner_lc, activity_ms, session_id);
CREATE INDEX IF NOT EXISTS sessions_target ON sessions (target_lc, activity_ms, session_id);
CREATE INDEX IF NOT EXISTS sessions_version ON sessions (version);
-- Sessions waiting on somebody (open ones only): the "waiting on" filter reads these.
CREATE INDEX IF NOT EXISTS sessions_waiting ON sessions (activity_ms) WHERE next_actors <> '';
CREATE INDEX IF NOT EXISTS sessions_pending ON sessions (n) WHERE needs_read = 1;
CREATE INDEX IF NOT EXISTS sessions_unfinished ON sessions (n) WHERE final = 0;
-- Sessions that can get stuck (an offer or an approval waiting): the "stuck" filter is a range read here.
CREATE INDEX IF NOT EXISTS sessions_stuck ON sessions (stuck_since_ms) WHERE stuck_since_ms > 0;
-- v0.1 file rows (start-up reconciliation with the watched directories).
CREATE INDEX IF NOT EXISTS sessions_files ON sessions (n) WHERE kind = 'file';
CREATE VIRTUAL TABLE IF NOT EXISTS sessions_fts USING fts5 (hay, parts, content = '', contentless_delete = 1, tokenize = 'trigram');
`;

/** Deletes the runtime's rows (and their search entries), keeping file rows. */
export const DELETE_MACP_ROWS =
  "DELETE FROM sessions_fts WHERE rowid IN (SELECT n FROM sessions WHERE kind = 'macp'); DELETE FROM sessions WHERE kind = 'macp'; DELETE FROM actors;";

/**
 * Bring the file to the current schema (creating it when empty). Returns the
 * schema it was migrated from in place (0: none needed, or rebuilt); throws on
 * a newer schema.
 */
export function migrateCatalog(db: Database.Database): number {
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined;
  const found = hasMeta ? db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'schema'").get() : undefined;
  const schema = found ? Number(found.value) : 0;
  if (schema > CATALOG_SCHEMA_VERSION) {
    throw new Error(
      `the console catalog was written by a newer Baton (schema ${schema}; this one knows ${CATALOG_SCHEMA_VERSION}); delete it to rebuild it from the runtime`,
    );
  }
  let migratedFrom = 0;
  db.transaction(() => {
    if (schema === 2) migratedFrom = migrateFrom2(db);
    else if (schema !== CATALOG_SCHEMA_VERSION) {
      // Older (or no) schema: a read model is rebuilt, not converted.
      for (const t of ["sessions_fts", "sessions", "actors", "meta"]) db.exec(`DROP TABLE IF EXISTS ${t}`);
    }
    db.exec(SCHEMA);
    db.prepare("INSERT INTO meta (key, value) VALUES ('schema', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(
      String(CATALOG_SCHEMA_VERSION),
    );
  })();
  return migratedFrom;
}

/**
 * Schema 2 → 3, rows kept: every row is the runtime's (kind 'macp'); add stuck_since_ms and compute it from each
 * stored row (rows written before status starts were stored count from
 * their last activity until the feed brings them again).
 */
function migrateFrom2(db: Database.Database): number {
  db.exec("ALTER TABLE sessions ADD COLUMN kind TEXT NOT NULL DEFAULT 'macp'");
  db.exec("ALTER TABLE sessions ADD COLUMN stuck_since_ms INTEGER NOT NULL DEFAULT 0");
  const read = db.prepare<[number], { n: number; summary: Uint8Array }>(
    "SELECT n, summary FROM sessions WHERE n > ? AND final = 0 ORDER BY n LIMIT 500",
  );
  const set = db.prepare<[number, number]>("UPDATE sessions SET stuck_since_ms = ? WHERE n = ?");
  for (let after = 0; ;) {
    const rows = read.all(after);
    if (rows.length === 0) break;
    for (const r of rows) {
      const since = stuckSinceOf(fromBinary(SessionSummarySchema, r.summary));
      if (since > 0) set.run(since, r.n);
    }
    after = (rows[rows.length - 1] as { n: number }).n;
  }
  return 2;
}

/**
 * Record which runtime the file describes. A file made from another runtime
 * loses that runtime's rows and feed position (file rows stay); returns the
 * source it described then, or null when nothing was replaced.
 */
export function bindCatalogSource(db: Database.Database, source: string): string | null {
  const found = db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'source'").get()?.value;
  if (found === source) return null;
  let replaced: string | null = null;
  db.transaction(() => {
    if (found !== undefined) {
      replaced = found;
      db.exec(`${DELETE_MACP_ROWS} DELETE FROM meta WHERE key IN ('feed_store', 'feed_change');`);
    }
    db.prepare("INSERT INTO meta (key, value) VALUES ('source', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(source);
  })();
  return replaced;
}
