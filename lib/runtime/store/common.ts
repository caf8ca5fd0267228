// Pieces shared by the SQLite and in-memory stores: the logger contract,
// errors, record validation and copying, and read-side verification. The
// write side's session index drafts are in session-drafts.ts, the row
// checksums in row-crc.ts.
import {
  SESSION_STATUSES,
  StoreCorruptionError,
  type ListRow,
  type LogRecord,
  type PolicyRecord,
  type RecordKind,
  type SessionStatus,
  type SessionSummary,
  type StoredRecord,
} from "./types";

// ------------------------------------------------------------------ logging

/** The subset of a pino logger the store uses. */
export interface StoreLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const noopLogger: StoreLogger = {
  info() {},
  warn() {},
  error() {},
};

// -------------------------------------------------------------------- stats

/** Counters since the store was opened (both implementations). */
export interface StoreStats {
  /** Committed group-commit transactions (each one fsync for SQLite). */
  transactions: number;
  /** Log records committed. */
  records: number;
  /** Policy puts and deletes committed. */
  policyWrites: number;
  /** Transactions that failed and were rolled back. */
  failedTransactions: number;
}

// ------------------------------------------------------------------- errors

/** An append/putPolicy call was refused before being queued; nothing was stored. */
export class InvalidRecordError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidRecordError";
  }
}

/**
 * The store stopped accepting writes after an I/O or corruption error during
 * a commit (after a failed fsync the state of the file is unknown, so it is
 * not safe to keep acknowledging writes). Reads may still work; restart the
 * runtime to recover from what is on disk.
 */
export class StoreFailedError extends Error {
  constructor(message: string, cause: Error) {
    super(message, { cause });
    this.name = "StoreFailedError";
  }
}

/** Error codes after which a store refuses any further write. */
export function isFatalStorageError(err: Error): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== "string") return false;
  return code.startsWith("SQLITE_IOERR") || code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB";
}

export function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

// ------------------------------------------------------- record validation

export const RECORD_KINDS: readonly RecordKind[] = ["envelope", "cancel", "suspend", "resume", "expire"];
const KIND_SET: ReadonlySet<string> = new Set(RECORD_KINDS);
const STATUS_SET: ReadonlySet<string> = new Set(SESSION_STATUSES);

export function isRecordKind(v: unknown): v is RecordKind {
  return typeof v === "string" && KIND_SET.has(v);
}

export function isSessionStatus(v: unknown): v is SessionStatus {
  return typeof v === "string" && STATUS_SET.has(v);
}

/**
 * Check the shape of records handed to append() and return private copies
 * (the caller may reuse its buffers as soon as append() returns). Throws
 * InvalidRecordError naming the offending record.
 */
export function copyValidRecords(records: readonly LogRecord[]): LogRecord[] {
  if (!Array.isArray(records)) throw new InvalidRecordError("append() expects an array of records");
  return records.map((r, i) => {
    const where = `record ${i}`;
    if (typeof r !== "object" || r === null) throw new InvalidRecordError(`${where}: not an object`);
    if (typeof r.sessionId !== "string" || r.sessionId.length === 0) {
      throw new InvalidRecordError(`${where}: sessionId must be a non-empty string`);
    }
    if (!isRecordKind(r.kind)) throw new InvalidRecordError(`${where}: unknown kind ${JSON.stringify(r.kind)}`);
    if (!Number.isSafeInteger(r.seq)) throw new InvalidRecordError(`${where}: seq must be an integer`);
    if (r.kind === "envelope" ? r.seq < 1 : r.seq !== 0) {
      throw new InvalidRecordError(`${where}: seq ${r.seq} is invalid for kind "${r.kind}" (envelopes count from 1, annotations use 0)`);
    }
    if (!Number.isSafeInteger(r.recvMs) || r.recvMs < 0) {
      throw new InvalidRecordError(`${where}: recvMs must be a non-negative integer`);
    }
    if (!(r.envelope instanceof Uint8Array)) throw new InvalidRecordError(`${where}: envelope must be a Uint8Array`);
    if (r.messageId !== undefined) {
      if (typeof r.messageId !== "string") throw new InvalidRecordError(`${where}: messageId must be a string when present`);
      if (r.kind !== "envelope" && r.messageId !== "") {
        throw new InvalidRecordError(`${where}: messageId is only allowed on envelopes`);
      }
    }
    if (r.boundPolicy !== undefined) {
      if (!(r.boundPolicy instanceof Uint8Array)) {
        throw new InvalidRecordError(`${where}: boundPolicy must be a Uint8Array when present`);
      }
      if (r.kind !== "envelope" || r.seq !== 1) {
        throw new InvalidRecordError(`${where}: boundPolicy is only allowed on a SessionStart (envelope, seq 1)`);
      }
    }
    const copy: LogRecord = {
      sessionId: r.sessionId,
      kind: r.kind,
      seq: r.seq,
      recvMs: r.recvMs,
      envelope: new Uint8Array(r.envelope),
    };
    if (r.boundPolicy !== undefined) copy.boundPolicy = new Uint8Array(r.boundPolicy);
    if (r.messageId !== undefined && r.messageId !== "") copy.messageId = r.messageId;
    return copy;
  });
}

