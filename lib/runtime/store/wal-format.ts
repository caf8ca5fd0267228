// The SQLite write-ahead log's file format, and the arithmetic on it that
// wal.ts analyses and rebuilds logs with: header and frame fields, the
// cumulative checksum (forwards and backwards), a header written for a given
// layout, and, when a log's header is lost, the layout its frames were
// written under (from the frames' checksums and the database file).
//
// Layout (https://www.sqlite.org/fileformat2.html#walformat): a 32-byte
// header (magic, format version 3007000, page size, checkpoint sequence,
// salt-1, salt-2, checksum-1, checksum-2), then frames of a 24-byte header
// (page number, database size in pages after commit (non-zero only on the
// last frame of a transaction: a "commit frame"), salt-1, salt-2,
// checksum-1, checksum-2) followed by one page. Fields are big-endian; the
// checksum words are read big-endian when the magic is 0x377f0683 and
// little-endian when it is 0x377f0682. The checksum is cumulative: the
// header's covers its first 24 bytes, and each frame's continues from the
// previous frame's (the header's for frame 1) over the frame header's first
// 8 bytes and the page. The salts are not covered; a frame belongs to the
// current WAL generation when its salts equal the header's. When SQLite
// restarts the log after a checkpoint it writes a new header (salt-1 + 1, a
// random salt-2) and overwrites frames from the start, so frames of earlier
// generations can follow the current ones.
import fs from "node:fs";

export const WAL_HEADER_BYTES = 32;
export const FRAME_HEADER_BYTES = 24;
export const WAL_MAGIC_LE = 0x377f0682;
const WAL_MAGIC_BE = 0x377f0683;
const WAL_FORMAT_VERSION = 3007000;
const PAGE_SIZES = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536] as const;

export interface WalLayout {
  pageSize: number;
  /** Checksum words are little-endian (magic 0x377f0682). */
  littleEndian: boolean;
  salt1: number;
  salt2: number;
  checkpointSeq: number;
}

/** Random access to the bytes of a file (or of a test image). */
export interface ByteSource {
  readonly size: number;
  /** Exactly `length` bytes at `offset` (the caller stays within `size`). */
  read(offset: number, length: number): Uint8Array;
}

export function bytesSource(bytes: Uint8Array): ByteSource {
  return { size: bytes.length, read: (offset, length) => bytes.subarray(offset, offset + length) };
}

/** A source over an open file descriptor, reusing one buffer per size (callers copy what they keep). */
export function fileSource(fd: number): ByteSource {
  const size = fs.fstatSync(fd).size;
  let buf = Buffer.alloc(0);
  return {
    size,
    read(offset, length) {
      if (buf.length < length) buf = Buffer.alloc(length);
      let got = 0;
      while (got < length) {
        const n = fs.readSync(fd, buf, got, length - got, offset + got);
        if (n === 0) throw new Error(`unexpected end of file at byte ${offset + got}`);
        got += n;
      }
      return buf.subarray(0, length);
    },
  };
}

export type Sum = readonly [number, number];

/** SQLite's WAL checksum over `bytes` (a multiple of 8 long), continuing from `seed`. */
export function walChecksum(bytes: Uint8Array, littleEndian: boolean, seed: Sum): [number, number] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let s0 = seed[0];
  let s1 = seed[1];
  for (let i = 0; i + 8 <= bytes.length; i += 8) {
    s0 = (s0 + view.getUint32(i, littleEndian) + s1) >>> 0;
    s1 = (s1 + view.getUint32(i + 4, littleEndian) + s0) >>> 0;
  }
  return [s0, s1];
}

/** The seed from which walChecksum(bytes, seed) gives `result` (the checksum is invertible). */
function unwindChecksum(bytes: Uint8Array, littleEndian: boolean, result: Sum): [number, number] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let s0 = result[0];
  let s1 = result[1];
  for (let i = bytes.length - 8; i >= 0; i -= 8) {
    s1 = (s1 - view.getUint32(i + 4, littleEndian) - s0) >>> 0;
    s0 = (s0 - view.getUint32(i, littleEndian) - s1) >>> 0;
  }
  return [s0, s1];
}

/** Checksum of one frame (`frame` = its 24-byte header + page) continuing from `seed`. */
export function frameChecksum(frame: Uint8Array, littleEndian: boolean, seed: Sum): [number, number] {
  const s = walChecksum(frame.subarray(0, 8), littleEndian, seed);
  return walChecksum(frame.subarray(FRAME_HEADER_BYTES), littleEndian, s);
}

export function u32(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}

export function put32(bytes: Uint8Array, at: number, v: number): void {
  bytes[at] = v >>> 24;
  bytes[at + 1] = (v >>> 16) & 0xff;
  bytes[at + 2] = (v >>> 8) & 0xff;
  bytes[at + 3] = v & 0xff;
}

