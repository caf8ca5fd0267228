// HandoffHistoryStore on SQLite (better-sqlite3). One row per handoff file
// (its current state, for lists and inboxes) and one row per observed
// snapshot (its timeline), bounded per handoff by `maxSnapshotsPerHandoff`
// entries and `maxContentBytesPerHandoff` bytes of stored documents (the
// oldest entries are dropped and counted). Recording is one IMMEDIATE
// transaction that compares with the last recorded bytes, so several
// processes watching one directory store each change once.

import { isHandoffStatus, serializeDocument, type HandoffStatus, type JsonObject } from "./record";
import {
  HISTORY_CONTENT_LIMIT,
  observedStep,
  type HandoffHistoryStore,
  type HandoffSummary,
  type HistoryEntry,
  type LastRecorded,
  type ListQuery,
  type Observation,
  type ObservationSource,
  type ObservedStep,
  type Page,
} from "./history";
import { openHandoffDb, type Db } from "./sqlite";

interface HandoffRow {
  id: number;
  dir: string;
  name: string;
  task_id: string;
  present: number;
  valid: number;
  problem: string | null;
  status: string | null;
  last_valid_status: string | null;
  from_agent: string | null;
  to_agent: string | null;
  description: string | null;
  created_at: string | null;
  updated_at: string | null;
  last_hash: string | null;
  last_ctime_ms: number | null;
  first_seen_ms: number;
  last_change_ms: number;
  seq: number;
  pruned: number;
  content_bytes: number;
}

interface SnapshotRow {
  handoff_id: number;
  seq: number;
  observed_at_ms: number;
  source: string;
  kind: string;
  valid: number;
  status: string | null;
  to_agent: string | null;
  step: string | null;
  problem: string | null;
  hash: string | null;
  size: number | null;
  content: string | null;
}

export interface SqliteHistoryOptions {
  /** Timeline entries kept per handoff; older ones are dropped. Default 1,000. */
  maxSnapshotsPerHandoff?: number;
  /** Bytes of documents kept per handoff's timeline; older entries are dropped. Default 4 MiB. */
  maxContentBytesPerHandoff?: number;
}

const STEPS: ReadonlySet<string> = new Set(["first", "same", "legal", "gap", "illegal"]);
const SOURCES: ReadonlySet<string> = new Set(["initial", "watch", "poll"]);

function statusOrUndefined(v: string | null): HandoffStatus | undefined {
  return v !== null && isHandoffStatus(v) ? v : undefined;
}

function toSummary(r: HandoffRow): HandoffSummary {
  const s: HandoffSummary = {
    id: r.id,
    dir: r.dir,
    name: r.name,
    taskId: r.task_id,
    present: r.present === 1,
    valid: r.valid === 1,
    firstSeenMs: r.first_seen_ms,
    lastChangeMs: r.last_change_ms,
    snapshots: r.seq,
    pruned: r.pruned,
  };
  const status = statusOrUndefined(r.status);
  if (r.problem !== null) s.problem = r.problem;
  if (r.last_hash !== null && r.present === 1) s.hash = r.last_hash;
  if (status) s.status = status;
  if (r.from_agent !== null) s.fromAgent = r.from_agent;
  if (r.to_agent !== null) s.toAgent = r.to_agent;
  if (r.description !== null) s.description = r.description;
  if (r.created_at !== null) s.createdAt = r.created_at;
  if (r.updated_at !== null) s.updatedAt = r.updated_at;
  return s;
}

