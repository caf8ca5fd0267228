// CRC-32 (IEEE 802.3: reflected polynomial 0xEDB88320, initial value and
// final XOR 0xFFFFFFFF), the same checksum as zlib, gzip and PNG: zlib's own
// implementation through node:zlib (native, several hundred MB/s; every row
// read is checked, so this is on every read path, restart included).
//
// Used to checksum each stored row independently of SQLite's own page and
// WAL checksums, so that a row that was damaged after it was written (bit
// rot, a stray write, manual editing) is detected when it is read back.
import zlib from "node:zlib";

/**
 * CRC-32 of `data`. Pass the result of a previous call as `previous` to
 * continue over several chunks: crc32(b, crc32(a)) === crc32(a ++ b).
 * Returns an unsigned 32-bit integer.
 */
export function crc32(data: Uint8Array, previous = 0): number {
  // node:zlib answers 0 for an empty view over a zero-length ArrayBuffer
  // (e.g. TextEncoder's output for ""), ignoring `previous`: an empty input
  // leaves the CRC as it is.
  if (data.length === 0) return previous >>> 0;
  return zlib.crc32(data, previous) >>> 0;
}
