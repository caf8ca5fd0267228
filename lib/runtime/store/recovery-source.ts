// Reading a damaged database's scratch copies for recovery (recovery.ts):
// each copy opened read-only, its log rows streamed in position order a
// chunk at a time (skipping over pages SQLite cannot read), each row checked
// against its checksum before it counts.
import Database from "better-sqlite3";
import { asError, isRecordKind } from "./common";
import { policyCrc, recordCrc } from "./row-crc";
import type { LogRecord, PolicyRecord } from "./types";

export interface UnreadableRange {
  /** Last position read before the damage (exclusive). */
  afterPosition: number;
  /** First position readable again (exclusive), or null if nothing after it could be read. */
  beforePosition: number | null;
  error: string;
}

/** Rows fetched per query from a damaged copy. */
const READ_CHUNK = 256;
export interface RawRow {
  position: number;
  session_id: unknown;
  kind: unknown;
  seq: unknown;
  recv_ms: unknown;
  envelope: unknown;
  bound_policy: unknown;
  crc: unknown;
}

const ROW_COLUMNS = "position, session_id, kind, seq, recv_ms, envelope, bound_policy, crc";

/** A row as a verified record, or why it is not one. */
export function decodeRow(row: RawRow): { record: LogRecord } | { error: string } {
  const { session_id, kind, seq, recv_ms, envelope, bound_policy, crc } = row;
  if (
    typeof session_id !== "string" ||
    session_id.length === 0 ||
    !isRecordKind(kind) ||
    typeof seq !== "number" ||
    typeof recv_ms !== "number" ||
    !Buffer.isBuffer(envelope) ||
    (bound_policy !== null && !Buffer.isBuffer(bound_policy)) ||
    typeof crc !== "number"
  ) {
    return { error: "unexpected column types" };
  }
  const record: LogRecord = { sessionId: session_id, kind, seq, recvMs: recv_ms, envelope: new Uint8Array(envelope) };
  if (Buffer.isBuffer(bound_policy)) record.boundPolicy = new Uint8Array(bound_policy);
  if (recordCrc(record) !== crc) return { error: "row checksum mismatch" };
  return { record };
}

/** A read-only view of one scratch copy of the damaged database. */
export class Copy {
  readonly db: Database.Database | null;
  readonly openError: string | null;
  private readonly hasLog: boolean;

  constructor(
    readonly label: string,
    file: string,
  ) {
    let db: Database.Database | null = null;
    let openError: string | null = null;
    let hasLog = false;
    try {
      db = new Database(file, { timeout: 1000 });
      // Never let SQLite write a -shm file or another connection in.
      db.pragma("locking_mode = EXCLUSIVE");
      hasLog = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'log'").get() !== undefined;
    } catch (e) {
      openError = asError(e).message;
      if (db?.open) db.close();
      db = null;
    }
    this.db = db;
    this.openError = openError;
    this.hasLog = hasLog;
  }

  /** Rows with position > after, skipping over unreadable stretches (reported through onGap). */
  *rows(onGap: (gap: UnreadableRange) => void): Generator<RawRow> {
    if (!this.db || !this.hasLog) return;
    const chunk = this.db.prepare<[number, number], RawRow>(`SELECT ${ROW_COLUMNS} FROM log WHERE position > ? ORDER BY position LIMIT ?`);
    let after = 0;
    for (;;) {
      let batch: RawRow[];
      try {
        batch = chunk.all(after, READ_CHUNK);
      } catch (e) {
        // Narrow down: rows one by one until the failing one.
        let single: RawRow[] | null = null;
        try {
          single = chunk.all(after, 1);
        } catch {
          const next = this.nextReadable(after);
          onGap({ afterPosition: after, beforePosition: next, error: asError(e).message });
          if (next === null) return;
          after = next - 1;
          continue;
        }
        batch = single;
      }
      if (batch.length === 0) return;
      for (const row of batch) yield row;
      after = batch[batch.length - 1]!.position;
    }
  }

