// Rows as SQLite returns them, and their decoding into the store's records:
// every field's type and every row's CRC-32 checked; any mismatch is a
// StoreCorruptionError, never a skipped row.
import { isRecordKind, isSessionStatus } from "./common";
import { listRowCrc, policyCrc, recordCrc, sessionRowCrc } from "./row-crc";
import { StoreCorruptionError, type PolicyRecord, type SessionIndexEntry, type StoredListRow, type StoredRecord } from "./types";

export interface LogRow {
  position: number;
  session_id: string;
  kind: string;
  seq: number;
  recv_ms: number;
  envelope: Buffer;
  bound_policy: Buffer | null;
  crc: number;
}

export interface SessionRow {
  session_id: string;
  first_position: number;
  last_seq: number;
  status: string | null;
  activity_ms: number;
  metadata: Buffer | null;
  crc: number;
}

export interface ListRowRow {
  session_id: string;
  change: number;
  final: number;
  summary: Buffer;
  next_actors: string;
  crc: number;
}

export interface PolicyRow {
  policy_id: string;
  descriptor: Buffer;
  crc: number;
}

function view(buf: Buffer): Uint8Array {
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

export function hex32(n: number): string {
  return `0x${(n >>> 0).toString(16).padStart(8, "0")}`;
}

/** Turn a row into a record, checking its types and CRC. */
export function decodeLogRow(row: LogRow): StoredRecord {
  const p = row.position;
  if (
    typeof row.session_id !== "string" ||
    !isRecordKind(row.kind) ||
    typeof row.seq !== "number" ||
    typeof row.recv_ms !== "number" ||
    !Buffer.isBuffer(row.envelope) ||
    (row.bound_policy !== null && !Buffer.isBuffer(row.bound_policy)) ||
    typeof row.crc !== "number"
  ) {
    throw new StoreCorruptionError(`log row at position ${p}: unexpected column types or kind`, p);
  }
  const record: StoredRecord = {
    position: p,
    sessionId: row.session_id,
    kind: row.kind,
    seq: row.seq,
    recvMs: row.recv_ms,
    envelope: view(row.envelope),
  };
  if (row.bound_policy !== null) record.boundPolicy = view(row.bound_policy);
  const crc = recordCrc(record);
  if (crc !== row.crc) {
    throw new StoreCorruptionError(
      `log row at position ${p} (session ${row.session_id}, seq ${row.seq}): checksum mismatch ` +
        `(stored ${hex32(row.crc)}, computed ${hex32(crc)})`,
      p,
    );
  }
  return record;
}

/** Turn a session-index row into an entry, checking its types and CRC. */
export function decodeSessionRow(row: SessionRow): SessionIndexEntry {
  const id = String(row.session_id);
  if (
    typeof row.session_id !== "string" ||
    typeof row.first_position !== "number" ||
    typeof row.last_seq !== "number" ||
    (row.status !== null && !isSessionStatus(row.status)) ||
    typeof row.activity_ms !== "number" ||
    (row.metadata !== null && !Buffer.isBuffer(row.metadata)) ||
    typeof row.crc !== "number"
  ) {
    throw new StoreCorruptionError(`session index row for ${id}: unexpected column types or status`);
  }
  const entry: SessionIndexEntry = {
    sessionId: row.session_id,
    firstPosition: row.first_position,
    lastSeq: row.last_seq,
    status: row.status as SessionIndexEntry["status"],
    activityMs: row.activity_ms,
    metadata: row.metadata === null ? null : view(row.metadata),
  };
  const crc = sessionRowCrc(entry);
  if (crc !== row.crc) {
    throw new StoreCorruptionError(
      `session index row for ${id}: checksum mismatch (stored ${hex32(row.crc)}, computed ${hex32(crc)})`,
      row.first_position,
    );
  }
  return entry;
}

/** Turn a list_rows row into a list row, checking its types and CRC. */
export function decodeListRow(row: ListRowRow): StoredListRow {
  const id = String(row.session_id);
  let actors: unknown;
  try {
    actors = JSON.parse(String(row.next_actors));
  } catch {
    actors = null;
  }
  if (
    typeof row.session_id !== "string" ||
    typeof row.change !== "number" ||
    (row.final !== 0 && row.final !== 1) ||
    !Buffer.isBuffer(row.summary) ||
    !Array.isArray(actors) ||
    !actors.every((a) => typeof a === "string") ||
    typeof row.crc !== "number"
  ) {
    throw new StoreCorruptionError(`list row of ${id}: unexpected column types`);
  }
  const out: StoredListRow = {
    sessionId: id,
    change: row.change,
    final: row.final === 1,
    summary: view(row.summary),
    nextActors: actors as string[],
  };
  const crc = listRowCrc(out);
  if (crc !== row.crc) {
    throw new StoreCorruptionError(
      `list row of ${id} (change ${row.change}): checksum mismatch (stored ${hex32(row.crc)}, computed ${hex32(crc)})`,
    );
  }
  return out;
}

export function decodePolicyRow(row: PolicyRow): PolicyRecord {
  if (typeof row.policy_id !== "string" || !Buffer.isBuffer(row.descriptor) || typeof row.crc !== "number") {
    throw new StoreCorruptionError(`policy ${String(row.policy_id)}: unexpected column types`);
  }
  const policy: PolicyRecord = { policyId: row.policy_id, descriptor: view(row.descriptor) };
  const crc = policyCrc(policy);
  if (crc !== row.crc) {
    throw new StoreCorruptionError(`policy ${row.policy_id}: checksum mismatch (stored ${hex32(row.crc)}, computed ${hex32(crc)})`);
  }
  return policy;
}
