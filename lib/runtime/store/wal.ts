// Read-only inspection of a SQLite write-ahead log left behind by a previous
// process, done before SQLite opens the database (which then replays it).
//
// It does not change anything: SQLite's own recovery decides what is kept.
// It mirrors that decision to report it: a frame counts only if its salts
// match the WAL header and its cumulative checksum is right, and frames only
// become part of the database up to the last valid *commit* frame (a frame
// whose "database size after commit" field is non-zero). Frames after that
// (a transaction that was being written when the process died, a torn frame,
// or stale frames of an earlier WAL generation) are ignored.
//
// Layout (https://www.sqlite.org/fileformat2.html#walformat): a 32-byte
// header (magic, version, page size, checkpoint seq, salt-1, salt-2,
// checksum-1, checksum-2), then frames of a 24-byte header (page number,
// db size after commit, salt-1, salt-2, checksum-1, checksum-2) followed by
// one page. Header fields are big-endian; checksum words are big-endian when
// the magic is 0x377f0683 and little-endian when it is 0x377f0682.
import fs from "node:fs";

const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;

export interface WalInspection {
  /** Size of the -wal file in bytes. */
  bytes: number;
  /** False if the file is too short or its header is invalid (SQLite then ignores it entirely). */
  headerValid: boolean;
  pageSize: number;
  /** Frames SQLite will replay: up to and including the last valid commit frame. */
  committedFrames: number;
  /** Transactions among them (commit frames). */
  committedTransactions: number;
  /** Whole frames after the last valid commit (uncommitted, torn or stale): ignored. */
  ignoredFrames: number;
  /** Bytes at the end that do not even form a whole frame (a torn write). */
  tornTailBytes: number;
}

function checksum(
  bytes: Uint8Array,
  bigEndian: boolean,
  s0: number,
  s1: number,
): [number, number] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i + 8 <= bytes.length; i += 8) {
    s0 = (s0 + view.getUint32(i, !bigEndian) + s1) >>> 0;
    s1 = (s1 + view.getUint32(i + 4, !bigEndian) + s0) >>> 0;
  }
  return [s0, s1];
}

/** Parse a WAL image (the whole file's bytes). */
export function inspectWalBytes(wal: Uint8Array): WalInspection {
  const result: WalInspection = {
    bytes: wal.length,
    headerValid: false,
    pageSize: 0,
    committedFrames: 0,
    committedTransactions: 0,
    ignoredFrames: 0,
    tornTailBytes: 0,
  };
  if (wal.length < WAL_HEADER_BYTES) {
    result.tornTailBytes = wal.length;
    return result;
  }
  const view = new DataView(wal.buffer, wal.byteOffset, wal.byteLength);
  const magic = view.getUint32(0);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) return result;
  const bigEndian = (magic & 1) === 1;
  const pageSize = view.getUint32(8);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return result;
  const salt1 = view.getUint32(16);
  const salt2 = view.getUint32(20);
  let [s0, s1] = checksum(wal.subarray(0, 24), bigEndian, 0, 0);
  if (s0 !== view.getUint32(24) || s1 !== view.getUint32(28)) return result;
  result.headerValid = true;
  result.pageSize = pageSize;

  const frameBytes = FRAME_HEADER_BYTES + pageSize;
  const wholeFrames = Math.floor((wal.length - WAL_HEADER_BYTES) / frameBytes);
  result.tornTailBytes = (wal.length - WAL_HEADER_BYTES) % frameBytes;
  let validFrames = 0;
  for (let i = 0; i < wholeFrames; i++) {
    const at = WAL_HEADER_BYTES + i * frameBytes;
    if (view.getUint32(at + 8) !== salt1 || view.getUint32(at + 12) !== salt2) break;
    [s0, s1] = checksum(wal.subarray(at, at + 8), bigEndian, s0, s1);
    [s0, s1] = checksum(wal.subarray(at + FRAME_HEADER_BYTES, at + frameBytes), bigEndian, s0, s1);
    if (s0 !== view.getUint32(at + 16) || s1 !== view.getUint32(at + 20)) break;
    validFrames = i + 1;
    if (view.getUint32(at + 4) !== 0) {
      result.committedFrames = validFrames;
      result.committedTransactions++;
    }
  }
  result.ignoredFrames = wholeFrames - result.committedFrames;
  return result;
}

/** Inspect `<db>-wal` if it exists; null when there is none (clean shutdown). */
export function inspectWalFile(walPath: string): WalInspection | null {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(walPath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
  return inspectWalBytes(bytes);
}
