// The escalation chains' SQLite file (escalations.sqlite next to the
// catalog): one row per chain, its body as JSON, the due index the scheduler
// reads, and the sessions each chain has watched.
import type Database from "better-sqlite3";
import { openSideDatabase } from "@/lib/base/side-database";
import type { EscalationRecord } from "./model";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS escalations (
  origin TEXT PRIMARY KEY,
  state TEXT NOT NULL,
  next_at INTEGER NOT NULL,
  body TEXT NOT NULL,
  updated_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS escalations_due ON escalations (next_at) WHERE state = 'pending';
CREATE TABLE IF NOT EXISTS escalation_sessions (
  session_id TEXT PRIMARY KEY,
  origin TEXT NOT NULL
) STRICT;
`;

/** Finished chains kept (for the session pages that show them); older ones are pruned. */
const KEEP_FINISHED = 10_000;

export class EscalationStore {
  private readonly db: Database.Database;
  private readonly stmts;

  constructor(file: string) {
    this.db = openSideDatabase(file, SCHEMA);
    this.stmts = {
      get: this.db.prepare<[string], { body: string }>("SELECT body FROM escalations WHERE origin = ?"),
      originOf: this.db.prepare<[string], { origin: string }>("SELECT origin FROM escalation_sessions WHERE session_id = ?"),
      put: this.db.prepare<[string, string, number, string, number]>(
        "INSERT INTO escalations (origin, state, next_at, body, updated_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT(origin) DO UPDATE SET state = excluded.state, next_at = excluded.next_at, body = excluded.body, updated_ms = excluded.updated_ms",
      ),
      link: this.db.prepare<[string, string]>("INSERT OR IGNORE INTO escalation_sessions (session_id, origin) VALUES (?, ?)"),
      due: this.db.prepare<[number, number], { body: string }>(
        "SELECT body FROM escalations WHERE state = 'pending' AND next_at <= ? ORDER BY next_at LIMIT ?",
      ),
      next: this.db.prepare<[], { next_at: number }>("SELECT next_at FROM escalations WHERE state = 'pending' ORDER BY next_at LIMIT 1"),
      pending: this.db.prepare<[number], { body: string }>("SELECT body FROM escalations WHERE state = 'pending' ORDER BY next_at LIMIT ?"),
      finishedCount: this.db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM escalations WHERE state <> 'pending'"),
      pruneLinks: this.db.prepare<[number]>(
        "DELETE FROM escalation_sessions WHERE origin IN (SELECT origin FROM escalations WHERE state <> 'pending' ORDER BY updated_ms LIMIT ?)",
      ),
      prune: this.db.prepare<[number]>(
        "DELETE FROM escalations WHERE origin IN (SELECT origin FROM escalations WHERE state <> 'pending' ORDER BY updated_ms LIMIT ?)",
      ),
    };
  }

  get(origin: string): EscalationRecord | undefined {
    const r = this.stmts.get.get(origin);
    return r ? (JSON.parse(r.body) as EscalationRecord) : undefined;
  }

  /** The chain a session belongs to (its origin or any session a re-offer made). */
  bySession(sessionId: string): EscalationRecord | undefined {
    const o = this.stmts.originOf.get(sessionId);
    return o ? this.get(o.origin) : undefined;
  }

  /** Write a chain (and index its sessions), in one transaction. */
  put(rec: EscalationRecord): void {
    this.db.transaction(() => {
      this.stmts.put.run(rec.origin, rec.state, rec.state === "pending" ? rec.nextAtMs : 0, JSON.stringify(rec), rec.updatedMs);
      for (const s of rec.sessionIds) this.stmts.link.run(s, rec.origin);
    })();
  }

  /**
   * Read, change and write one chain in a transaction; the change is not
   * applied (undefined) when `change` returns undefined.
   */
  update(origin: string, change: (rec: EscalationRecord) => EscalationRecord | undefined): EscalationRecord | undefined {
    return this.db.transaction(() => {
      const rec = this.get(origin);
      if (!rec) return undefined;
      const next = change(rec);
      if (next) this.put(next);
      return next;
    })();
  }

  due(now: number, limit: number): EscalationRecord[] {
    return this.stmts.due.all(now, limit).map((r) => JSON.parse(r.body) as EscalationRecord);
  }

  /** Chains still running, soonest first (at most `limit`). */
  pending(limit: number): EscalationRecord[] {
    return this.stmts.pending.all(limit).map((r) => JSON.parse(r.body) as EscalationRecord);
  }

  nextDueMs(): number | undefined {
    return this.stmts.next.get()?.next_at;
  }

  /** Keep at most `keep` finished chains (oldest go first). */
  prune(keep = KEEP_FINISHED): number {
    const n = this.stmts.finishedCount.get()?.n ?? 0;
    if (n <= keep) return 0;
    return this.db.transaction(() => {
      this.stmts.pruneLinks.run(n - keep);
      return this.stmts.prune.run(n - keep).changes;
    })();
  }

  close(): void {
    this.db.close();
  }
}
