// The WAL analysis against logs written by SQLite itself (better-sqlite3 in
// this process): the files are copied while the connection is open, which
// is what a kill -9 leaves on disk with synchronous=FULL. Each case damages
// a copy the way a crash or bad storage would and checks what the analysis
// says SQLite will do, and what it would silently drop.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { analyzeWal, bytesSource, inspectWalBytes, rebuildWal, type WalInspection } from "./wal";

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "baton-wal-"));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

interface Snapshot {
  wal: Buffer;
  db: Buffer;
}

/** A live database writing one transaction per call, like the runtime's store (exclusive locking, WAL, FULL). */
function liveDb(name = "live.sqlite") {
  const file = path.join(tmp, name);
  const db = new Database(file);
  db.pragma("locking_mode = EXCLUSIVE");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("wal_autocheckpoint = 0");
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)");
  const insert = db.prepare("INSERT INTO t (v) VALUES (?)");
  let n = 0;
  return {
    db,
    /** One transaction of `rows` rows of 300 bytes. */
    tx(rows = 5) {
      db.transaction(() => {
        for (let i = 0; i < rows; i++) insert.run(Buffer.alloc(300, ++n & 0xff));
      })();
    },
    get rows() {
      return n;
    },
    snapshot(): Snapshot {
      return { wal: fs.readFileSync(`${file}-wal`), db: fs.readFileSync(file) };
    },
    close() {
      db.close();
    },
  };
}

function pageSizeOf(s: Snapshot): number {
  return s.wal.readUInt32BE(8);
}

function frameAt(s: Snapshot, frame: number): number {
  return 32 + (frame - 1) * (pageSizeOf(s) + 24);
}

function frameCount(s: Snapshot): number {
  return Math.floor((s.wal.length - 32) / (pageSizeOf(s) + 24));
}

/** 1-based indexes of the commit frames. */
function commitFrames(s: Snapshot): number[] {
  const out: number[] = [];
  for (let i = 1; i <= frameCount(s); i++) if (s.wal.readUInt32BE(frameAt(s, i) + 4) !== 0) out.push(i);
  return out;
}

function flip(s: Snapshot, offset: number, mask = 0x10): Snapshot {
  const wal = Buffer.from(s.wal);
  wal[offset]! ^= mask;
  return { wal, db: s.db };
}

function inspect(s: Snapshot): WalInspection {
  return inspectWalBytes(s.wal, s.db);
}

/** Rows SQLite sees when it opens these files (a copy; its recovery runs as on a restart). */
function rowsSeenBySqlite(s: Snapshot, name: string): number {
  const file = path.join(tmp, `${name}.sqlite`);
  fs.writeFileSync(file, s.db);
  fs.writeFileSync(`${file}-wal`, s.wal);
  const db = new Database(file);
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    const has = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 't'").get();
    return has ? (db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM t").get()?.n ?? 0) : 0;
  } finally {
    db.close();
  }
}

function rebuilt(s: Snapshot): Snapshot {
  const analysis = analyzeWal(bytesSource(s.wal), bytesSource(s.db));
  const chunks: Uint8Array[] = [];
  rebuildWal(bytesSource(s.wal), analysis, (c) => void chunks.push(Buffer.from(c)));
  return { wal: Buffer.concat(chunks), db: s.db };
}

