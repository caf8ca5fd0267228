// CRC-32 (IEEE 802.3: reflected polynomial 0xEDB88320, initial value and
// final XOR 0xFFFFFFFF), the same checksum as zlib, gzip and PNG.
//
// Used to checksum each stored row independently of SQLite's own page and
// WAL checksums, so that a row that was damaged after it was written (bit
// rot, a stray write, manual editing) is detected when it is read back.

const POLYNOMIAL = 0xedb88320;

const TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let bit = 0; bit < 8; bit++) {
      c = c & 1 ? POLYNOMIAL ^ (c >>> 1) : c >>> 1;
    }
    table[n] = c >>> 0;
  }
  return table;
})();

/**
 * CRC-32 of `data`. Pass the result of a previous call as `previous` to
 * continue over several chunks: crc32(b, crc32(a)) === crc32(a ++ b).
 * Returns an unsigned 32-bit integer.
 */
export function crc32(data: Uint8Array, previous = 0): number {
  let c = ~previous >>> 0;
  for (let i = 0; i < data.length; i++) {
    // Both indices are < 256 and `data[i]` is within bounds by the loop.
    c = (TABLE[(c ^ (data[i] as number)) & 0xff] as number) ^ (c >>> 8);
  }
  return ~c >>> 0;
}
