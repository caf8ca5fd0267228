// Read-only analysis of a SQLite write-ahead log left behind by a previous
// process, done before SQLite opens the database (which then replays it and,
// at its first checkpoint, makes its choice permanent).
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
//
// What SQLite keeps: every frame up to the last commit frame of the unbroken
// run of frames, from frame 1, whose salts match and whose checksum verifies.
// It stops at the first frame that fails and silently ignores everything
// after it. With an invalid header it ignores the whole file.
//
// Normal after a crash (the runtime commits with synchronous=FULL, so every
// transaction but the last one being written was fsync'd before the next
// began):
//   - a torn tail: the last transaction has no valid commit frame (a frame
//     cut short, a frame header written before its page, nothing after it);
//   - stale frames of an earlier generation after the current ones.
// Corruption: frames of a *later, committed* transaction after the point
// where SQLite stops. They are recognised without the broken prefix of the
// checksum chain: since each frame's checksum continues from the previous
// frame's stored checksum, a frame is genuine when its checksum recomputed
// from its predecessor's stored one matches its own ("a verified link"). A
// commit frame with the current salts and a verified link after the break is
// a transaction that was acknowledged and that SQLite would drop. With an
// invalid header (zeroed, say), the page size comes from the database file
// (or from the frames themselves), the salts from the frames, and frame 1
// is checked against the only header that fits its checksum; frames whose
// pages are all already in the database file (a torn header written when
// the log restarted) lose nothing and are not corruption.
import fs from "node:fs";

const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;
const WAL_MAGIC_LE = 0x377f0682;
const WAL_MAGIC_BE = 0x377f0683;
const WAL_FORMAT_VERSION = 3007000;
const PAGE_SIZES = [512, 1024, 2048, 4096, 8192, 16384, 32768, 65536] as const;
/** Frames examined per candidate layout when the header is unreadable. */
const LAYOUT_PROBE_FRAMES = 16;

export interface WalLayout {
  pageSize: number;
  /** Checksum words are little-endian (magic 0x377f0682). */
  littleEndian: boolean;
  salt1: number;
  salt2: number;
  checkpointSeq: number;
}

export interface WalDamage {
  /** "header": SQLite ignores the whole file; "frame": SQLite's replay stops at `frame`. */
  kind: "header" | "frame";
  /** 1-based frame at which the valid chain breaks (1 for a bad header). */
  frame: number;
  /** Byte offset of that frame (0 for a bad header). */
  offset: number;
  /** What is wrong there, in words. */
  reason: string;
  /** Committed transactions after the break whose frames verify: acknowledged, and dropped by SQLite. */
  lostTransactions: number;
  /** Frames from the break to the last of those commit frames, inclusive. */
  lostFrames: number;
  /** 1-based index of the last verified commit frame after the break. */
  lastCommitFrame: number;
  /** Whole frames in the file. */
  totalFrames: number;
  /** What a rebuilt log needs (page size, byte order, salts of the current generation). */
  layout: WalLayout;
}

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
  /** Whole frames after the last valid commit (uncommitted, torn, stale or lost): ignored. */
  ignoredFrames: number;
  /** Bytes at the end that do not even form a whole frame (a torn write). */
  tornTailBytes: number;
  /** Ignored frames of the current generation: the transaction being written when the process stopped. */
  uncommittedFrames: number;
  /** Ignored frames of an earlier WAL generation (left over after the log restarted). */
  staleFrames: number;
  /**
   * SQLite replays nothing from this log (its header is invalid, or the chain breaks before the
   * first commit), and every committed frame it ignores holds a page already identical in the
   * database file: nothing is lost. What a crash while the log restarted after a checkpoint leaves
   * (the old generation's frames, all checkpointed, behind an unwritten or old header).
   */
  alreadyInDatabase: boolean;
  /** Committed transactions SQLite would silently drop; null when there are none. */
  damage: WalDamage | null;
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

type Sum = readonly [number, number];

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
function frameChecksum(frame: Uint8Array, littleEndian: boolean, seed: Sum): [number, number] {
  const s = walChecksum(frame.subarray(0, 8), littleEndian, seed);
  return walChecksum(frame.subarray(FRAME_HEADER_BYTES), littleEndian, s);
}

function u32(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;
}

function put32(bytes: Uint8Array, at: number, v: number): void {
  bytes[at] = v >>> 24;
  bytes[at + 1] = (v >>> 16) & 0xff;
  bytes[at + 2] = (v >>> 8) & 0xff;
  bytes[at + 3] = v & 0xff;
}