function toEntry(r: SnapshotRow): HistoryEntry {
  const e: HistoryEntry = {
    handoffId: r.handoff_id,
    seq: r.seq,
    observedAtMs: r.observed_at_ms,
    source: (SOURCES.has(r.source) ? r.source : "watch") as ObservationSource,
    kind: r.kind === "removed" ? "removed" : "snapshot",
    valid: r.valid === 1,
  };
  const status = statusOrUndefined(r.status);
  if (status) e.status = status;
  if (r.to_agent !== null) e.toAgent = r.to_agent;
  if (r.step !== null && STEPS.has(r.step)) e.step = r.step as ObservedStep;
  if (r.problem !== null) e.problem = r.problem;
  if (r.hash !== null) e.hash = r.hash;
  if (r.size !== null) e.size = r.size;
  if (r.content !== null) {
    try {
      e.document = JSON.parse(r.content) as JsonObject;
    } catch {
      // Stored by this module from a parsed document; unreachable unless edited by hand.
    }
  }
  return e;
}

function encodeCursor(a: number, b: number): string {
  return `${a}.${b}`;
}

function decodeCursor(cursor: string | undefined): [number, number] | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  const m = /^(\d+)\.(\d+)$/.exec(cursor);
  if (!m) throw new RangeError(`bad cursor ${JSON.stringify(cursor)}`);
  return [Number(m[1]), Number(m[2])];
}

export class SqliteHistoryStore implements HandoffHistoryStore {
  private readonly db: Db;
  private readonly maxSnapshots: number;
  private readonly maxContentBytes: number;
  private readonly stmts;

  constructor(file: string, opts: SqliteHistoryOptions = {}) {
    this.db = openHandoffDb(file);
    this.maxSnapshots = Math.max(2, opts.maxSnapshotsPerHandoff ?? 1_000);
    this.maxContentBytes = Math.max(HISTORY_CONTENT_LIMIT, opts.maxContentBytesPerHandoff ?? 4 * 1024 * 1024);
    const db = this.db;
    this.stmts = {
      byName: db.prepare<[string, string], HandoffRow>("SELECT * FROM handoff WHERE dir = ? AND name = ?"),
      byId: db.prepare<[number], HandoffRow>("SELECT * FROM handoff WHERE id = ?"),
      byTask: db.prepare<[string], HandoffRow>("SELECT * FROM handoff WHERE task_id = ? ORDER BY last_change_ms DESC LIMIT 100"),
      insertHandoff: db.prepare(
        "INSERT INTO handoff (dir, name, task_id, present, valid, first_seen_ms, last_change_ms) VALUES (?, ?, ?, 0, 0, ?, ?)",
      ),
      updateHandoff: db.prepare(`UPDATE handoff SET task_id = @task_id, present = @present, valid = @valid, problem = @problem,
        status = @status, last_valid_status = @last_valid_status, from_agent = @from_agent, to_agent = @to_agent,
        description = @description, created_at = @created_at, updated_at = @updated_at, last_hash = @last_hash,
        last_ctime_ms = @last_ctime_ms, last_change_ms = @last_change_ms, seq = @seq, pruned = @pruned, content_bytes = @content_bytes WHERE id = @id`),
      insertSnapshot:
        db.prepare(`INSERT INTO snapshot (handoff_id, seq, observed_at_ms, source, kind, valid, status, to_agent, step, problem, hash, size, content)
        VALUES (@handoff_id, @seq, @observed_at_ms, @source, @kind, @valid, @status, @to_agent, @step, @problem, @hash, @size, @content)`),
      prune: db.prepare<[number, number]>("DELETE FROM snapshot WHERE handoff_id = ? AND seq <= ?"),
      oldest: db.prepare<[number, number], { seq: number; bytes: number | null }>(
        "SELECT seq, LENGTH(CAST(content AS BLOB)) AS bytes FROM snapshot WHERE handoff_id = ? AND seq > ? ORDER BY seq LIMIT 256",
      ),
      bytesUpTo: db.prepare<[number, number, number], { bytes: number | null }>(
        "SELECT SUM(LENGTH(CAST(content AS BLOB))) AS bytes FROM snapshot WHERE handoff_id = ? AND seq > ? AND seq <= ?",
      ),
      present: db.prepare<[string], { name: string }>("SELECT name FROM handoff WHERE dir = ? AND present = 1"),
      history: db.prepare<[number, number, number], SnapshotRow>(
        "SELECT * FROM snapshot WHERE handoff_id = ? AND seq > ? ORDER BY seq LIMIT ?",
      ),
    };
  }