describe("WAL analysis: what a crash leaves is normal", () => {
  it("an intact log: every transaction is replayed, nothing is damaged", () => {
    const live = liveDb();
    for (let i = 0; i < 12; i++) live.tx();
    const s = live.snapshot();
    live.close();
    const w = inspect(s);
    expect(w).toMatchObject({ headerValid: true, committedTransactions: 13, ignoredFrames: 0, tornTailBytes: 0, damage: null });
    expect(w.committedFrames).toBe(frameCount(s));
    expect(rowsSeenBySqlite(s, "intact")).toBe(60);
  });

  it("a torn last frame (cut short, or written without its page) is an unfinished transaction, not damage", () => {
    const live = liveDb();
    for (let i = 0; i < 12; i++) live.tx();
    live.tx(40); // a last transaction of several frames
    const s = live.snapshot();
    live.close();
    const commits = commitFrames(s);
    const lastCommit = commits.at(-1)!;
    const previousCommit = commits.at(-2)!;

    const cut = { wal: s.wal.subarray(0, s.wal.length - 100), db: s.db };
    expect(inspect(cut)).toMatchObject({
      damage: null,
      committedFrames: previousCommit,
      uncommittedFrames: lastCommit - previousCommit - 1,
      tornTailBytes: pageSizeOf(s) + 24 - 100,
    });
    expect(rowsSeenBySqlite(cut, "cut")).toBe(60);

    // The commit frame's header written, its page not (stale bytes where the page should be).
    const stalePage = flip(s, frameAt(s, lastCommit) + 24 + 1000);
    expect(inspect(stalePage)).toMatchObject({
      damage: null,
      committedFrames: previousCommit,
      uncommittedFrames: lastCommit - previousCommit,
    });

    // A frame in the middle of the last transaction missing, the ones after it never written.
    const middle = previousCommit + 2;
    const gap = { wal: Buffer.from(s.wal.subarray(0, frameAt(s, middle) + 24 + 2000)), db: s.db };
    gap.wal.fill(0, frameAt(s, middle) + 24);
    expect(inspect(gap)).toMatchObject({ damage: null, committedFrames: previousCommit });
  });

  it("frames of an earlier WAL generation after the current ones are stale, even with a torn current tail", () => {
    const live = liveDb();
    for (let i = 0; i < 30; i++) live.tx();
    live.db.pragma("wal_checkpoint(PASSIVE)");
    // The next write restarts the log from frame 1 with new salts; the old frames stay behind it.
    live.tx();
    live.tx();
    const s = live.snapshot();
    live.close();
    const w = inspect(s);
    expect(w.damage).toBeNull();
    expect(w.committedTransactions).toBe(2);
    expect(w.staleFrames).toBeGreaterThan(20);
    expect(w.staleFrames).toBe(frameCount(s) - w.committedFrames);
    expect(rowsSeenBySqlite(s, "restarted")).toBe(160);

    // The current generation's last commit frame torn: old commit frames follow, but with old salts.
    const torn = flip(s, frameAt(s, w.committedFrames) + 24 + 500);
    const t = inspect(torn);
    expect(t.damage).toBeNull();
    expect(t.committedTransactions).toBe(1);
    expect(t.staleFrames).toBe(w.staleFrames);
  });

  it("a log restart the crash cut short (new frames written, the old header still there) loses nothing", () => {
    const live = liveDb();
    for (let i = 0; i < 30; i++) live.tx();
    live.db.pragma("wal_checkpoint(PASSIVE)"); // every frame of this generation is in the database file
    const before = live.snapshot();
    live.tx(); // restarts the log: new header and salts, frames from 1 on
    const after = live.snapshot();
    live.close();
    // The new frames reached the disk, the new header did not (a power loss reorders unsynced writes).
    const torn = { wal: Buffer.from(after.wal), db: before.db };
    before.wal.copy(torn.wal, 0, 0, 32);
    const w = inspect(torn);
    expect(w.committedFrames).toBe(0); // SQLite's replay stops at frame 1 (new salts)
    expect(w).toMatchObject({ damage: null, alreadyInDatabase: true });
    expect(rowsSeenBySqlite(torn, "restart-torn")).toBe(150);

    // The same frames when the database file lacks them (it was never checkpointed): damage.
    const lacking = { wal: torn.wal, db: Buffer.alloc(0) };
    expect(inspect(lacking).damage).toMatchObject({ kind: "frame", frame: 1 });
  });

  it("an invalid header in front of frames that are already in the database loses nothing", () => {
    const live = liveDb();
    for (let i = 0; i < 10; i++) live.tx();
    live.db.pragma("wal_checkpoint(PASSIVE)"); // every frame copied into the database file
    const s = live.snapshot();
    live.close();
    const zeroed = { wal: Buffer.from(s.wal), db: s.db };
    zeroed.wal.fill(0, 0, 32);
    const w = inspect(zeroed);
    expect(w).toMatchObject({ headerValid: false, damage: null, alreadyInDatabase: true });
    expect(rowsSeenBySqlite(zeroed, "harmless")).toBe(50);
  });
});