/** Check summaries handed to append() and return private copies. */
export function copyValidSummaries(summaries: readonly SessionSummary[] | undefined): SessionSummary[] {
  if (summaries === undefined) return [];
  if (!Array.isArray(summaries)) throw new InvalidRecordError("append() expects summaries as an array");
  return summaries.map((sum, i) => {
    const where = `summary ${i}`;
    if (typeof sum !== "object" || sum === null) throw new InvalidRecordError(`${where}: not an object`);
    if (typeof sum.sessionId !== "string" || sum.sessionId.length === 0) {
      throw new InvalidRecordError(`${where}: sessionId must be a non-empty string`);
    }
    if (!isSessionStatus(sum.status)) throw new InvalidRecordError(`${where}: unknown status ${JSON.stringify(sum.status)}`);
    if (!Number.isSafeInteger(sum.activityMs) || sum.activityMs < 0) {
      throw new InvalidRecordError(`${where}: activityMs must be a non-negative integer`);
    }
    if (!(sum.metadata instanceof Uint8Array)) throw new InvalidRecordError(`${where}: metadata must be a Uint8Array`);
    return { sessionId: sum.sessionId, status: sum.status, activityMs: sum.activityMs, metadata: new Uint8Array(sum.metadata) };
  });
}

/** Most participant ids a list row may name as next actors. */
const MAX_NEXT_ACTORS = 1024;

/**
 * Check list rows handed to append() or backfillListRows() and return private
 * copies. With `sessions` (append), each row must describe a session the same
 * call writes records for: a row travels with the records it folds.
 */
export function copyValidListRows(rows: readonly ListRow[] | undefined, sessions?: ReadonlySet<string>): ListRow[] {
  if (rows === undefined) return [];
  if (!Array.isArray(rows)) throw new InvalidRecordError("list rows must be an array");
  const seen = new Set<string>();
  return rows.map((row, i) => {
    const where = `list row ${i}`;
    if (typeof row !== "object" || row === null) throw new InvalidRecordError(`${where}: not an object`);
    if (typeof row.sessionId !== "string" || row.sessionId.length === 0) {
      throw new InvalidRecordError(`${where}: sessionId must be a non-empty string`);
    }
    if (seen.has(row.sessionId)) throw new InvalidRecordError(`${where}: session ${row.sessionId} has two rows in one call`);
    seen.add(row.sessionId);
    if (sessions && !sessions.has(row.sessionId)) {
      throw new InvalidRecordError(`${where}: session ${row.sessionId} has no records in this append`);
    }
    if (!(row.summary instanceof Uint8Array)) throw new InvalidRecordError(`${where}: summary must be a Uint8Array`);
    if (typeof row.final !== "boolean") throw new InvalidRecordError(`${where}: final must be a boolean`);
    if (!Array.isArray(row.nextActors) || row.nextActors.length > MAX_NEXT_ACTORS) {
      throw new InvalidRecordError(`${where}: nextActors must be an array of at most ${MAX_NEXT_ACTORS} ids`);
    }
    if (!row.nextActors.every((a: unknown) => typeof a === "string" && a !== "")) {
      throw new InvalidRecordError(`${where}: nextActors must be non-empty strings`);
    }
    return { sessionId: row.sessionId, summary: new Uint8Array(row.summary), nextActors: [...row.nextActors], final: row.final };
  });
}