  record(obs: Observation): HistoryEntry | undefined {
    return this.db
      .transaction((): HistoryEntry | undefined => {
        let row = this.stmts.byName.get(obs.dir, obs.name);
        const snap = obs.snapshot;
        if (row) {
          if (!snap && row.present === 0) return undefined;
          if (snap && row.present === 1 && row.last_hash === snap.hash) return undefined;
          // A lagging observer's older read of a file another process recorded newer
          // (ctime, unlike mtime, cannot be set back and moves on every rename).
          if (snap?.ctimeMs !== undefined && row.present === 1 && row.last_ctime_ms !== null && snap.ctimeMs < row.last_ctime_ms)
            return undefined;
        } else {
          if (!snap) return undefined;
          const taskId = snap.valid ? snap.record.task_id : obs.name.slice(0, -".json".length);
          const id = Number(this.stmts.insertHandoff.run(obs.dir, obs.name, taskId, obs.observedAtMs, obs.observedAtMs).lastInsertRowid);
          row = this.stmts.byId.get(id) as HandoffRow;
        }
        const reappeared = row.present === 0;
        const base = reappeared ? undefined : statusOrUndefined(row.last_valid_status);
        const { step, problem: stepProblem } = snap ? observedStep(base, snap) : {};
        const illegal = step === "illegal";
        const seq = row.seq + 1;
        let content: string | null = null;
        if (snap?.valid) {
          const text = serializeDocument(snap.document);
          if (Buffer.byteLength(text, "utf8") <= HISTORY_CONTENT_LIMIT) content = text;
        }
        const problem = snap ? (snap.valid ? (stepProblem ?? null) : snap.reason) : null;
        const entryRow: SnapshotRow = {
          handoff_id: row.id,
          seq,
          observed_at_ms: obs.observedAtMs,
          source: obs.source,
          kind: snap ? "snapshot" : "removed",
          valid: snap ? (snap.valid && !illegal ? 1 : 0) : 0,
          status: snap?.valid ? snap.record.status : null,
          to_agent: snap?.valid ? snap.record.to_agent : null,
          step: step ?? null,
          problem,
          hash: snap?.hash ?? null,
          size: snap?.size ?? null,
          content,
        };
        this.stmts.insertSnapshot.run(entryRow);
        // Keep the timeline within its entry and byte budgets, dropping the oldest entries.
        let contentBytes = row.content_bytes + (content === null ? 0 : Buffer.byteLength(content, "utf8"));
        let pruned = row.pruned;
        let upTo = Math.max(pruned, seq - this.maxSnapshots);
        if (upTo > pruned) contentBytes -= this.stmts.bytesUpTo.get(row.id, pruned, upTo)?.bytes ?? 0;
        while (contentBytes > this.maxContentBytes && upTo < seq - 1) {
          const batch = this.stmts.oldest.all(row.id, upTo);
          for (const r of batch) {
            if (contentBytes <= this.maxContentBytes || r.seq >= seq) break;
            contentBytes -= r.bytes ?? 0;
            upTo = r.seq;
          }
          if (batch.length === 0) break;
        }
        if (upTo > pruned) {
          this.stmts.prune.run(row.id, upTo);
          pruned = upTo;
        }
        const valid = snap?.valid ? snap : undefined;
        this.stmts.updateHandoff.run({
          id: row.id,
          task_id: valid ? valid.record.task_id : row.task_id,
          present: snap ? 1 : 0,
          valid: snap ? (snap.valid && !illegal ? 1 : 0) : row.valid,
          problem: snap ? problem : row.problem,
          status: valid ? valid.record.status : reappeared ? null : row.status,
          // An illegal step does not move the baseline: after completed → offered, completed is still what the handoff legally is.
          last_valid_status: valid && !illegal ? valid.record.status : snap ? (reappeared ? null : row.last_valid_status) : null,
          from_agent: valid ? valid.record.from_agent : row.from_agent,
          to_agent: valid ? valid.record.to_agent : row.to_agent,
          description: valid ? valid.record.description : row.description,
          created_at: valid ? valid.record.created_at : row.created_at,
          updated_at: valid ? valid.record.updated_at : row.updated_at,
          last_hash: snap?.hash ?? null,
          last_ctime_ms: snap?.ctimeMs ?? null,
          last_change_ms: obs.observedAtMs,
          seq,
          pruned,
          content_bytes: contentBytes,
        });
        return toEntry(entryRow);
      })
      .immediate();
  }