function bswap(v: number): number {
  return (((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24)) >>> 0;
}

export function same(a: Sum, b: Sum): boolean {
  return a[0] === b[0] && a[1] === b[1];
}

export function storedSum(frame: Uint8Array): [number, number] {
  return [u32(frame, 16), u32(frame, 20)];
}

export function hex(n: number): string {
  return `0x${(n >>> 0).toString(16).padStart(8, "0")}`;
}

/** A complete 32-byte WAL header for `layout` (checksum included). */
export function walHeader(layout: WalLayout): Uint8Array {
  const h = new Uint8Array(WAL_HEADER_BYTES);
  put32(h, 0, layout.littleEndian ? WAL_MAGIC_LE : WAL_MAGIC_BE);
  put32(h, 4, WAL_FORMAT_VERSION);
  put32(h, 8, layout.pageSize);
  put32(h, 12, layout.checkpointSeq);
  put32(h, 16, layout.salt1);
  put32(h, 20, layout.salt2);
  const [s0, s1] = walChecksum(h.subarray(0, 24), layout.littleEndian, [0, 0]);
  put32(h, 24, s0);
  put32(h, 28, s1);
  return h;
}

/**
 * The header a first frame was written under, when its own header is lost:
 * everything but the checkpoint sequence is known (magic, version, page size,
 * the frame's salts), the frame's checksum fixes the header's checksum, and
 * the checksum equations have exactly one checkpoint sequence that fits,
 * or none (then this byte order or page size is wrong, with certainty up to
 * 2^-32).
 */
function inferHeader(frame1: Uint8Array, pageSize: number, littleEndian: boolean): WalLayout | null {
  const target = unwindChecksum(
    frame1.subarray(0, 8),
    littleEndian,
    unwindChecksum(frame1.subarray(FRAME_HEADER_BYTES), littleEndian, storedSum(frame1)),
  );
  const word = (v: number) => (littleEndian ? bswap(v) : v);
  const salt1 = u32(frame1, 8);
  const salt2 = u32(frame1, 12);
  const w0 = word(littleEndian ? WAL_MAGIC_LE : WAL_MAGIC_BE);
  const w1 = word(WAL_FORMAT_VERSION);
  const w2 = word(pageSize);
  const a0 = w0;
  const a1 = (w1 + a0) >>> 0;
  const b0 = (a0 + w2 + a1) >>> 0;
  const b1 = (target[1] - word(salt2) - target[0]) >>> 0;
  if ((target[0] - word(salt1) - b1) >>> 0 !== b0) return null;
  const w3 = (b1 - a1 - b0) >>> 0;
  const layout: WalLayout = { pageSize, littleEndian, salt1, salt2, checkpointSeq: word(w3) };
  const h = walHeader(layout);
  return same([u32(h, 24), u32(h, 28)], target) ? layout : null;
}

/** The database file's page size from its header, or 0 if it has none (not yet checkpointed). */
function dbPageSize(db: ByteSource | null): number {
  if (!db || db.size < 100) return 0;
  const h = db.read(0, 100);
  if (Buffer.from(h.subarray(0, 16)).toString("latin1") !== "SQLite format 3\u0000") return 0;
  const raw = (h[16]! << 8) | h[17]!;
  const size = raw === 1 ? 65536 : raw;
  return (PAGE_SIZES as readonly number[]).includes(size) ? size : 0;
}

/** Why SQLite rejects a header, or null if it accepts it. */
export function headerProblem(h: Uint8Array): string | null {
  const magic = u32(h, 0);
  if (magic !== WAL_MAGIC_LE && magic !== WAL_MAGIC_BE) return `its magic number is ${hex(magic)}`;
  if (u32(h, 4) !== WAL_FORMAT_VERSION) return `its format version is ${u32(h, 4)}`;
  const pageSize = u32(h, 8);
  if (!(PAGE_SIZES as readonly number[]).includes(pageSize)) return `its page size is ${pageSize}`;
  const sum = walChecksum(h.subarray(0, 24), magic === WAL_MAGIC_LE, [0, 0]);
  if (!same(sum, [u32(h, 24), u32(h, 28)])) return "its checksum does not match";
  return null;
}

/** Frames examined per candidate layout when the header is unreadable. */
const LAYOUT_PROBE_FRAMES = 16;

/** With the header lost: the page size and byte order under which the most frames verify. */
export function guessLayout(wal: ByteSource, db: ByteSource | null): { layout: WalLayout; firstSeed: Sum | null } | null {
  const fromDb = dbPageSize(db);
  const sizes = fromDb ? [fromDb] : PAGE_SIZES;
  let best: { layout: WalLayout; firstSeed: Sum | null; score: number } | null = null;
  for (const pageSize of sizes) {
    const frameBytes = FRAME_HEADER_BYTES + pageSize;
    const frames = Math.min(LAYOUT_PROBE_FRAMES, Math.floor((wal.size - WAL_HEADER_BYTES) / frameBytes));
    if (frames < 1) continue;
    for (const littleEndian of [true, false]) {
      const first = new Uint8Array(wal.read(WAL_HEADER_BYTES, frameBytes));
      const inferred = inferHeader(first, pageSize, littleEndian);
      let score = inferred ? 1 : 0;
      let salts: [number, number] | null = inferred ? [inferred.salt1, inferred.salt2] : null;
      let prev = storedSum(first);
      for (let i = 1; i < frames; i++) {
        const frame = wal.read(WAL_HEADER_BYTES + i * frameBytes, frameBytes);
        if (same(frameChecksum(frame, littleEndian, prev), storedSum(frame))) {
          const s: [number, number] = [u32(frame, 8), u32(frame, 12)];
          salts ??= s;
          if (s[0] === salts[0] && s[1] === salts[1]) score++;
        }
        prev = storedSum(frame);
      }
      if (score > 0 && salts && (!best || score > best.score)) {
        const layout =
          inferred && inferred.salt1 === salts[0] && inferred.salt2 === salts[1]
            ? inferred
            : { pageSize, littleEndian, salt1: salts[0], salt2: salts[1], checkpointSeq: 0 };
        const h = inferred ? walHeader(inferred) : null;
        best = { layout, firstSeed: h ? [u32(h, 24), u32(h, 28)] : null, score };
      }
    }
  }
  return best && { layout: best.layout, firstSeed: best.firstSeed };
}
