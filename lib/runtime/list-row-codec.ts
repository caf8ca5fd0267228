// Binary baton.v1.SessionSummary for the list rows the kernel writes with
// every record. Encoded by hand into one exactly sized buffer instead of by
// the reflective toBinary(): the row is encoded once per accepted envelope,
// where toBinary() cost several times the envelope's own encoding. The output
// is byte for byte what toBinary() writes (fields in number order, proto3
// defaults left out; list-row-codec.test.ts checks it against toBinary() over
// varied rows), so readers decode it as usual. A value outside what the
// fast path handles (a negative or unsafe 64-bit integer) falls back to
// toBinary().
import { toBinary } from "@bufbuild/protobuf";
import { SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";

const MAX = BigInt(Number.MAX_SAFE_INTEGER);

function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** Sizes first (strings measured once), then one pass writing into the buffer. */
class Writer {
  buf: Buffer = Buffer.alloc(0);
  pos = 0;

  varint(n: number): void {
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 128) | 0x80;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }

  str(field: number, v: string, bytes: number): void {
    if (v === "") return;
    this.buf[this.pos++] = (field << 3) | 2;
    this.varint(bytes);
    this.pos += this.buf.write(v, this.pos, "utf8");
  }
}

const strSize = (v: string, bytes: number): number => (v === "" ? 0 : 1 + varintSize(bytes) + bytes);
const numSize = (v: number): number => (v === 0 ? 0 : 1 + varintSize(v));

interface Sized {
  total: number;
  /** UTF-8 lengths of the strings (and of nested messages), in writing order. */
  lens: number[];
  /** Length of the metadata message. */
  metaLen: number;
}

function safe(v: bigint): number | null {
  return v >= 0n && v <= MAX ? Number(v) : null;
}

function metadataSize(m: SessionMetadata, lens: number[]): number | null {
  const started = safe(m.startedAtUnixMs);
  const expires = safe(m.expiresAtUnixMs);
  if (started === null || expires === null || m.state < 0) return null;
  let n = 0;
  for (const s of [m.sessionId, m.mode]) n += strSize(s, pushLen(lens, s));
  n += numSize(m.state) + numSize(started) + numSize(expires);
  for (const s of [m.modeVersion, m.configurationVersion, m.policyVersion]) n += strSize(s, pushLen(lens, s));
  for (const p of m.participants) {
    const len = pushLen(lens, p);
    n += 1 + varintSize(len) + len;
  }
  for (const a of m.participantActivity) {
    const last = safe(a.lastMessageAtUnixMs);
    if (last === null) return null;
    const inner = strSize(a.participantId, pushLen(lens, a.participantId)) + numSize(last) + numSize(a.messageCount);
    lens.push(inner);
    n += 1 + varintSize(inner) + inner;
  }
  for (const s of [m.initiator, m.contextId]) n += strSize(s, pushLen(lens, s));
  for (const k of m.extensionKeys) {
    const len = pushLen(lens, k);
    n += 1 + varintSize(len) + len;
  }
  return n;
}

function pushLen(lens: number[], s: string): number {
  const n = s === "" ? 0 : Buffer.byteLength(s, "utf8");
  lens.push(n);
  return n;
}

function writeMetadata(w: Writer, m: SessionMetadata, lens: number[], at: { i: number }): void {
  const next = () => lens[at.i++] as number;
  w.str(1, m.sessionId, next());
  w.str(2, m.mode, next());
  if (m.state !== 0) {
    w.buf[w.pos++] = 3 << 3;
    w.varint(m.state);
  }
  for (const [field, v] of [
    [4, Number(m.startedAtUnixMs)],
    [5, Number(m.expiresAtUnixMs)],
  ] as const) {
    if (v !== 0) {
      w.buf[w.pos++] = field << 3;
      w.varint(v);
    }
  }
  w.str(6, m.modeVersion, next());
  w.str(7, m.configurationVersion, next());
  w.str(8, m.policyVersion, next());
  for (const p of m.participants) {
    const len = next();
    w.buf[w.pos++] = (9 << 3) | 2;
    w.varint(len);
    w.pos += w.buf.write(p, w.pos, "utf8");
  }
  for (const a of m.participantActivity) {
    const idLen = next();
    const inner = next();
    w.buf[w.pos++] = (10 << 3) | 2;
    w.varint(inner);
    w.str(1, a.participantId, idLen);
    const last = Number(a.lastMessageAtUnixMs);
    if (last !== 0) {
      w.buf[w.pos++] = 2 << 3;
      w.varint(last);
    }
    if (a.messageCount !== 0) {
      w.buf[w.pos++] = 3 << 3;
      w.varint(a.messageCount);
    }
  }
  w.str(11, m.initiator, next());
  w.str(12, m.contextId, next());
  for (const k of m.extensionKeys) {
    const len = next();
    w.buf[w.pos++] = (13 << 3) | 2;
    w.varint(len);
    w.pos += w.buf.write(k, w.pos, "utf8");
  }
}

function size(s: SessionSummary): Sized | null {
  const lens: number[] = [];
  let total = 0;
  let metaLen = 0;
  if (s.metadata) {
    const m = metadataSize(s.metadata, lens);
    if (m === null) return null;
    metaLen = m;
    total += 1 + varintSize(m) + m;
  }
  const activity = safe(s.lastActivityUnixMs);
  const count = safe(s.eventCount);
  const since = safe(s.phaseSinceUnixMs);
  if (activity === null || count === null || since === null || s.waitingOn.length > 0) return null;
  for (const v of [s.phase, s.intent, s.currentOwner, s.currentTarget, s.scope]) total += strSize(v, pushLen(lens, v));
  total += numSize(activity) + numSize(count);
  total += strSize(s.outcome, pushLen(lens, s.outcome));
  total += numSize(since);
  total += strSize(s.phaseDetail, pushLen(lens, s.phaseDetail));
  return { total, lens, metaLen };
}

/** The same bytes as toBinary(SessionSummarySchema, s) for a row without unknown fields. */
export function encodeListSummary(s: SessionSummary): Uint8Array {
  const sized = size(s);
  if (sized === null || s.$unknown?.length || s.metadata?.$unknown?.length) return toBinary(SessionSummarySchema, s);
  const { total, lens, metaLen } = sized;
  const w = new Writer();
  w.buf = Buffer.allocUnsafe(total);
  const at = { i: 0 };
  if (s.metadata) {
    w.buf[w.pos++] = (1 << 3) | 2;
    w.varint(metaLen);
    writeMetadata(w, s.metadata, lens, at);
  }
  const next = () => lens[at.i++] as number;
  w.str(2, s.phase, next());
  w.str(3, s.intent, next());
  w.str(4, s.currentOwner, next());
  w.str(5, s.currentTarget, next());
  w.str(6, s.scope, next());
  for (const [field, v] of [
    [7, Number(s.lastActivityUnixMs)],
    [8, Number(s.eventCount)],
  ] as const) {
    if (v !== 0) {
      w.buf[w.pos++] = field << 3;
      w.varint(v);
    }
  }
  w.str(9, s.outcome, next());
  const since = Number(s.phaseSinceUnixMs);
  if (since !== 0) {
    w.buf[w.pos++] = 11 << 3;
    w.varint(since);
  }
  w.str(12, s.phaseDetail, next());
  if (w.pos !== total) throw new Error(`list row encoding: wrote ${w.pos} bytes, sized ${total} (internal error)`);
  return new Uint8Array(w.buf.buffer, w.buf.byteOffset, total);
}