  last(dir: string, name: string): LastRecorded | undefined {
    const row = this.stmts.byName.get(dir, name);
    if (!row) return undefined;
    const out: LastRecorded = { present: row.present === 1, valid: row.valid === 1 };
    if (row.last_hash !== null) out.hash = row.last_hash;
    const lvs = row.present === 1 ? statusOrUndefined(row.last_valid_status) : undefined;
    if (lvs) out.lastValidStatus = lvs;
    return out;
  }

  *presentNames(dir: string): Iterable<string> {
    for (const r of this.stmts.present.iterate(dir)) yield r.name;
  }

  list(query: ListQuery = {}): Page<HandoffSummary> {
    const limit = Math.min(Math.max(query.limit ?? 50, 1), 500);
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (!query.includeRemoved) where.push("present = 1");
    if (query.dirs?.length) {
      where.push(`dir IN (${query.dirs.map(() => "?").join(",")})`);
      args.push(...query.dirs);
    }
    if (query.statuses?.length) {
      where.push(`status IN (${query.statuses.map(() => "?").join(",")})`);
      args.push(...query.statuses);
    }
    if (query.toAgentIn?.length) {
      where.push(`to_agent IN (${query.toAgentIn.map(() => "?").join(",")})`);
      args.push(...query.toAgentIn);
    }
    const after = decodeCursor(query.cursor);
    if (after) {
      where.push("(last_change_ms < ? OR (last_change_ms = ? AND id < ?))");
      args.push(after[0], after[0], after[1]);
    }
    const sql = `SELECT * FROM handoff ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY last_change_ms DESC, id DESC LIMIT ?`;
    const rows = this.db.prepare<(string | number)[], HandoffRow>(sql).all(...args, limit + 1);
    const items = rows.slice(0, limit).map(toSummary);
    const last = items[items.length - 1];
    return rows.length > limit && last ? { items, next: encodeCursor(last.lastChangeMs, last.id) } : { items };
  }

  get(id: number): HandoffSummary | undefined {
    const row = this.stmts.byId.get(id);
    return row ? toSummary(row) : undefined;
  }

  find(dir: string, name: string): HandoffSummary | undefined {
    const row = this.stmts.byName.get(dir, name);
    return row ? toSummary(row) : undefined;
  }

  findByTaskId(taskId: string): HandoffSummary[] {
    return this.stmts.byTask.all(taskId).map(toSummary);
  }

  history(handoffId: number, opts: { cursor?: string; limit?: number } = {}): Page<HistoryEntry> {
    const limit = Math.min(Math.max(opts.limit ?? 100, 1), 1_000);
    const afterSeq = opts.cursor === undefined || opts.cursor === "" ? 0 : Number(opts.cursor);
    if (!Number.isInteger(afterSeq) || afterSeq < 0) throw new RangeError(`bad cursor ${JSON.stringify(opts.cursor)}`);
    const rows = this.stmts.history.all(handoffId, afterSeq, limit + 1);
    const items = rows.slice(0, limit).map(toEntry);
    const last = items[items.length - 1];
    return rows.length > limit && last ? { items, next: String(last.seq) } : { items };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
