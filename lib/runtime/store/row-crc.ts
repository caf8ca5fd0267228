// The row checksums: CRC-32 over each stored row's fields, each
// variable-length field length-prefixed so no two rows share an encoding.
// Written with every row and checked on every read, by both stores.
import { crc32 } from "./crc32";
import type { LogRecord, PolicyRecord, SessionIndexEntry, StoredListRow } from "./types";

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