  /** The first position after `after` from which the log can be read again, or null. */
  private nextReadable(after: number): number | null {
    const db = this.db;
    if (!db) return null;
    const probe = db.prepare<[number], { position: number }>("SELECT position FROM log WHERE position > ? ORDER BY position LIMIT 1");
    const tryFrom = (from: number): number | null | "error" => {
      try {
        return probe.get(from)?.position ?? null;
      } catch {
        return "error";
      }
    };
    // Exponential steps until a query works, then bisect back towards the damage.
    let bad = after;
    let step = 1;
    let good: number | null = null;
    let found: number | null = null;
    while (bad + step <= Number.MAX_SAFE_INTEGER) {
      const r = tryFrom(bad + step);
      if (r !== "error") {
        good = bad + step;
        found = r;
        break;
      }
      bad += step;
      step *= 2;
    }
    if (good === null || found === null) return null;
    while (good - bad > 1) {
      const mid = Math.floor((bad + good) / 2);
      const r = tryFrom(mid);
      if (r === "error") bad = mid;
      else {
        good = mid;
        if (r === null) break;
        found = r;
      }
    }
    return found;
  }

  /** The highest position the log claims, or null if even that cannot be read. */
  lastPosition(): number | null {
    if (!this.db || !this.hasLog) return 0;
    try {
      return this.db.prepare<[], { last: number }>("SELECT COALESCE(MAX(position), 0) AS last FROM log").get()?.last ?? 0;
    } catch {
      return null;
    }
  }

  summary(): { records: number; lastPosition: number } {
    if (!this.db || !this.hasLog) return { records: 0, lastPosition: 0 };
    const r = this.db.prepare<[], { n: number; last: number }>("SELECT COUNT(*) AS n, COALESCE(MAX(position), 0) AS last FROM log").get();
    return { records: r?.n ?? 0, lastPosition: r?.last ?? 0 };
  }

  /** Verified policies by id; null if the table cannot be read. Bad rows are listed in `bad`. */
  policies(bad: Set<string>): Map<string, PolicyRecord> | null {
    if (!this.db) return null;
    try {
      const exists = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'policies'").get();
      if (!exists) return new Map();
      const out = new Map<string, PolicyRecord>();
      for (const row of this.db
        .prepare<[], { policy_id: unknown; descriptor: unknown; crc: unknown }>("SELECT policy_id, descriptor, crc FROM policies")
        .iterate()) {
        if (typeof row.policy_id !== "string") continue;
        if (!Buffer.isBuffer(row.descriptor) || typeof row.crc !== "number") {
          bad.add(row.policy_id);
          continue;
        }
        const p: PolicyRecord = { policyId: row.policy_id, descriptor: new Uint8Array(row.descriptor) };
        if (policyCrc(p) === row.crc) out.set(p.policyId, p);
        else bad.add(p.policyId);
      }
      return out;
    } catch {
      return null;
    }
  }

  close(): void {
    if (this.db?.open) this.db.close();
  }
}

/** Merges two position-ordered row streams; yields each position once with the rows both had. */
export function* mergeByPosition(a: Iterator<RawRow>, b: Iterator<RawRow>): Generator<{ position: number; rows: RawRow[] }> {
  let x = a.next();
  let y = b.next();
  while (!x.done || !y.done) {
    if (!x.done && (y.done || x.value.position < y.value.position)) {
      yield { position: x.value.position, rows: [x.value] };
      x = a.next();
    } else if (!y.done && (x.done || y.value.position < x.value.position)) {
      yield { position: y.value.position, rows: [y.value] };
      y = b.next();
    } else if (!x.done && !y.done) {
      yield { position: x.value.position, rows: [x.value, y.value] };
      x = a.next();
      y = b.next();
    }
  }
}

export function describeRow(row: RawRow): { sessionId: string; kind: string; seq: number } {
  return {
    sessionId: typeof row.session_id === "string" ? row.session_id : "?",
    kind: typeof row.kind === "string" ? row.kind : "?",
    seq: typeof row.seq === "number" ? row.seq : 0,
  };
}
