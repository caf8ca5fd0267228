// The catalog in SQLite (better-sqlite3, WAL): `console.sqlite` in the data
// folder. One row per session with the columns every filter and sort needs
// (each sort has its own index, ties broken by newest activity then id, as
// lib/views/list-query.ts compareSummaries does), the list row itself as a
// protobuf blob, and an FTS5 trigram index for full-text search (substring
// matches over intent, scope, session id, participants, phase, mode and
// context id). Browser text is only ever bound as a quoted FTS phrase or an
// instr() argument, never parsed as FTS or SQL syntax.
//
// Fed by the runtime's list-row feed (WatchListRows), the catalog stores the
// feed position (the runtime's store_id and the last change applied) in the
// meta table, in the same transaction as the rows it covers: a restart
// resumes exactly after what was written. When the runtime's store_id changes
// (its data was replaced) or its feed restarts from 0, every row is deleted in
// the transaction that applies the first new rows (applyFeed's `reset`).
//
// Rows have a kind: "macp" (a session of the runtime) or "file" (a v0.1 file
// handoff of a watched directory, written by catalog/file-rows.ts as the
// console's watcher observes changes). Resets for the runtime (a replaced
// store, another runtime) delete the runtime's rows only; file rows have
// their own writer and stay.
//
// The catalog is a read model: everything in it can be rebuilt from the
// runtime and the watched directories. Schema 2 (before file rows and the
// stuck column) is migrated in place, keeping its rows; an older file is
// emptied and filled again (the feeder reads the history once more); a newer
// schema is refused.
//
// "Stuck" (lib/macp/projections/status.ts): stuck_since_ms is when an open
// session's offer or approval started waiting (0 when it cannot be stuck),
// kept with a partial index, so the filter is a range read `stuck_since_ms <=
// now - threshold` over the few rows that are waiting on someone.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { stuckSince } from "@/lib/macp/projections/status";
import { phaseRank, stateRank, type CatalogQuery, type SortKey } from "./query";
import type {
  CatalogActor,
  CatalogChanges,
  CatalogCounts,
  CatalogPage,
  CatalogRow,
  CatalogStore,
  CatalogWrite,
  FeedCursor,
  PendingRead,
} from "./store";

export const CATALOG_SCHEMA_VERSION = 3;

/** Text filters shorter than this (in characters) cannot use the trigram index: they scan. */
const TRIGRAM = 3;

const SORT_COLUMN: Readonly<Record<SortKey, string>> = {
  activity: "activity_ms",
  started: "started_ms",
  ttl: "ttl_key",
  intent: "intent_lc",
  phase: "phase_rank",
  state: "state_rank",
  mode: "mode",
  owner: "owner_lc",
  target: "target_lc",
};

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

/** Where a row comes from: the runtime, or a watched v0.1 handoff directory. */
export type RowKind = "macp" | "file";

/** Deletes the runtime's rows (and their search entries), keeping file rows. */
const DELETE_MACP_ROWS =
  "DELETE FROM sessions_fts WHERE rowid IN (SELECT n FROM sessions WHERE kind = 'macp'); DELETE FROM sessions WHERE kind = 'macp'; DELETE FROM actors;";

interface RowRecord {
  n: number;
  kind: string;
  summary: Uint8Array;
  folded: number;
  final: number;
  needs_read: number;
  next_actors: string;
  version: number;
}

const lower = (s: string): string => s.toLowerCase();

/** Columns derived from a list row. */
function columns(s: SessionSummary) {
  const m = s.metadata;
  const id = m?.sessionId ?? "";
  const participants = [...(m?.participants ?? []), m?.initiator ?? "", s.currentOwner, s.currentTarget].filter((p) => p !== "");
  const participantsLc = lower(participants.join("\n"));
  const hay = lower(
    [s.intent, s.scope, id, s.currentOwner, s.currentTarget, s.phase, m?.mode ?? "", m?.contextId ?? "", ...participants].join("\n"),
  );
  const expires = Number(m?.expiresAtUnixMs ?? 0n);
  return {
    session_id: id,
    mode: m?.mode ?? "",
    state: m?.state ?? 0,
    state_rank: stateRank(m?.state ?? 0),
    phase: s.phase,
    phase_rank: phaseRank(s.phase),
    intent_lc: lower(s.intent),
    owner_lc: lower(s.currentOwner),
    target_lc: lower(s.currentTarget),
    participants_lc: participantsLc,
    hay,
    started_ms: Number(m?.startedAtUnixMs ?? 0n),
    ttl_key: expires > 0 ? expires : Number.MAX_SAFE_INTEGER,
    activity_ms: Number(s.lastActivityUnixMs),
    stuck_since_ms: stuckSinceOf(s),
  };
}

