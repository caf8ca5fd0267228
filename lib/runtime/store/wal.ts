// Read-only analysis of a SQLite write-ahead log left behind by a previous
// process, done before SQLite opens the database (which then replays it and,
// at its first checkpoint, makes its choice permanent).
//
// The file format and its checksum arithmetic are wal-format.ts; this file
// reads a log the way SQLite's recovery will, says what it keeps and what it
// drops, and rebuilds a damaged log into one SQLite replays whole.
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
import {
  bytesSource,
  fileSource,
  FRAME_HEADER_BYTES,
  frameChecksum,
  guessLayout,
  headerProblem,
  hex,
  put32,
  same,
  storedSum,
  u32,
  WAL_HEADER_BYTES,
  WAL_MAGIC_LE,
  walHeader,
  type ByteSource,
  type Sum,
  type WalLayout,
} from "./wal-format";

export { bytesSource, fileSource, walChecksum, walHeader, type ByteSource, type WalLayout } from "./wal-format";

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