export function copyValidPolicy(policy: PolicyRecord): PolicyRecord {
  if (typeof policy !== "object" || policy === null) throw new InvalidRecordError("policy: not an object");
  if (typeof policy.policyId !== "string" || policy.policyId.length === 0) {
    throw new InvalidRecordError("policy: policyId must be a non-empty string");
  }
  if (!(policy.descriptor instanceof Uint8Array)) {
    throw new InvalidRecordError(`policy ${policy.policyId}: descriptor must be a Uint8Array`);
  }
  return { policyId: policy.policyId, descriptor: new Uint8Array(policy.descriptor) };
}

export function validPolicyId(policyId: string): string {
  if (typeof policyId !== "string" || policyId.length === 0) {
    throw new InvalidRecordError("policyId must be a non-empty string");
  }
  return policyId;
}

// ---------------------------------------------------- read-side verification

/**
 * Checks records of a full log scan, in position order: positions strictly
 * increase, envelope seqs of each session run 1, 2, 3… and annotations carry
 * seq 0. Throws StoreCorruptionError naming the row position.
 */
export class LogVerifier {
  private lastPosition = 0;
  private readonly seqs = new Map<string, number>();

  check(r: StoredRecord): void {
    if (!Number.isSafeInteger(r.position) || r.position <= this.lastPosition) {
      throw new StoreCorruptionError(
        `log row at position ${r.position}: positions out of order (previous ${this.lastPosition})`,
        r.position,
      );
    }
    this.lastPosition = r.position;
    if (r.kind === "envelope") {
      const expected = (this.seqs.get(r.sessionId) ?? 0) + 1;
      if (r.seq !== expected) {
        throw new StoreCorruptionError(
          `log row at position ${r.position}: session ${r.sessionId} has seq ${r.seq} where ${expected} was expected ` +
            (r.seq < expected ? "(repeated seq)" : "(missing records before it)"),
          r.position,
        );
      }
      this.seqs.set(r.sessionId, r.seq);
    } else if (r.seq !== 0) {
      throw new StoreCorruptionError(`log row at position ${r.position}: annotation "${r.kind}" has seq ${r.seq}, expected 0`, r.position);
    }
  }
}

/** Arguments of readListRows(). */
export function checkListPage(afterChange: number, limit: number): void {
  if (!Number.isSafeInteger(afterChange) || afterChange < 0) throw new RangeError("afterChange must be a non-negative integer");
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError("limit must be a positive integer");
}

export function checkAfterSeq(afterSeq: number): void {
  if (typeof afterSeq !== "number" || !Number.isFinite(afterSeq)) {
    throw new RangeError(`readSession: afterSeq must be a finite number, got ${String(afterSeq)}`);
  }
}

/** Checks that readSession() results continue afterSeq without a gap or repeat. */
export function verifySessionRun(records: readonly StoredRecord[], sessionId: string, afterSeq: number): void {
  let expected = Math.floor(Math.max(afterSeq, 0)) + 1;
  for (const r of records) {
    if (r.sessionId !== sessionId || r.kind !== "envelope" || r.seq !== expected) {
      throw new StoreCorruptionError(
        `log row at position ${r.position}: session ${sessionId} has seq ${r.seq} where ${expected} was expected`,
        r.position,
      );
    }
    expected++;
  }
}

/** Byte-wise (UTF-8) string order, the order SQLite's BINARY collation uses. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}
