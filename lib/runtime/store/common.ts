// Pieces shared by the SQLite and in-memory stores: the logger contract,
// record validation and copying, per-session seq bookkeeping (write side) and
// verification (read side), and the row checksums.
import { crc32 } from "./crc32";
import {
  StoreCorruptionError,
  type LogRecord,
  type PolicyRecord,
  type RecordKind,
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

export function isRecordKind(v: unknown): v is RecordKind {
  return typeof v === "string" && KIND_SET.has(v);
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
      throw new InvalidRecordError(
        `${where}: seq ${r.seq} is invalid for kind "${r.kind}" (envelopes count from 1, annotations use 0)`,
      );
    }
    if (!Number.isSafeInteger(r.recvMs) || r.recvMs < 0) {
      throw new InvalidRecordError(`${where}: recvMs must be a non-negative integer`);
    }
    if (!(r.envelope instanceof Uint8Array)) throw new InvalidRecordError(`${where}: envelope must be a Uint8Array`);
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
    return copy;
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

// ------------------------------------------------- write-side seq tracking

/**
 * The last envelope seq of every session, counting records queued but not yet
 * committed, so that a store never writes a log it would refuse to load (a
 * gap or a repeat in a session's seq). Changes made by the batch being
 * assembled are remembered so that a failed commit can undo them.
 */
export class SeqTracker {
  private readonly last = new Map<string, number>();
  private undo = new Map<string, number | undefined>();

  constructor(initial: Iterable<readonly [string, number]>) {
    for (const [sessionId, seq] of initial) this.last.set(sessionId, seq);
  }

  /** Check `records` (one append call) and reserve their seqs; all or nothing. */
  reserve(records: readonly LogRecord[]): void {
    const local = new Map<string, number>();
    records.forEach((r, i) => {
      if (r.kind !== "envelope") return;
      const prev = local.get(r.sessionId) ?? this.last.get(r.sessionId) ?? 0;
      if (r.seq !== prev + 1) {
        throw new InvalidRecordError(
          `record ${i}: session ${r.sessionId} expects seq ${prev + 1} next, got ${r.seq}` +
            (r.seq <= prev ? " (already written or queued)" : " (would leave a gap)"),
        );
      }
      local.set(r.sessionId, r.seq);
    });
    for (const [sessionId, seq] of local) {
      if (!this.undo.has(sessionId)) this.undo.set(sessionId, this.last.get(sessionId));
      this.last.set(sessionId, seq);
    }
  }

  /** The batch assembled so far was committed. */
  commitBatch(): void {
    this.undo = new Map();
  }

  /** The batch assembled so far failed: forget its reservations. */
  rollbackBatch(): void {
    for (const [sessionId, prev] of this.undo) {
      if (prev === undefined) this.last.delete(sessionId);
      else this.last.set(sessionId, prev);
    }
    this.undo = new Map();
  }
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
      throw new StoreCorruptionError(
        `log row at position ${r.position}: annotation "${r.kind}" has seq ${r.seq}, expected 0`,
        r.position,
      );
    }
  }
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

// ----------------------------------------------------------------- checksums

const utf8 = new TextEncoder();

function u32(view: DataView, offset: number, value: number): number {
  view.setUint32(offset, value >>> 0, false);
  return offset + 4;
}

/** A non-negative safe integer as 8 big-endian bytes. */
function u64(view: DataView, offset: number, value: number): number {
  view.setUint32(offset, Math.floor(value / 0x1_0000_0000), false);
  view.setUint32(offset + 4, value >>> 0, false);
  return offset + 8;
}

/**
 * CRC-32 over kind | session_id | seq | recv_ms | envelope | bound_policy,
 * each variable-length field prefixed with its byte length and bound_policy
 * with a presence byte, so that no two different records share an encoding.
 */
export function recordCrc(r: LogRecord): number {
  const kind = utf8.encode(r.kind);
  const session = utf8.encode(r.sessionId);
  const head = new Uint8Array(4 + kind.length + 4 + session.length + 8 + 8 + 4);
  const view = new DataView(head.buffer);
  let o = u32(view, 0, kind.length);
  head.set(kind, o);
  o = u32(view, o + kind.length, session.length);
  head.set(session, o);
  o = u64(view, o + session.length, r.seq);
  o = u64(view, o, r.recvMs);
  u32(view, o, r.envelope.length);
  let crc = crc32(r.envelope, crc32(head));
  const tail = new Uint8Array(5);
  if (r.boundPolicy === undefined) {
    crc = crc32(tail.subarray(0, 1), crc);
  } else {
    tail[0] = 1;
    u32(new DataView(tail.buffer), 1, r.boundPolicy.length);
    crc = crc32(r.boundPolicy, crc32(tail, crc));
  }
  return crc;
}

/** CRC-32 over policy_id | descriptor, length-prefixed. */
export function policyCrc(p: PolicyRecord): number {
  const id = utf8.encode(p.policyId);
  const head = new Uint8Array(4 + id.length + 4);
  const view = new DataView(head.buffer);
  u32(view, 0, id.length);
  head.set(id, 4);
  u32(view, 4 + id.length, p.descriptor.length);
  return crc32(p.descriptor, crc32(head));
}

/** Byte-wise (UTF-8) string order, the order SQLite's BINARY collation uses. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}