describe("WAL analysis: damage followed by committed transactions", () => {
  function tenTransactions(): Snapshot {
    const live = liveDb();
    for (let i = 0; i < 10; i++) live.tx();
    const s = live.snapshot();
    live.close();
    return s;
  }

  it("one flipped bit in an early frame: SQLite drops every later transaction, the analysis names them", () => {
    const s = tenTransactions();
    const commits = commitFrames(s);
    const target = commits[2]! + 1; // first frame of the 4th transaction
    const bad = flip(s, frameAt(s, target) + 24 + 1500);
    const w = inspect(bad);
    expect(w.committedTransactions).toBe(3);
    expect(w.damage).toMatchObject({
      kind: "frame",
      frame: target,
      offset: frameAt(s, target),
      reason: "its checksum does not match",
      lostTransactions: commits.filter((c) => c >= target).length,
      lastCommitFrame: commits.at(-1),
      lostFrames: frameCount(s) - target + 1,
    });
    // What SQLite really does with it: only the first three transactions (one is the CREATE TABLE).
    expect(rowsSeenBySqlite(bad, "flipped")).toBe(10);
  });

  it("a flipped bit in the frame's page number, salt or checksum field is found too", () => {
    const s = tenTransactions();
    const commits = commitFrames(s);
    const target = commits[3]!; // a commit frame, so that the next transaction starts right after it
    for (const [field, at] of [
      ["page number", 1],
      ["salt-1", 9],
      ["salt-2", 14],
      ["checksum-1", 17],
      ["checksum-2", 22],
    ] as const) {
      const w = inspect(flip(s, frameAt(s, target) + at, 0x01));
      expect(w.damage, field).not.toBeNull();
      expect(w.damage?.frame, field).toBe(target);
      expect(w.damage?.lostTransactions, field).toBe(commits.length - 4);
    }
  });

  it("damage inside the last transaction whose commit frame verifies is damage, a damaged last commit frame is not", () => {
    const live = liveDb();
    for (let i = 0; i < 6; i++) live.tx();
    live.tx(40);
    const s = live.snapshot();
    live.close();
    const commits = commitFrames(s);
    const last = commits.at(-1)!;
    expect(last - commits.at(-2)!).toBeGreaterThan(2);
    expect(inspect(flip(s, frameAt(s, last - 1) + 24 + 100)).damage).toMatchObject({ frame: last - 1, lostTransactions: 1 });
    // Indistinguishable from a commit frame whose page was not yet written when the process died.
    expect(inspect(flip(s, frameAt(s, last) + 24 + 100)).damage).toBeNull();
  });

  it("a zeroed header in front of committed frames is damage, with or without a page size in the database file", () => {
    const s = tenTransactions();
    const zeroed = { wal: Buffer.from(s.wal), db: s.db };
    zeroed.wal.fill(0, 0, 32);
    const w = inspect(zeroed);
    expect(w.headerValid).toBe(false);
    const expected = {
      kind: "header",
      frame: 1,
      reason: "its magic number is 0x00000000",
      lostTransactions: 11,
      lostFrames: frameCount(s),
    };
    expect(w.damage).toMatchObject(expected);
    // Without the database file (no page size from it) the frames alone tell the layout.
    expect(inspectWalBytes(zeroed.wal).damage).toMatchObject({ ...expected, layout: { pageSize: pageSizeOf(s) } });
    expect(rowsSeenBySqlite(zeroed, "zeroed")).toBe(0);

    // The same with a checkpointed database file that lacks the later frames.
    const live = liveDb("second.sqlite");
    for (let i = 0; i < 5; i++) live.tx();
    live.db.pragma("wal_checkpoint(PASSIVE)");
    for (let i = 0; i < 5; i++) live.tx();
    const s2 = live.snapshot();
    live.close();
    const z2 = { wal: Buffer.from(s2.wal), db: s2.db };
    z2.wal.fill(0, 0, 32);
    expect(s2.db.length).toBeGreaterThan(0);
    expect(inspect(z2).damage).toMatchObject({ kind: "header", lostTransactions: 5 });
  });

  it("a rebuilt log makes SQLite replay every committed transaction, in either byte order", () => {
    const s = tenTransactions();
    const commits = commitFrames(s);
    const bad = flip(s, frameAt(s, commits[1]! + 1) + 24 + 3000);
    const fixed = rebuilt(bad);
    expect(inspect(fixed)).toMatchObject({ damage: null, committedTransactions: 11, committedFrames: frameCount(s) });
    expect(rowsSeenBySqlite(fixed, "rebuilt")).toBe(50);

    const zeroed = { wal: Buffer.from(s.wal), db: s.db };
    zeroed.wal.fill(0, 0, 32);
    expect(rowsSeenBySqlite(rebuilt(zeroed), "rebuilt-header")).toBe(50);

    // Big-endian checksums (what a big-endian machine writes): SQLite accepts them as well.
    const analysis = analyzeWal(bytesSource(bad.wal), bytesSource(bad.db));
    const damage = analysis.inspection.damage!;
    const be: typeof analysis = {
      ...analysis,
      inspection: { ...analysis.inspection, damage: { ...damage, layout: { ...damage.layout, littleEndian: false } } },
    };
    const chunks: Uint8Array[] = [];
    rebuildWal(bytesSource(bad.wal), be, (c) => void chunks.push(Buffer.from(c)));
    const bigEndian = { wal: Buffer.concat(chunks), db: s.db };
    expect(bigEndian.wal.readUInt32BE(0)).toBe(0x377f0683);
    expect(inspect(bigEndian)).toMatchObject({ damage: null, committedTransactions: 11 });
    expect(rowsSeenBySqlite(bigEndian, "big-endian")).toBe(50);
    // ...and a zeroed big-endian header is recognised from its frames.
    bigEndian.wal.fill(0, 0, 32);
    expect(inspect(bigEndian).damage).toMatchObject({ kind: "header", lostTransactions: 11 });
  });
});
