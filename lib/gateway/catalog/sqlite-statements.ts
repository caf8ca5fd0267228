// The catalog's prepared statements over the sessions, actors and meta
// tables (fixed SQL only; query-shaped reads are built in sqlite-where.ts),
// prepared once when the catalog opens.
import type Database from "better-sqlite3";

/** A stored row as the catalog reads it back by session id. */
export interface RowRecord {
  n: number;
  kind: string;
  summary: Uint8Array;
  folded: number;
  final: number;
  needs_read: number;
  next_actors: string;
  version: number;
}

export function prepareStatements(db: Database.Database) {
  return {
    get: db.prepare<[string], RowRecord>(
      "SELECT n, kind, summary, folded, final, needs_read, next_actors, version FROM sessions WHERE session_id = ?",
    ),
    insert: db.prepare(
      `INSERT INTO sessions (session_id, mode, state, state_rank, phase, phase_rank, intent_lc, owner_lc, target_lc, participants_lc, hay,
         started_ms, ttl_key, activity_ms, folded, final, needs_read, read_after, next_actors, version, summary, stuck_since_ms, kind)
       VALUES (@session_id, @mode, @state, @state_rank, @phase, @phase_rank, @intent_lc, @owner_lc, @target_lc, @participants_lc, @hay,
         @started_ms, @ttl_key, @activity_ms, @folded, @final, @needs_read, 0, @next_actors, @version, @summary, @stuck_since_ms, @kind)`,
    ),
    update: db.prepare(
      `UPDATE sessions SET mode = @mode, state = @state, state_rank = @state_rank, phase = @phase, phase_rank = @phase_rank,
         intent_lc = @intent_lc, owner_lc = @owner_lc, target_lc = @target_lc, participants_lc = @participants_lc, hay = @hay,
         started_ms = @started_ms, ttl_key = @ttl_key, activity_ms = @activity_ms, folded = @folded, final = @final,
         needs_read = @needs_read, next_actors = @next_actors, version = @version, summary = @summary, stuck_since_ms = @stuck_since_ms, kind = @kind
       WHERE n = @n`,
    ),
    participantsOf: db.prepare<[number], { participants_lc: string }>("SELECT participants_lc FROM sessions WHERE n = ?"),
    upsertActor: db.prepare(
      `INSERT INTO actors (participant_id, sessions, last_ms) VALUES (@id, @count, @started)
       ON CONFLICT (participant_id) DO UPDATE SET sessions = sessions + excluded.sessions, last_ms = max(last_ms, excluded.last_ms)`,
    ),
    actors: db.prepare<[number], { participant_id: string; sessions: number; last_ms: number }>(
      "SELECT participant_id, sessions, last_ms FROM actors ORDER BY last_ms DESC, participant_id LIMIT ?",
    ),
    ftsDelete: db.prepare("DELETE FROM sessions_fts WHERE rowid = ?"),
    ftsInsert: db.prepare("INSERT INTO sessions_fts (rowid, hay, parts) VALUES (?, ?, ?)"),
    setVersion: db.prepare("INSERT INTO meta (key, value) VALUES ('version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"),
    setMeta: db.prepare<[string, string]>(
      "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    ),
    deleteMeta: db.prepare<[string]>("DELETE FROM meta WHERE key = ?"),
    changed: db.prepare<[number, number], { session_id: string; version: number }>(
      "SELECT session_id, version FROM sessions WHERE version > ? ORDER BY version, n LIMIT ?",
    ),
    scan: db.prepare<[number, number], { n: number; summary: Uint8Array }>(
      "SELECT n, summary FROM sessions WHERE n > ? ORDER BY n LIMIT ?",
    ),
    pending: db.prepare<[number, number, number], { n: number; session_id: string }>(
      "SELECT n, session_id FROM sessions WHERE needs_read = 1 AND n > ? AND read_after <= ? ORDER BY n LIMIT ?",
    ),
    pendingOpen: db.prepare<[number, number, number], { n: number; session_id: string }>(
      "SELECT n, session_id FROM sessions WHERE needs_read = 1 AND n > ? AND read_after <= ? AND state_rank < 2 ORDER BY n LIMIT ?",
    ),
    defer: db.prepare("UPDATE sessions SET read_after = ? WHERE session_id = ?"),
    nextDeferred: db.prepare<[], { t: number | null }>("SELECT min(read_after) AS t FROM sessions WHERE needs_read = 1 AND read_after > 0"),
    known: db.prepare<[], { c: number }>("SELECT count(*) AS c FROM sessions WHERE kind = 'macp'"),
    pendingCount: db.prepare<[], { c: number }>("SELECT count(*) AS c FROM sessions WHERE needs_read = 1"),
    fileCount: db.prepare<[], { c: number }>("SELECT count(*) AS c FROM sessions WHERE kind = 'file'"),
    reset: db.prepare("UPDATE sessions SET needs_read = 1, read_after = 0 WHERE final = 0 AND kind = 'macp'"),
    deleteRow: db.prepare<[number]>("DELETE FROM sessions WHERE n = ?"),
    fileRows: db.prepare<[number, number], { n: number; summary: Uint8Array }>(
      "SELECT n, summary FROM sessions WHERE kind = 'file' AND n > ? ORDER BY n LIMIT ?",
    ),
  };
}

export type CatalogStatements = ReturnType<typeof prepareStatements>;
