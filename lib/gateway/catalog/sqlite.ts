// The catalog in SQLite (better-sqlite3, WAL): `console.sqlite` in the data
// folder. One row per session with the columns every filter and sort needs
// (sqlite-rows.ts; the tables and indexes in sqlite-schema.ts), the list row
// itself as a protobuf blob, and an FTS5 trigram index for full-text search
// (substring matches over intent, scope, session id, participants, phase,
// mode and context id; queries as SQL in sqlite-where.ts).
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
// runtime and the watched directories (migrations: sqlite-schema.ts).
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
import type { CatalogQuery } from "./query";
import { columns, withWaitingOn, type RowKind } from "./sqlite-rows";
import { bindCatalogSource, DELETE_MACP_ROWS, migrateCatalog } from "./sqlite-schema";
import { prepareStatements, type CatalogStatements } from "./sqlite-statements";
import { orderOf, whereOf, type Where } from "./sqlite-where";
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

export { ANYONE, EXCEPT, stuckSinceOf, waitingOnOf, type RowKind } from "./sqlite-rows";
export { CATALOG_SCHEMA_VERSION } from "./sqlite-schema";

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
  private readonly stmts: CatalogStatements;
  private readonly pageCache = new Map<string, Database.Statement>();

  constructor(options: SqliteCatalogOptions) {
    if (options.path !== ":memory:") fs.mkdirSync(path.dirname(options.path), { recursive: true });
    this.db = new Database(options.path);
    try {
      this.db.pragma("journal_mode = WAL");
      // A read model: a crash may lose the last writes, which the feeder reads again.
      this.db.pragma("synchronous = NORMAL");
      this.db.pragma("busy_timeout = 5000");
      this.migratedFrom = migrateCatalog(this.db);
      if (options.source !== undefined) this.replacedSource = bindCatalogSource(this.db, options.source);
    } catch (e) {
      this.db.close();
      throw e;
    }
    this.stmts = prepareStatements(this.db);
    this.currentVersion = Number(
      this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'version'").get()?.value ?? "0",
    );
    const storeId = this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'feed_store'").get()?.value;
    const change = this.db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'feed_change'").get()?.value;
    this.feedCursor =
      storeId !== undefined && change !== undefined && /^\d+$/.test(change) ? { storeId, change: BigInt(change) } : undefined;
  }

  private feedCursor: FeedCursor | undefined;
  /**
   * `counts()` as of the last change to the rows: two `count(*)`s over the whole table take tens of
   * milliseconds at 100,000 sessions, and every page read reports them (the catalog's status).
   * Anything that inserts, updates or deletes rows drops it (`rowsChanged`).
   */
  private cachedCounts: Readonly<CatalogCounts> | undefined;

  /** The schema the file was migrated from at open (0: none needed). */
  migratedFrom = 0;

  /** Set when the file was emptied because it described another runtime. */
  replacedSource: string | null = null;

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
      if (reset) {
        this.rowsChanged();
        this.db.exec(DELETE_MACP_ROWS);
      }
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
    this.rowsChanged();
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
        this.rowsChanged();
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

  page(q: CatalogQuery, offset: number, limit: number): CatalogPage {
    const w = whereOf(q);
    const order = orderOf(q);
    const sqlKey = `${w.key}|${order.key}`;
    let stmt = this.pageCache.get(sqlKey);
    if (!stmt) {
      stmt = this.db.prepare(`SELECT summary, next_actors FROM sessions ${w.sql} ORDER BY ${order.sql} LIMIT ? OFFSET ?`);
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
    return this.countWhere(whereOf(q));
  }

  private countWhere(w: Where): number {
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
    this.cachedCounts ??= Object.freeze({ known: this.stmts.known.get()?.c ?? 0, pending: this.stmts.pendingCount.get()?.c ?? 0 });
    return this.cachedCounts;
  }

  resetUnfinished(): number {
    this.rowsChanged();
    return this.stmts.reset.run().changes;
  }

  /** The rows are about to change: counts are read again next time. */
  private rowsChanged(): void {
    this.cachedCounts = undefined;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