/** When the row started waiting on an answer or an approval (the stuck rule's start), 0 when it cannot be stuck. */
export function stuckSinceOf(s: SessionSummary): number {
  return (
    stuckSince({
      state: s.metadata?.state ?? 0,
      phase: s.phase,
      outcome: s.outcome,
      detail: s.phaseDetail,
      phaseSinceMs: Number(s.phaseSinceUnixMs),
      lastActivityMs: Number(s.lastActivityUnixMs),
    }) ?? 0
  );
}

/**
 * Who must act, as stored: one participant id a line; a file row offered to
 * anyone stores "*" and "!<from_agent>" (anyone but them).
 */
export const ANYONE = "*";
export const EXCEPT = "!";

/** The stored next actors as SessionSummary.waiting_on (exclusions dropped). */
export function waitingOnOf(nextActors: string): string[] {
  return nextActors === "" ? [] : nextActors.split("\n").filter((id) => !id.startsWith(EXCEPT));
}

/** A stored row with who must act now (the catalog's next actors) filled in. */
function withWaitingOn(summary: Uint8Array, nextActors: string): SessionSummary {
  const s = fromBinary(SessionSummarySchema, summary);
  s.waitingOn = waitingOnOf(nextActors);
  return s;
}

/** A quoted FTS5 phrase: the needle matched as a substring, never as query syntax. */
function phrase(needle: string): string {
  return `"${needle.replace(/"/g, '""')}"`;
}

export interface SqliteCatalogOptions {
  /** File path, or ":memory:" (tests). */
  path: string;
  /**
   * Which runtime the catalog describes (e.g. its URL). A catalog file made
   * from another runtime is emptied and filled again from this one.
   */
  source?: string;
}

export class SqliteCatalog implements CatalogStore {
  private readonly db: Database.Database;
  private currentVersion: number;
  private readonly stmts;
  private readonly pageCache = new Map<string, Database.Statement>();

  constructor(options: SqliteCatalogOptions) {
    if (options.path !== ":memory:") fs.mkdirSync(path.dirname(options.path), { recursive: true });
    this.db = new Database(options.path);
    try {
      this.db.pragma("journal_mode = WAL");
      // A read model: a crash may lose the last writes, which the feeder reads again.
      this.db.pragma("synchronous = NORMAL");
      this.db.pragma("busy_timeout = 5000");
      this.migrate();
      if (options.source !== undefined) this.bindSource(options.source);
    } catch (e) {
      this.db.close();
      throw e;
    }
    const db = this.db;
    this.stmts = {
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
      nextDeferred: db.prepare<[], { t: number | null }>(
        "SELECT min(read_after) AS t FROM sessions WHERE needs_read = 1 AND read_after > 0",
      ),
      known: db.prepare<[], { c: number }>("SELECT count(*) AS c FROM sessions WHERE kind = 'macp'"),
      pendingCount: db.prepare<[], { c: number }>("SELECT count(*) AS c FROM sessions WHERE needs_read = 1"),
      fileCount: db.prepare<[], { c: number }>("SELECT count(*) AS c FROM sessions WHERE kind = 'file'"),
      reset: db.prepare("UPDATE sessions SET needs_read = 1, read_after = 0 WHERE final = 0 AND kind = 'macp'"),
      deleteRow: db.prepare<[number]>("DELETE FROM sessions WHERE n = ?"),
      fileRows: db.prepare<[number, number], { n: number; summary: Uint8Array }>(
        "SELECT n, summary FROM sessions WHERE kind = 'file' AND n > ? ORDER BY n LIMIT ?",
      ),
    };
    this.currentVersion = Number(
      this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'version'").get()?.value ?? "0",
    );
    const storeId = this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'feed_store'").get()?.value;
    const change = this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'feed_change'").get()?.value;
    this.feedCursor =
      storeId !== undefined && change !== undefined && /^\d+$/.test(change) ? { storeId, change: BigInt(change) } : undefined;
  }

  private feedCursor: FeedCursor | undefined;

