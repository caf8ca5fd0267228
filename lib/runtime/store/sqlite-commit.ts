// The SQLite store's write side: the CommitBackend its GroupCommitWriter
// drives. One batch (log rows and their message ids, list rows, policies,
// then the session-index rows as they stand after it, and the counters) is
// applied in ONE immediate transaction: it commits whole or not at all.
import type Database from "better-sqlite3";
import { listRowCrc, messageCrc, policyCrc, recordCrc, sessionRowCrc } from "./row-crc";
import type { SessionDraft } from "./session-drafts";
import { SQL, type SqliteStatements } from "./sqlite-schema";
import { isResidentStatus, type ListRow, type LogRecord, type SessionIndexEntry, type StoredListRow } from "./types";
import type { CommitBackend, StoreOp } from "./writer";

/** What the backend reads from and reports to the store it writes for. */
export interface CommitHooks {
  /** Highest list change committed so far. */
  listChange(): number;
  /** A batch committed: the list-change counter is now `change`; `complete`: the list-row backfill finished. */
  committed(change: number, complete: boolean): void;
  /** TEST ONLY: the fault to inject into this batch (taken: the next batch has none), or null. */
  takeFault(): Error | "constraint" | null;
}

function insertRecord(stmt: SqliteStatements, r: LogRecord): number {
  const info = stmt.insertLog.run(r.sessionId, r.kind, r.seq, r.recvMs, r.envelope, r.boundPolicy ?? null, recordCrc(r));
  return Number(info.lastInsertRowid);
}

export function sqliteCommitBackend(db: Database.Database, stmt: SqliteStatements, hooks: CommitHooks): CommitBackend {
  const tx = db.transaction((ops: readonly StoreOp[], sessions: readonly SessionDraft[]) => {
    const firstPositions = new Map<string, number>();
    let records = 0;
    const lastChange = hooks.listChange();
    let change = lastChange;
    let complete = false;
    const written: StoredListRow[] = [];
    const writeRow = (row: ListRow, onlyIfMissing: boolean) => {
      const stored: StoredListRow = { ...row, change: change + 1 };
      const write = onlyIfMissing ? stmt.insertListRowIfMissing : stmt.upsertListRow;
      const info = write.run(
        row.sessionId,
        stored.change,
        row.final ? 1 : 0,
        row.summary,
        JSON.stringify(row.nextActors),
        listRowCrc(stored),
      );
      if (info.changes === 0) return;
      change = stored.change;
      written.push(stored);
    };
    for (const op of ops) {
      if (op.type === "append") {
        for (const r of op.records) {
          const position = insertRecord(stmt, r);
          records++;
          if (!firstPositions.has(r.sessionId)) firstPositions.set(r.sessionId, position);
          if (r.messageId) stmt.insertMessage.run(r.sessionId, r.messageId, messageCrc(r.sessionId, r.messageId));
        }
        for (const row of op.listRows) writeRow(row, false);
      } else if (op.type === "backfillListRows") {
        for (const row of op.rows) writeRow(row, true);
        if (op.complete) complete = true;
      } else if (op.type === "index") {
        for (const [sessionId, messageId] of op.messages) {
          stmt.insertMessage.run(sessionId, messageId, messageCrc(sessionId, messageId));
        }
      } else if (op.type === "putPolicy") {
        stmt.upsertPolicy.run(op.policy.policyId, op.policy.descriptor, policyCrc(op.policy));
      } else {
        stmt.deletePolicy.run(op.policyId);
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
        stmt.insertSession.run(
          entry.sessionId,
          entry.firstPosition,
          entry.lastSeq,
          entry.status,
          resident ? 1 : 0,
          entry.activityMs,
          entry.metadata,
          crc,
        );
      } else if (isResidentStatus(before.status) !== resident) {
        stmt.updateSessionResidency.run(
          entry.lastSeq,
          entry.status,
          resident ? 1 : 0,
          entry.activityMs,
          entry.metadata,
          crc,
          entry.sessionId,
        );
      } else {
        stmt.updateSession.run(entry.lastSeq, entry.status, entry.activityMs, entry.metadata, crc, entry.sessionId);
      }
    }
    if (records > 0) stmt.bumpRecords.run(records);
    if (change !== lastChange) stmt.setListChange.run(change);
    if (complete) stmt.setMeta.run("1", "list_rows_backfilled");
    const fault = hooks.takeFault();
    if (fault !== null) {
      if (fault === "constraint") db.prepare(SQL.testFault).run();
      else throw fault;
    }
    return { written, change, complete };
  });
  return {
    commit: (ops, sessions) => {
      const done = tx.immediate(ops, sessions);
      // Only once the transaction committed: a rolled-back batch assigned nothing.
      hooks.committed(done.change, done.complete);
      return done.written;
    },
    close: () => {
      if (db.open) db.close();
    },
  };
}
