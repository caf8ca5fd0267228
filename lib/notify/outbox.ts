// The notifier's SQLite file (webhooks.sqlite next to the console catalog):
// the catalog version notified through (the cursor), the last notified state
// of each open session, and the outbox of deliveries. Events are derived,
// stored and the cursor moved in one transaction, so a restart neither loses
// nor repeats an event. Delivered rows are pruned (the last few per hook stay
// for the admin page), closed sessions' states are dropped after a day: the
// file grows with what is in flight, not with history.
import type Database from "better-sqlite3";
import { openSideDatabase } from "@/lib/base/side-database";
import type { Snapshot } from "./events";

/** Backoff before attempt `attempt + 1` after `attempt` failures: 1 s, 2 s, 4 s ... capped, with jitter in [d/2, d]. */
export function backoffMs(attempt: number, random: () => number = Math.random, baseMs = 1_000, capMs = 600_000): number {
  const exp = Math.min(capMs, baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
  return Math.round(exp / 2 + random() * (exp / 2));
}

export type DeliveryStatus = "pending" | "delivered" | "failed";

export interface OutboxRow {
  n: number;
  deliveryId: string;
  hookId: string;
  event: string;
  sessionId: string;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  nextAtMs: number;
  createdMs: number;
  lastStatus: number;
  lastError: string;
  lastAttemptMs: number;
}

export interface NewDelivery {
  deliveryId: string;
  hookId: string;
  event: string;
  sessionId: string;
  body: string;
}

export interface StateChange {
  sessionId: string;
  /** null: forget the session. */
  snapshot: Snapshot | null;
  closed: boolean;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS notified (
  session_id TEXT PRIMARY KEY,
  snapshot TEXT NOT NULL,
  closed INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS notified_closed ON notified (updated_ms) WHERE closed = 1;
CREATE TABLE IF NOT EXISTS outbox (
  n INTEGER PRIMARY KEY,
  delivery_id TEXT NOT NULL UNIQUE,
  hook_id TEXT NOT NULL,
  event TEXT NOT NULL,
  session_id TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER NOT NULL,
  created_ms INTEGER NOT NULL,
  last_status INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT '',
  last_attempt_ms INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (hook_id, next_at, n) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS outbox_hook ON outbox (hook_id, status, n);
`;

interface Raw {
  n: number;
  delivery_id: string;
  hook_id: string;
  event: string;
  session_id: string;
  body: string;
  status: string;
  attempts: number;
  next_at: number;
  created_ms: number;
  last_status: number;
  last_error: string;
  last_attempt_ms: number;
}

const row = (r: Raw): OutboxRow => ({
  n: r.n,
  deliveryId: r.delivery_id,
  hookId: r.hook_id,
  event: r.event,
  sessionId: r.session_id,
  body: r.body,
  status: r.status as DeliveryStatus,
  attempts: r.attempts,
  nextAtMs: r.next_at,
  createdMs: r.created_ms,
  lastStatus: r.last_status,
  lastError: r.last_error,
  lastAttemptMs: r.last_attempt_ms,
});

export class NotifyStore {
  private readonly db: Database.Database;
  private readonly stmts;

  constructor(file: string) {
    this.db = openSideDatabase(file, SCHEMA);
    this.stmts = {
      getMeta: this.db.prepare<[string], { value: string }>("SELECT value FROM meta WHERE key = ?"),
      setMeta: this.db.prepare<[string, string]>(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      ),
      getState: this.db.prepare<[string], { snapshot: string; closed: number }>(
        "SELECT snapshot, closed FROM notified WHERE session_id = ?",
      ),
      putState: this.db.prepare<[string, string, number, number]>(
        "INSERT INTO notified (session_id, snapshot, closed, updated_ms) VALUES (?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET snapshot = excluded.snapshot, closed = excluded.closed, updated_ms = excluded.updated_ms",
      ),
      dropState: this.db.prepare<[string]>("DELETE FROM notified WHERE session_id = ?"),
      pruneClosed: this.db.prepare<[number]>("DELETE FROM notified WHERE closed = 1 AND updated_ms < ?"),
      clearStates: this.db.prepare("DELETE FROM notified"),
      insert: this.db.prepare<[string, string, string, string, string, number, number]>(
        "INSERT OR IGNORE INTO outbox (delivery_id, hook_id, event, session_id, body, status, next_at, created_ms) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
      ),
      due: this.db.prepare<[string, number], Raw>(
        "SELECT * FROM outbox WHERE hook_id = ? AND status = 'pending' AND next_at <= ? ORDER BY next_at, n LIMIT 1",
      ),
      nextDue: this.db.prepare<[], { t: number | null }>("SELECT MIN(next_at) AS t FROM outbox WHERE status = 'pending'"),
      nextDueFor: this.db.prepare<[string], { t: number | null }>(
        "SELECT MIN(next_at) AS t FROM outbox WHERE hook_id = ? AND status = 'pending'",
      ),
      attempt: this.db.prepare<[string, number, number, string, number, number]>(
        "UPDATE outbox SET status = ?, attempts = attempts + 1, last_status = ?, next_at = ?, last_error = ?, last_attempt_ms = ? WHERE n = ?",
      ),
      recent: this.db.prepare<[string, number], Raw>("SELECT * FROM outbox WHERE hook_id = ? ORDER BY n DESC LIMIT ?"),
      countBy: this.db.prepare<[string, string], { c: number }>("SELECT COUNT(*) AS c FROM outbox WHERE hook_id = ? AND status = ?"),
      pruneStatus: this.db.prepare<[string, string, string, string, number]>(
        "DELETE FROM outbox WHERE hook_id = ? AND status = ? AND n < COALESCE((SELECT n FROM outbox WHERE hook_id = ? AND status = ? ORDER BY n DESC LIMIT 1 OFFSET ?), 0)",
      ),
      oldestPending: this.db.prepare<[string, number], { n: number }>(
        "SELECT n FROM outbox WHERE hook_id = ? AND status = 'pending' ORDER BY n LIMIT ?",
      ),
      dropRow: this.db.prepare<[number]>("DELETE FROM outbox WHERE n = ?"),
      dropHooksExcept: this.db.prepare<[string]>("DELETE FROM outbox WHERE hook_id NOT IN (SELECT value FROM json_each(?))"),
    };
  }

  /** Catalog version notified through; null before the first baseline. */
  get cursor(): number | null {
    const v = this.stmts.getMeta.get("cursor")?.value;
    return v === undefined ? null : Number(v);
  }

  /** The catalog the cursor belongs to (its file and source). */
  get catalogId(): string | null {
    return this.stmts.getMeta.get("catalog")?.value ?? null;
  }

  state(sessionId: string): { snapshot: Snapshot; closed: boolean } | undefined {
    const r = this.stmts.getState.get(sessionId);
    return r ? { snapshot: JSON.parse(r.snapshot) as Snapshot, closed: r.closed === 1 } : undefined;
  }

  /** States, new deliveries and the cursor, in one transaction. */
  commit(changes: readonly StateChange[], deliveries: readonly NewDelivery[], cursor: number, now = Date.now()): void {
    this.db.transaction(() => {
      for (const c of changes) {
        if (c.snapshot === null) this.stmts.dropState.run(c.sessionId);
        else this.stmts.putState.run(c.sessionId, JSON.stringify(c.snapshot), c.closed ? 1 : 0, now);
      }
      for (const d of deliveries) this.stmts.insert.run(d.deliveryId, d.hookId, d.event, d.sessionId, d.body, now, now);
      this.stmts.setMeta.run("cursor", String(cursor));
    })();
  }

  /** Deliveries not derived from the catalog (an escalation's); a delivery id already queued is ignored. */
  enqueue(deliveries: readonly NewDelivery[], now = Date.now()): void {
    this.db.transaction(() => {
      for (const d of deliveries) this.stmts.insert.run(d.deliveryId, d.hookId, d.event, d.sessionId, d.body, now, now);
    })();
  }

  /** Start over against another catalog: states forgotten, cursor set (the outbox keeps what is in flight). */
  rebase(catalogId: string, cursor: number): void {
    this.db.transaction(() => {
      this.stmts.clearStates.run();
      this.stmts.setMeta.run("catalog", catalogId);
      this.stmts.setMeta.run("cursor", String(cursor));
    })();
  }

  /** The next due delivery of a hook (oldest first). */
  due(hookId: string, now: number): OutboxRow | undefined {
    const r = this.stmts.due.get(hookId, now);
    return r ? row(r) : undefined;
  }

  /** When the next pending delivery (of one hook) is due. */
  nextDueMs(hookId?: string): number | undefined {
    return (hookId === undefined ? this.stmts.nextDue.get() : this.stmts.nextDueFor.get(hookId))?.t ?? undefined;
  }

  /** Record an attempt's result. */
  recordAttempt(n: number, status: DeliveryStatus, httpStatus: number, error: string, nextAtMs: number, now = Date.now()): void {
    this.stmts.attempt.run(status, httpStatus, nextAtMs, error.slice(0, 500), now, n);
  }

  recent(hookId: string, limit: number): OutboxRow[] {
    return this.stmts.recent.all(hookId, limit).map(row);
  }

  count(hookId: string, status: DeliveryStatus): number {
    return this.stmts.countBy.get(hookId, status)?.c ?? 0;
  }

  /**
   * Keep at most `keepDone` delivered and `keepFailed` given-up rows per hook
   * and at most `maxPending` pending ones (the oldest dropped: returns how
   * many); closed sessions' states older than `closedTtlMs` go.
   */
  prune(
    hookIds: readonly string[],
    keepDone: number,
    keepFailed: number,
    maxPending: number,
    closedTtlMs: number,
    now = Date.now(),
  ): number {
    let dropped = 0;
    this.db.transaction(() => {
      this.stmts.dropHooksExcept.run(JSON.stringify(hookIds));
      for (const id of hookIds) {
        this.stmts.pruneStatus.run(id, "delivered", id, "delivered", keepDone - 1);
        this.stmts.pruneStatus.run(id, "failed", id, "failed", keepFailed - 1);
        const over = this.count(id, "pending") - maxPending;
        if (over > 0) {
          for (const r of this.stmts.oldestPending.all(id, over)) this.stmts.dropRow.run(r.n);
          dropped += over;
        }
      }
      this.stmts.pruneClosed.run(now - closedTtlMs);
    })();
    return dropped;
  }

  close(): void {
    this.db.close();
  }
}