  private migrate(): void {
    const hasMeta = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined;
    const found = hasMeta ? this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'schema'").get() : undefined;
    const schema = found ? Number(found.value) : 0;
    if (schema > CATALOG_SCHEMA_VERSION) {
      throw new Error(
        `the console catalog was written by a newer Baton (schema ${schema}; this one knows ${CATALOG_SCHEMA_VERSION}); delete it to rebuild it from the runtime`,
      );
    }
    this.db.transaction(() => {
      if (schema === 2) this.migrateFrom2();
      else if (schema !== CATALOG_SCHEMA_VERSION) {
        // Older (or no) schema: a read model is rebuilt, not converted.
        for (const t of ["sessions_fts", "sessions", "actors", "meta"]) this.db.exec(`DROP TABLE IF EXISTS ${t}`);
      }
      this.db.exec(SCHEMA);
      this.db
        .prepare("INSERT INTO meta (key, value) VALUES ('schema', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        .run(String(CATALOG_SCHEMA_VERSION));
    })();
  }

  /**
   * Schema 2 → 3, rows kept: every row is the runtime's (kind 'macp'); add stuck_since_ms and compute it from each
   * stored row (rows written before status starts were stored count from
   * their last activity until the feed brings them again).
   */
  private migrateFrom2(): void {
    this.db.exec("ALTER TABLE sessions ADD COLUMN kind TEXT NOT NULL DEFAULT 'macp'");
    this.db.exec("ALTER TABLE sessions ADD COLUMN stuck_since_ms INTEGER NOT NULL DEFAULT 0");
    this.migratedFrom = 2;
    const read = this.db.prepare<[number], { n: number; summary: Uint8Array }>(
      "SELECT n, summary FROM sessions WHERE n > ? AND final = 0 ORDER BY n LIMIT 500",
    );
    const set = this.db.prepare<[number, number]>("UPDATE sessions SET stuck_since_ms = ? WHERE n = ?");
    for (let after = 0; ;) {
      const rows = read.all(after);
      if (rows.length === 0) break;
      for (const r of rows) {
        const since = stuckSinceOf(fromBinary(SessionSummarySchema, r.summary));
        if (since > 0) set.run(since, r.n);
      }
      after = (rows[rows.length - 1] as { n: number }).n;
    }
  }

  /** The schema the file was migrated from at open (0: none needed). */
  migratedFrom = 0;

  /** Set when the file was emptied because it described another runtime. */
  replacedSource: string | null = null;

  private bindSource(source: string): void {
    const found = this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'source'").get()?.value;
    if (found === source) return;
    this.db.transaction(() => {
      if (found !== undefined) {
        this.replacedSource = found;
        this.db.exec(`${DELETE_MACP_ROWS} DELETE FROM meta WHERE key IN ('feed_store', 'feed_change');`);
      }
      this.db
        .prepare("INSERT INTO meta (key, value) VALUES ('source', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        .run(source);
    })();
  }

  get version(): number {
    return this.currentVersion;
  }

  get(sessionId: string): CatalogRow | undefined {
    const r = this.stmts.get.get(sessionId);
    if (!r) return undefined;
    return {
      kind: r.kind === "file" ? "file" : "macp",
      summary: fromBinary(SessionSummarySchema, r.summary),
      folded: r.folded,
      final: r.final === 1,
      needsRead: r.needs_read === 1,
      nextActors: r.next_actors === "" ? [] : r.next_actors.split("\n"),
      version: r.version,
    };
  }

  write(rows: readonly CatalogWrite[]): number {
    if (rows.length === 0) return this.currentVersion;
    const version = this.currentVersion + 1;
    this.db.transaction(() => this.writeRows(rows, version))();
    this.currentVersion = version;
    return version;
  }

  /** Participant ids seen in sessions, most recently seen first (at most `limit`). */
  actors(limit: number): CatalogActor[] {
    return this.stmts.actors.all(limit).map((r) => ({ participantId: r.participant_id, sessions: r.sessions, lastSeenMs: r.last_ms }));
  }

  get cursor(): FeedCursor | undefined {
    return this.feedCursor;
  }

  applyFeed(rows: readonly CatalogWrite[], cursor: FeedCursor, reset = false): number {
    const bump = rows.length > 0 || reset;
    const version = bump ? this.currentVersion + 1 : this.currentVersion;
    this.db.transaction(() => {
      if (reset) this.db.exec(DELETE_MACP_ROWS);
      if (bump) this.writeRows(rows, version);
      this.stmts.setMeta.run("feed_store", cursor.storeId);
      this.stmts.setMeta.run("feed_change", cursor.change.toString());
    })();
    this.currentVersion = version;
    this.feedCursor = { storeId: cursor.storeId, change: cursor.change };
    return version;
  }

  clearCursor(): void {
    if (!this.feedCursor) return;
    this.db.transaction(() => {
      this.stmts.deleteMeta.run("feed_store");
      this.stmts.deleteMeta.run("feed_change");
    })();
    this.feedCursor = undefined;
  }

  /** Upsert rows at `version` (inside a transaction); the version is stored too. */
  private writeRows(rows: readonly CatalogWrite[], version: number, kind: RowKind = "macp"): number {
    let written = 0;
    for (const w of rows) {
      const cols = columns(w.summary);
      if (cols.session_id === "") continue;
      const summary = toBinary(SessionSummarySchema, w.summary);
      const nextActors = w.nextActors.join("\n");
      const existing = this.stmts.get.get(cols.session_id);
      // Runtime rows and file rows never take each other's place (their ids cannot collide: PROTOCOL.md §2.6).
      if (existing && existing.kind !== kind) continue;
      // A file row the watcher reports again unchanged (every start) is not a change.
      if (kind === "file" && existing && existing.next_actors === nextActors && Buffer.from(existing.summary).equals(Buffer.from(summary)))
        continue;
      written++;
      const params = {
        kind,
        ...cols,
        folded: w.folded,
        final: w.final ? 1 : 0,
        needs_read: w.needsRead ? 1 : 0,
        next_actors: nextActors,
        version,
        summary,
      };
      // A session's participants are counted once: when it is first known with them (the people picker's agents: MACP only).
      const countActors = kind === "macp" && (!existing || this.stmts.participantsOf.get(existing.n)?.participants_lc === "");
      if (countActors && cols.participants_lc !== "") {
        const m = w.summary.metadata;
        const ids = new Set([...(m?.participants ?? []), m?.initiator ?? ""]);
        for (const id of ids) if (id !== "") this.stmts.upsertActor.run({ id, count: 1, started: cols.started_ms });
      }
      let n: number;
      if (existing) {
        n = existing.n;
        this.stmts.update.run({ ...params, n });
        this.stmts.ftsDelete.run(n);
      } else {
        n = Number(this.stmts.insert.run(params).lastInsertRowid);
      }
      this.stmts.ftsInsert.run(n, cols.hay, cols.participants_lc);
    }
    this.stmts.setVersion.run(String(version));
    return written;
  }

  writeFiles(rows: readonly CatalogWrite[], removed: readonly string[]): number {
    if (rows.length === 0 && removed.length === 0) return this.currentVersion;
    const version = this.currentVersion + 1;
    const changed = this.db.transaction(() => {
      let n = this.writeRows(rows, version, "file");
      for (const id of removed) {
        const r = this.stmts.get.get(id);
        if (!r || r.kind !== "file") continue;
        this.stmts.ftsDelete.run(r.n);
        this.stmts.deleteRow.run(r.n);
        n++;
      }
      // Nothing changed: the stored version stays as it was.
      if (n === 0) this.stmts.setVersion.run(String(this.currentVersion));
      return n;
    })();
    if (changed === 0) return this.currentVersion;
    this.currentVersion = version;
    return version;
  }

  fileRows(after: number, limit: number): { rows: SessionSummary[]; last: number } {
    const rows = this.stmts.fileRows.all(after, limit);
    return { rows: rows.map((r) => fromBinary(SessionSummarySchema, r.summary)), last: rows.at(-1)?.n ?? after };
  }

  fileCount(): number {
    return this.stmts.fileCount.get()?.c ?? 0;
  }

  /** WHERE clause and parameters for a query. */
  private where(q: CatalogQuery): { sql: string; params: (string | number)[]; key: string } {
    const parts: string[] = [];
    const params: (string | number)[] = [];
    const key: string[] = [];
    if (q.mode !== undefined) {
      parts.push("mode = ?");
      params.push(q.mode);
      key.push("m");
    }
    if (q.state !== undefined) {
      parts.push("state = ?");
      params.push(q.state);
      key.push("s");
    }
    if (q.phase !== undefined) {
      parts.push("phase = ?");
      params.push(q.phase);
      key.push("p");
    }
    if (q.stuckBefore !== undefined) {
      // Through sessions_stuck: only rows waiting on an answer or an approval, started at or before the cut.
      parts.push("stuck_since_ms > 0 AND stuck_since_ms <= ?");
      params.push(q.stuckBefore);
      key.push("k");
    }
    if (q.waitingOn !== undefined) {
      // Only sessions someone must act in (open ones: a few) are looked at, through sessions_waiting.
      // A file row offered to anyone ("*") waits on everyone but its offerer ("!<from_agent>").
      parts.push(
        "next_actors <> '' AND (instr(char(10) || next_actors || char(10), char(10) || ? || char(10)) > 0" +
          " OR (instr(char(10) || next_actors || char(10), char(10) || '*' || char(10)) > 0 AND instr(char(10) || next_actors || char(10), char(10) || '!' || ? || char(10)) = 0))",
      );
      params.push(q.waitingOn, q.waitingOn);
      key.push("w");
    }
    // Column filters of one MATCH expression, each a quoted phrase built here.
    const fts: string[] = [];
    if (q.participant !== "") {
      if ([...q.participant].length >= TRIGRAM) {
        fts.push(`parts : ${phrase(q.participant)}`);
        key.push("P");
      } else {
        parts.push("instr(participants_lc, ?) > 0");
        params.push(q.participant);
        key.push("p2");
      }
    }
    if (q.text !== "") {
      if ([...q.text].length >= TRIGRAM) {
        fts.push(`hay : ${phrase(q.text)}`);
        key.push("T");
      } else {
        parts.push("instr(hay, ?) > 0");
        params.push(q.text);
        key.push("t2");
      }
    }
    if (fts.length > 0) {
      parts.push("n IN (SELECT rowid FROM sessions_fts WHERE sessions_fts MATCH ?)");
      params.push(fts.join(" AND "));
    }
    return { sql: parts.length > 0 ? `WHERE ${parts.join(" AND ")}` : "", params, key: key.join(",") };
  }

  page(q: CatalogQuery, offset: number, limit: number): CatalogPage {
    const w = this.where(q);
    const col = SORT_COLUMN[q.sort];
    const dir = q.ascending ? "ASC" : "DESC";
    const order = q.sort === "activity" ? `activity_ms ${dir}, session_id ASC` : `${col} ${dir}, activity_ms DESC, session_id ASC`;
    const sqlKey = `${w.key}|${q.sort}|${dir}`;
    let stmt = this.pageCache.get(sqlKey);
    if (!stmt) {
      stmt = this.db.prepare(`SELECT summary, next_actors FROM sessions ${w.sql} ORDER BY ${order} LIMIT ? OFFSET ?`);
      this.pageCache.set(sqlKey, stmt);
    }
    const read = this.db.transaction(() => {
      const rows = (stmt.all(...w.params, limit, offset) as { summary: Uint8Array; next_actors: string }[]).map((r) =>
        withWaitingOn(r.summary, r.next_actors),
      );
      return { rows, total: this.countWhere(w), version: this.currentVersion };
    });
    return read();
  }

  count(q: CatalogQuery): number {
    return this.countWhere(this.where(q));
  }

  private countWhere(w: { sql: string; params: (string | number)[]; key: string }): number {
    const sqlKey = `count|${w.key}`;
    let stmt = this.pageCache.get(sqlKey);
    if (!stmt) {
      stmt = this.db.prepare(`SELECT count(*) AS c FROM sessions ${w.sql}`);
      this.pageCache.set(sqlKey, stmt);
    }
    return (stmt.get(...w.params) as { c: number }).c;
  }

  changedSince(version: number, limit: number): CatalogChanges {
    const rows = this.stmts.changed.all(version, limit + 1);
    const listed = rows.slice(0, limit);
    return {
      ids: listed.map((r) => r.session_id),
      overflow: rows.length > limit,
      version: this.currentVersion,
      through: listed.at(-1)?.version ?? version,
    };
  }

  scan(after: number, limit: number): { rows: SessionSummary[]; last: number } {
    const rows = this.stmts.scan.all(after, limit);
    return { rows: rows.map((r) => fromBinary(SessionSummarySchema, r.summary)), last: rows.at(-1)?.n ?? after };
  }

  pendingReads(after: number, now: number, limit: number, openOnly = false): PendingRead[] {
    return (openOnly ? this.stmts.pendingOpen : this.stmts.pending)
      .all(after, now, limit)
      .map((r) => ({ sessionId: r.session_id, position: r.n }));
  }

  deferRead(sessionId: string, until: number): void {
    this.stmts.defer.run(Math.trunc(until), sessionId);
  }

  nextDeferred(): number | undefined {
    return this.stmts.nextDeferred.get()?.t ?? undefined;
  }

  counts(): CatalogCounts {
    return { known: this.stmts.known.get()?.c ?? 0, pending: this.stmts.pendingCount.get()?.c ?? 0 };
  }

  resetUnfinished(): number {
    return this.stmts.reset.run().changes;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
