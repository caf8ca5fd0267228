// Pieces shared by the SQLite and in-memory stores: the logger contract,
// record validation and copying, per-session seq bookkeeping (write side) and
// verification (read side), and the row checksums.
import { crc32 } from "./crc32";
import {
  SESSION_STATUSES,
  StoreCorruptionError,
  type ListRow,
  type LogRecord,
  type PolicyRecord,
  type RecordKind,
  type SessionIndexEntry,
  type SessionStatus,
  type SessionSummary,
  type StoredListRow,
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
      throw new InvalidRecordError(
        `${where}: seq ${r.seq} is invalid for kind "${r.kind}" (envelopes count from 1, annotations use 0)`,
      );
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

// ------------------------------------------- write-side session index drafts

/** What the writer needs to know about a session's committed index row. */
export interface CommittedSession {
  firstPosition: number;
  /** The session's newest committed seq (from the log, not as of its last summary). */
  lastSeq: number;
  status: SessionStatus | null;
  activityMs: number;
  metadata: Uint8Array | null;
}

/** Read access the writer needs to validate a batch against what is committed. */
export interface IndexLookup {
  /** The committed index row, or undefined for a session with no records. */
  session(sessionId: string): CommittedSession | undefined;
  hasMessage(sessionId: string, messageId: string): boolean;
}

/**
 * The index row a session will have once the batch being assembled commits.
 * `firstPosition` is 0 for a session whose first record is in this batch: the
 * backend fills it in with that record's position as it inserts it.
 * `committed` is the row as committed before this batch (undefined: a new
 * session), so the backend writes only what changed.
 */
export interface SessionDraft {
  sessionId: string;
  firstPosition: number;
  lastSeq: number;
  status: SessionStatus | null;
  activityMs: number;
  metadata: Uint8Array | null;
  committed?: CommittedSession;
  /** A summary came with this batch (or the session is new): the backend writes the row. */
  summarised?: boolean;
}

/** Committed index rows kept by the writer for the sessions it wrote most recently. */
const RECENT_ROWS = 1024;

/**
 * Validates writes against the committed index plus everything queued but not
 * yet committed, so that a store never writes a log it would refuse to load
 * (a gap or a repeat in a session's seq, an annotation or summary for a
 * session that was never started, a message id accepted twice), and keeps the
 * drafts of the index rows the batch will write. Only sessions touched by the
 * batch being assembled are held; committed state is looked up on demand, so
 * memory does not grow with the number of sessions ever written.
 */
export class SessionDrafts {
  private drafts = new Map<string, SessionDraft>();
  private messages = new Map<string, Set<string>>();
  /**
   * Rows as committed, for the sessions written most recently (a bounded LRU):
   * the store is written only through this writer, so they stay exact, and a
   * session receiving envelopes is validated without reading its row back.
   */
  private readonly recent = new Map<string, CommittedSession>();

  constructor(private readonly committed: IndexLookup) {}

  private committedRow(sessionId: string): CommittedSession | undefined {
    const hit = this.recent.get(sessionId);
    if (hit) {
      this.recent.delete(sessionId);
      this.recent.set(sessionId, hit);
      return hit;
    }
    const row = this.committed.session(sessionId);
    if (row) this.remember(sessionId, row);
    return row;
  }

  private remember(sessionId: string, row: CommittedSession): void {
    this.recent.delete(sessionId);
    this.recent.set(sessionId, row);
    if (this.recent.size > RECENT_ROWS) this.recent.delete(this.recent.keys().next().value as string);
  }

  /** The draft of `sessionId` as of the queued writes, or undefined if unknown. */
  private current(sessionId: string, local: Map<string, SessionDraft>): SessionDraft | undefined {
    const queued = local.get(sessionId) ?? this.drafts.get(sessionId);
    if (queued) return queued;
    const row = this.committedRow(sessionId);
    return row ? { sessionId, ...row, committed: row } : undefined;
  }

  private messageQueued(sessionId: string, messageId: string, local: Map<string, Set<string>>): boolean {
    return Boolean(local.get(sessionId)?.has(messageId) || this.messages.get(sessionId)?.has(messageId));
  }

  /**
   * Check one write call (records, then summaries, then message ids of
   * already-written records) and reserve its effects; all or nothing.
   */
  reserve(
    records: readonly LogRecord[],
    summaries: readonly SessionSummary[],
    extraMessages: readonly (readonly [string, string])[] = [],
  ): void {
    const local = new Map<string, SessionDraft>();
    const localMessages = new Map<string, Set<string>>();
    const addMessage = (sessionId: string, messageId: string, where: string, existed: boolean) => {
      if (this.messageQueued(sessionId, messageId, localMessages) || (existed && this.committed.hasMessage(sessionId, messageId))) {
        throw new InvalidRecordError(`${where}: session ${sessionId} already accepted message id ${JSON.stringify(messageId)}`);
      }
      let set = localMessages.get(sessionId);
      if (!set) localMessages.set(sessionId, (set = new Set()));
      set.add(messageId);
    };
    records.forEach((r, i) => {
      const where = `record ${i}`;
      const prior = this.current(r.sessionId, local);
      if (r.kind !== "envelope") {
        if (!prior) throw new InvalidRecordError(`${where}: annotation "${r.kind}" for session ${r.sessionId}, which has no records`);
        if (!local.has(r.sessionId)) local.set(r.sessionId, { ...prior });
        return;
      }
      const prev = prior?.lastSeq ?? 0;
      if (r.seq !== prev + 1) {
        throw new InvalidRecordError(
          `${where}: session ${r.sessionId} expects seq ${prev + 1} next, got ${r.seq}` +
            (r.seq <= prev ? " (already written or queued)" : " (would leave a gap)"),
        );
      }
      const draft: SessionDraft = prior
        ? { ...prior, lastSeq: r.seq }
        : { sessionId: r.sessionId, firstPosition: 0, lastSeq: r.seq, status: null, activityMs: r.recvMs, metadata: null, summarised: true };
      local.set(r.sessionId, draft);
      if (r.messageId !== undefined && r.messageId !== "") addMessage(r.sessionId, r.messageId, where, prior !== undefined);
    });
    summaries.forEach((sum, i) => {
      const prior = this.current(sum.sessionId, local);
      if (!prior) throw new InvalidRecordError(`summary ${i}: session ${sum.sessionId} has no records`);
      local.set(sum.sessionId, { ...prior, status: sum.status, activityMs: sum.activityMs, metadata: sum.metadata, summarised: true });
    });
    extraMessages.forEach(([sessionId, messageId], i) => {
      const prior = this.current(sessionId, local);
      if (!prior) throw new InvalidRecordError(`message id ${i}: session ${sessionId} has no records`);
      if (!local.has(sessionId)) local.set(sessionId, { ...prior });
      addMessage(sessionId, messageId, `message id ${i}`, true);
    });
    for (const [sessionId, draft] of local) this.drafts.set(sessionId, draft);
    for (const [sessionId, ids] of localMessages) {
      let set = this.messages.get(sessionId);
      if (!set) this.messages.set(sessionId, (set = new Set()));
      for (const id of ids) set.add(id);
    }
  }

  /** The index rows the batch will write, in the order sessions were first touched. */
  pending(): SessionDraft[] {
    return [...this.drafts.values()];
  }

  /**
   * The batch was committed (the backend filled in the new sessions' first
   * positions) or rolled back (nothing of it was stored).
   */
  reset(committed: boolean): void {
    if (committed) {
      for (const d of this.drafts.values()) {
        const { sessionId, committed: _before, summarised: _written, ...row } = d;
        void _before;
        void _written;
        this.remember(sessionId, row);
      }
    }
    this.drafts = new Map();
    this.messages = new Map();
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

/**
 * CRC-32 over session_id | first_position | last_seq | status | activity_ms |
 * metadata, length-prefixed, with presence bytes for the nullable summary.
 */
export function sessionRowCrc(e: SessionIndexEntry): number {
  const id = utf8.encode(e.sessionId);
  const status = utf8.encode(e.status ?? "");
  const head = new Uint8Array(4 + id.length + 8 + 8 + 1 + 4 + status.length + 8 + 5);
  const view = new DataView(head.buffer);
  let o = u32(view, 0, id.length);
  head.set(id, o);
  o = u64(view, o + id.length, e.firstPosition);
  o = u64(view, o, e.lastSeq);
  head[o++] = e.status === null ? 0 : 1;
  o = u32(view, o, status.length);
  head.set(status, o);
  o = u64(view, o + status.length, e.activityMs);
  head[o++] = e.metadata === null ? 0 : 1;
  u32(view, o, e.metadata?.length ?? 0);
  return e.metadata === null ? crc32(head) : crc32(e.metadata, crc32(head));
}

/**
 * CRC-32 over session_id | change | final | next_actors (count, then each
 * length-prefixed) | summary, length-prefixed.
 */
export function listRowCrc(r: StoredListRow): number {
  const id = utf8.encode(r.sessionId);
  const actors = r.nextActors.map((a) => utf8.encode(a));
  const head = new Uint8Array(4 + id.length + 8 + 1 + 4 + actors.reduce((n, a) => n + 4 + a.length, 0) + 4);
  const view = new DataView(head.buffer);
  let o = u32(view, 0, id.length);
  head.set(id, o);
  o = u64(view, o + id.length, r.change);
  head[o++] = r.final ? 1 : 0;
  o = u32(view, o, actors.length);
  for (const a of actors) {
    o = u32(view, o, a.length);
    head.set(a, o);
    o += a.length;
  }
  u32(view, o, r.summary.length);
  return crc32(r.summary, crc32(head));
}

/** CRC-32 over session_id | message_id, length-prefixed. */
export function messageCrc(sessionId: string, messageId: string): number {
  const a = utf8.encode(sessionId);
  const b = utf8.encode(messageId);
  const buf = new Uint8Array(8 + a.length + b.length);
  const view = new DataView(buf.buffer);
  u32(view, 0, a.length);
  buf.set(a, 4);
  u32(view, 4 + a.length, b.length);
  buf.set(b, 8 + a.length);
  return crc32(buf);
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