function bswap(v: number): number {
  return (((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24)) >>> 0;
}

function same(a: Sum, b: Sum): boolean {
  return a[0] === b[0] && a[1] === b[1];
}

function storedSum(frame: Uint8Array): [number, number] {
  return [u32(frame, 16), u32(frame, 20)];
}

function hex(n: number): string {
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

/** Per-frame facts kept for a rebuild: bit 0 salts match, bit 1 verified link, bit 2 commit frame. */
const F_SALT = 1;
const F_LINK = 2;
const F_COMMIT = 4;

export interface WalAnalysis {
  inspection: WalInspection;
  /** One byte of F_* flags per whole frame. */
  frameFlags: Uint8Array;
}

interface Scan {
  flags: Uint8Array;
  /** SQLite's replay (only with a valid header). */
  committedFrames: number;
  committedTransactions: number;
  breakFrame: number;
  breakReason: string;
  lostCommits: number;
  lastLostCommit: number;
}

/**
 * One pass over the frames. `replayFrom`: the header checksum when the
 * header is valid (SQLite replays from it); null when it is not (nothing is
 * replayed; frame 1 is verified against `firstSeed` if one fits).
 */
function scanFrames(wal: ByteSource, layout: WalLayout, frames: number, replayFrom: Sum | null, firstSeed: Sum | null): Scan {
  const frameBytes = FRAME_HEADER_BYTES + layout.pageSize;
  const flags = new Uint8Array(frames);
  const scan: Scan = {
    flags,
    committedFrames: 0,
    committedTransactions: 0,
    breakFrame: 0,
    breakReason: "",
    lostCommits: 0,
    lastLostCommit: 0,
  };
  let replaying = replayFrom !== null;
  let prevStored: Sum | null = replayFrom ?? firstSeed;
  let prevComputed: Sum | null = prevStored;
  for (let i = 0; i < frames; i++) {
    const frame = wal.read(WAL_HEADER_BYTES + i * frameBytes, frameBytes);
    const stored = storedSum(frame);
    const saltOk = u32(frame, 8) === layout.salt1 && u32(frame, 12) === layout.salt2;
    const commit = u32(frame, 4) !== 0;
    let computed: [number, number] | null = null;
    let link = false;
    if (prevStored) {
      computed = frameChecksum(frame, layout.littleEndian, prevStored);
      link = same(computed, stored);
      // The predecessor's own checksum field may be what was damaged: then
      // this frame continues from the value that field should have held.
      if (!link && prevComputed && !same(prevComputed, prevStored) && !replaying) {
        const alt = frameChecksum(frame, layout.littleEndian, prevComputed);
        if (same(alt, stored)) link = true;
      }
    }
    flags[i] = (saltOk ? F_SALT : 0) | (link ? F_LINK : 0) | (commit ? F_COMMIT : 0);
    if (replaying) {
      if (saltOk && link) {
        if (commit) {
          scan.committedFrames = i + 1;
          scan.committedTransactions++;
        }
      } else {
        replaying = false;
        scan.breakFrame = i + 1;
        scan.breakReason = saltOk
          ? "its checksum does not match"
          : `its salts (${hex(u32(frame, 8))} ${hex(u32(frame, 12))}) are not the header's (${hex(layout.salt1)} ${hex(layout.salt2)})`;
      }
    } else if (saltOk && link && commit) {
      scan.lostCommits++;
      scan.lastLostCommit = i + 1;
    }
    prevComputed = link ? stored : computed;
    prevStored = stored;
  }
  return scan;
}

/** Whether every page the frames up to `lastFrame` would write is already identical in the database file. */
function pagesAlreadyInDatabase(wal: ByteSource, db: ByteSource | null, layout: WalLayout, flags: Uint8Array, lastFrame: number): boolean {
  if (!db) return false;
  const frameBytes = FRAME_HEADER_BYTES + layout.pageSize;
  const latest = new Map<number, number>();
  for (let i = 0; i < lastFrame; i++) {
    if ((flags[i]! & F_SALT) === 0) continue;
    latest.set(u32(wal.read(WAL_HEADER_BYTES + i * frameBytes, FRAME_HEADER_BYTES), 0), i);
  }
  for (const [pgno, i] of latest) {
    const at = (pgno - 1) * layout.pageSize;
    if (pgno < 1 || at + layout.pageSize > db.size) return false;
    const page = Buffer.from(wal.read(WAL_HEADER_BYTES + i * frameBytes + FRAME_HEADER_BYTES, layout.pageSize));
    if (!page.equals(db.read(at, layout.pageSize))) return false;
  }
  return true;
}

/** Why SQLite rejects a header, or null if it accepts it. */
function headerProblem(h: Uint8Array): string | null {
  const magic = u32(h, 0);
  if (magic !== WAL_MAGIC_LE && magic !== WAL_MAGIC_BE) return `its magic number is ${hex(magic)}`;
  if (u32(h, 4) !== WAL_FORMAT_VERSION) return `its format version is ${u32(h, 4)}`;
  const pageSize = u32(h, 8);
  if (!(PAGE_SIZES as readonly number[]).includes(pageSize)) return `its page size is ${pageSize}`;
  const sum = walChecksum(h.subarray(0, 24), magic === WAL_MAGIC_LE, [0, 0]);
  if (!same(sum, [u32(h, 24), u32(h, 28)])) return "its checksum does not match";
  return null;
}

/** With the header lost: the page size and byte order under which the most frames verify. */
function guessLayout(wal: ByteSource, db: ByteSource | null): { layout: WalLayout; firstSeed: Sum | null } | null {
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

/** Analyse a WAL image; `db` (the database file) is needed only to judge a WAL whose header is invalid. */
export function analyzeWal(wal: ByteSource, db: ByteSource | null = null): WalAnalysis {
  const inspection: WalInspection = {
    bytes: wal.size,
    headerValid: false,
    pageSize: 0,
    committedFrames: 0,
    committedTransactions: 0,
    ignoredFrames: 0,
    tornTailBytes: 0,
    uncommittedFrames: 0,
    staleFrames: 0,
    alreadyInDatabase: false,
    damage: null,
  };
  const none = { inspection, frameFlags: new Uint8Array(0) };
  if (wal.size < WAL_HEADER_BYTES) {
    inspection.tornTailBytes = wal.size;
    return none;
  }
  const header = new Uint8Array(wal.read(0, WAL_HEADER_BYTES));
  const problem = headerProblem(header);

  if (problem === null) {
    const layout: WalLayout = {
      pageSize: u32(header, 8),
      littleEndian: u32(header, 0) === WAL_MAGIC_LE,
      checkpointSeq: u32(header, 12),
      salt1: u32(header, 16),
      salt2: u32(header, 20),
    };
    const frameBytes = FRAME_HEADER_BYTES + layout.pageSize;
    const frames = Math.floor((wal.size - WAL_HEADER_BYTES) / frameBytes);
    inspection.headerValid = true;
    inspection.pageSize = layout.pageSize;
    inspection.tornTailBytes = (wal.size - WAL_HEADER_BYTES) % frameBytes;
    const scan = scanFrames(wal, layout, frames, [u32(header, 24), u32(header, 28)], null);
    inspection.committedFrames = scan.committedFrames;
    inspection.committedTransactions = scan.committedTransactions;
    inspection.ignoredFrames = frames - scan.committedFrames;
    for (let i = scan.committedFrames; i < frames; i++) {
      if (scan.flags[i]! & F_SALT) inspection.uncommittedFrames++;
      else inspection.staleFrames++;
    }
    // Nothing replayed and nothing missing from the database: the log is spent, not damaged.
    // (When SQLite does replay frames before the break, it would write their older page versions
    // over newer ones that frames after the break put in the database: damage either way.)
    const spent =
      scan.committedFrames === 0 && scan.lostCommits > 0 && pagesAlreadyInDatabase(wal, db, layout, scan.flags, scan.lastLostCommit);
    if (spent) inspection.alreadyInDatabase = true;
    if (scan.lostCommits > 0 && !spent) {
      inspection.damage = {
        kind: "frame",
        frame: scan.breakFrame,
        offset: WAL_HEADER_BYTES + (scan.breakFrame - 1) * frameBytes,
        reason: scan.breakReason,
        lostTransactions: scan.lostCommits,
        lostFrames: scan.lastLostCommit - scan.breakFrame + 1,
        lastCommitFrame: scan.lastLostCommit,
        totalFrames: frames,
        layout,
      };
    }
    return { inspection, frameFlags: scan.flags };
  }

  // Invalid header: SQLite ignores the file. Is anything committed in it?
  const guess = guessLayout(wal, db);
  if (!guess) return none;
  const { layout, firstSeed } = guess;
  const frameBytes = FRAME_HEADER_BYTES + layout.pageSize;
  const frames = Math.floor((wal.size - WAL_HEADER_BYTES) / frameBytes);
  inspection.tornTailBytes = (wal.size - WAL_HEADER_BYTES) % frameBytes;
  inspection.ignoredFrames = frames;
  const scan = scanFrames(wal, layout, frames, null, firstSeed);
  for (let i = 0; i < frames; i++) {
    if (scan.flags[i]! & F_SALT) inspection.uncommittedFrames++;
    else inspection.staleFrames++;
  }
  if (scan.lostCommits === 0) return { inspection, frameFlags: scan.flags };
  if (pagesAlreadyInDatabase(wal, db, layout, scan.flags, scan.lastLostCommit)) {
    inspection.alreadyInDatabase = true;
    return { inspection, frameFlags: scan.flags };
  }
  inspection.damage = {
    kind: "header",
    frame: 1,
    offset: 0,
    reason: problem,
    lostTransactions: scan.lostCommits,
    lostFrames: scan.lastLostCommit,
    lastCommitFrame: scan.lastLostCommit,
    totalFrames: frames,
    layout,
  };
  return { inspection, frameFlags: scan.flags };
}

/** Parse a WAL image (the whole file's bytes); `db` is the database file's bytes, if any. */
export function inspectWalBytes(wal: Uint8Array, db?: Uint8Array): WalInspection {
  return analyzeWal(bytesSource(wal), db ? bytesSource(db) : null).inspection;
}

function openIfExists(file: string): number | null {
  try {
    return fs.openSync(file, "r");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/**
 * Analyse `<db>-wal` if it exists; null when there is none (clean shutdown).
 * Reads frame by frame: memory stays at a few pages whatever the log's size.
 */
export function analyzeWalFile(walPath: string, dbPath?: string): WalAnalysis | null {
  const walFd = openIfExists(walPath);
  if (walFd === null) return null;
  const dbFd = dbPath ? openIfExists(dbPath) : null;
  try {
    return analyzeWal(fileSource(walFd), dbFd === null ? null : fileSource(dbFd));
  } finally {
    fs.closeSync(walFd);
    if (dbFd !== null) fs.closeSync(dbFd);
  }
}

/** Inspect `<db>-wal` if it exists; null when there is none (clean shutdown). */
export function inspectWalFile(walPath: string, dbPath?: string): WalInspection | null {
  return analyzeWalFile(walPath, dbPath)?.inspection ?? null;
}

/**
 * Write a WAL that SQLite accepts whole: a fresh header for the damaged log's
 * layout, then every frame of the current generation up to the last verified
 * commit frame (the damaged ones included, salts restored), with the
 * checksum chain recomputed. Replaying it gives the database as the last
 * committed transaction left it, except for whatever bytes the damage itself
 * changed (the runtime's per-row checksums find those). Frames of other
 * generations in that range are left out. Writes through `write` in frame-
 * sized chunks.
 */
export function rebuildWal(wal: ByteSource, analysis: WalAnalysis, write: (chunk: Uint8Array) => void): { frames: number } {
  const damage = analysis.inspection.damage;
  if (!damage) throw new Error("rebuildWal: the log is not damaged");
  const { layout } = damage;
  const flags = analysis.frameFlags;
  const frameBytes = FRAME_HEADER_BYTES + layout.pageSize;
  const header = walHeader(layout);
  write(header);
  let sum: Sum = [u32(header, 24), u32(header, 28)];
  let written = 0;
  for (let i = 0; i < damage.lastCommitFrame; i++) {
    const f = flags[i]!;
    const next = i + 1 < flags.length ? flags[i + 1]! : 0;
    // In the chain: current salts, a verified link, or a successor that verifies against it.
    const inChain = (f & (F_SALT | F_LINK)) !== 0 || (next & F_LINK) !== 0 || i + 1 === damage.frame;
    if (!inChain) continue;
    const frame = new Uint8Array(wal.read(WAL_HEADER_BYTES + i * frameBytes, frameBytes));
    put32(frame, 8, layout.salt1);
    put32(frame, 12, layout.salt2);
    sum = frameChecksum(frame, layout.littleEndian, sum);
    put32(frame, 16, sum[0]);
    put32(frame, 20, sum[1]);
    write(frame);
    written++;
  }
  return { frames: written };
}
