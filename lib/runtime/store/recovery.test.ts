// A damaged WAL after a real crash: a child process appends 40 acknowledged
// group commits and is SIGKILLed in the middle of a 41st (crash-writer.ts),
// leaving 42 committed transactions in the log. Copies of that data folder
// are then damaged the way bad storage does, and the store must refuse to
// open them (before SQLite drops the transactions after the damage), and the
// explicit recovery must keep every record it can and name every one it
// cannot.
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recoverStore, type RecoveryReport } from "./recovery";
import { openSqliteStore, SQLITE_FILE_NAME } from "./sqlite";
import { StoreCorruptionError } from "./types";
import { RECOVERY_MARKER_FILE, WalDamageError } from "./wal-check";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "../../..");
const BURSTS = 40;
const PER_BURST = 15;

interface Written {
  position: number;
  sessionId: string;
  seq: number;
}

let root: string;
let pristine: string;
/** Every record the child committed, acknowledged or not, by position. */
let committed: Written[];
let acked: Written[];

function crashWriter(dir: string): Promise<{ acked: Written[]; finalBurst: [number, number]; signal: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(here, "__fixtures__", "crash-writer.ts"), dir, String(BURSTS), String(PER_BURST)],
      { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", (_code, signal) => {
      const result = { acked: [] as Written[], finalBurst: [0, 0] as [number, number], signal };
      for (const line of out.split("\n")) {
        const [word, a, b, c] = line.split(" ");
        if (word === "ack") result.acked.push({ position: Number(a), sessionId: String(b), seq: Number(c) });
        if (word === "kill") result.finalBurst = [Number(a), Number(b)];
      }
      resolve(result);
    });
  });
}

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "baton-recovery-"));
  pristine = path.join(root, "pristine");
  const child = await crashWriter(pristine);
  expect(child.signal).toBe("SIGKILL");
  acked = child.acked;
  expect(acked).toHaveLength(BURSTS * PER_BURST);
  // The final burst was committed (its commit frame is in the log) but never acknowledged.
  const last = new Map<string, number>();
  for (const a of acked) last.set(a.sessionId, a.seq);
  const final: Written[] = [];
  for (let i = 0, p = child.finalBurst[0]; p <= child.finalBurst[1]; i++, p++) {
    const sessionId = `session-${i % 5}`;
    const seq = (last.get(sessionId) ?? 0) + 1;
    last.set(sessionId, seq);
    final.push({ position: p, sessionId, seq });
  }
  committed = [...acked, ...final];
}, 60_000);

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

let copies = 0;
function copyOfPristine(): string {
  const dir = path.join(root, `copy-${++copies}`);
  fs.cpSync(pristine, dir, { recursive: true });
  return dir;
}

const walOf = (dir: string) => path.join(dir, `${SQLITE_FILE_NAME}-wal`);
const pageSize = (dir: string) => fs.readFileSync(walOf(dir)).readUInt32BE(8);
const frameOffset = (dir: string, frame: number) => 32 + (frame - 1) * (pageSize(dir) + 24);

function flipByte(file: string, offset: number, mask = 0x10): void {
  const fd = fs.openSync(file, "r+");
  try {
    const b = Buffer.alloc(1);
    fs.readSync(fd, b, 0, 1, offset);
    b[0]! ^= mask;
    fs.writeSync(fd, b, 0, 1, offset);
  } finally {
    fs.closeSync(fd);
  }
}

/** sha256 of every file in `dir` (non-recursive), by name. */
function fingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (fs.statSync(p).isFile()) out[name] = crypto.createHash("sha256").update(fs.readFileSync(p)).digest("hex");
  }
  return out;
}

function openError(dir: string): unknown {
  try {
    const s = openSqliteStore({ dir });
    void s.close();
    return null;
  } catch (e) {
    return e;
  }
}

/** The records of a (healthy) data folder, through the store's own verified read. */
async function storedRecords(dir: string): Promise<Array<{ sessionId: string; seq: number }>> {
  const s = openSqliteStore({ dir });
  try {
    return s.loadAll().map((r) => ({ sessionId: r.sessionId, seq: r.seq }));
  } finally {
    await s.close();
  }
}

const byLoad = async (dir: string) => {
  const s = openSqliteStore({ dir });
  try {
    return `${s.loadAll().length} records load`;
  } finally {
    await s.close();
  }
};

const key = (r: { sessionId: string; seq: number }) => `${r.sessionId}#${r.seq}`;

describe("what a crash leaves is not damage", () => {
  it("frames of an earlier WAL generation behind the current ones (the log restarted after a checkpoint) open normally", async () => {
    const live = path.join(root, "restarted");
    const store = openSqliteStore({ dir: live });
    const envelope = new Uint8Array(2048).fill(7);
    let seq = 0;
    try {
      // ~6 MiB: past SQLite's 1,000-page autocheckpoint, after which the next commit restarts the log.
      for (let burst = 0; burst < 30; burst++) {
        await Promise.all(
          Array.from({ length: 100 }, () => store.append([{ sessionId: "s", kind: "envelope", seq: ++seq, recvMs: 1, envelope }])),
        );
      }
      // What a kill -9 now would leave on disk (synchronous=FULL: every commit is there).
      const copy = path.join(root, "restarted-copy");
      fs.mkdirSync(copy);
      for (const name of fs.readdirSync(live)) fs.copyFileSync(path.join(live, name), path.join(copy, name));
      const lines: Array<{ level: string; obj: object; msg?: string }> = [];
      const logger = {
        info: (obj: object, msg?: string) => void lines.push({ level: "info", obj, msg }),
        warn: (obj: object, msg?: string) => void lines.push({ level: "warn", obj, msg }),
        error: (obj: object, msg?: string) => void lines.push({ level: "error", obj, msg }),
      };
      const reopened = openSqliteStore({ dir: copy, logger });
      try {
        expect(reopened.openReport.wal?.staleFrames).toBeGreaterThan(0);
        expect(reopened.openReport.wal?.damage).toBeNull();
        expect(reopened.loadAll()).toHaveLength(seq);
        expect(lines.find((l) => /earlier WAL generation/.test(l.msg ?? ""))?.level).toBe("info");
      } finally {
        await reopened.close();
      }
    } finally {
      await store.close();
    }
  });
});

describe("a damaged WAL after a real crash", () => {
  it("the undamaged copy holds 42 committed transactions: 40 acknowledged bursts, the schema and the unacknowledged final burst", async () => {
    const dir = copyOfPristine();
    const r = await recoverStore({ dir, apply: false });
    expect(r.status).toBe("no-damage");
    expect(r.wal).toMatchObject({ committedTransactions: BURSTS + 2, damage: null });
  });

  it("refuses to open when one bit flips in frame 5, says what it found and what to run, and changes nothing", () => {
    const dir = copyOfPristine();
    flipByte(walOf(dir), frameOffset(dir, 5) + 24 + 2000);
    const before = fingerprint(dir);
    const err = openError(dir);
    expect(err).toBeInstanceOf(WalDamageError);
    expect(err).toBeInstanceOf(StoreCorruptionError);
    const message = (err as Error).message;
    expect(message).toContain("refusing to start because the write-ahead log is damaged");
    expect(message).toMatch(/Frame 5 of [\d,]+ in the write-ahead log \(byte [\d,]+\) is damaged: its checksum does not match/);
    expect(message).toMatch(/[\d,]+ committed transactions \([\d,]+ frames\) follow it/);
    expect(message).toContain(`npm run runtime:recover -- --data-dir ${dir}`);
    expect((err as WalDamageError).inspection?.damage?.lostTransactions).toBeGreaterThanOrEqual(BURSTS);
    // Still refused the second time: nothing was checkpointed away.
    expect(openError(dir)).toBeInstanceOf(WalDamageError);
    expect(fingerprint(dir)).toEqual(before);
  });

  it("refuses to open when the WAL header is zeroed", () => {
    const dir = copyOfPristine();
    const fd = fs.openSync(walOf(dir), "r+");
    fs.writeSync(fd, Buffer.alloc(32), 0, 32, 0);
    fs.closeSync(fd);
    const err = openError(dir);
    expect(err).toBeInstanceOf(WalDamageError);
    expect((err as Error).message).toContain(
      `The write-ahead log's header is invalid (its magic number is 0x00000000), so SQLite would ignore the whole file, ` +
        `yet it holds ${BURSTS + 2} committed transactions`,
    );
  });

  it("recovery: the report changes nothing; --apply copies the damaged files aside and keeps every committed record", async () => {
    const dir = copyOfPristine();
    flipByte(walOf(dir), frameOffset(dir, 5) + 24 + 2000);
    const before = fingerprint(dir);

    const plan = await recoverStore({ dir, apply: false, verify: byLoad });
    expect(plan.status).toBe("planned");
    expect(plan.damage).toMatch(/^Frame 5 of/);
    expect(plan.sqliteWouldKeep).toEqual({ records: 0, lastPosition: 0 });
    expect(plan.recovered).toMatchObject({ records: committed.length, lastPosition: committed.length, sessions: 5 });
    expect(plan.rescued).toBe(committed.length);
    expect(plan.lost).toMatchObject({ records: 0, sessions: [], missing: [], afterDamageUnreadable: null });
    expect(plan.verified).toBe(`${committed.length} records load`);
    expect(fingerprint(dir)).toEqual(before);
    expect(fs.readdirSync(dir).sort()).toEqual([SQLITE_FILE_NAME, `${SQLITE_FILE_NAME}-wal`]);

    const done = await recoverStore({ dir, apply: true, verify: byLoad, now: () => new Date("2026-11-23T10:00:00Z") });
    expect(done.status).toBe("applied");
    expect(done.backupDir).toBe(path.join(dir, "damaged-20261123T100000Z"));
    expect(done.recovered).toEqual(plan.recovered);
    const backup = fingerprint(done.backupDir!);
    expect(backup[SQLITE_FILE_NAME]).toBe(before[SQLITE_FILE_NAME]);
    expect(backup[`${SQLITE_FILE_NAME}-wal`]).toBe(before[`${SQLITE_FILE_NAME}-wal`]);
    expect(Object.keys(backup)).toContain("recovery-report.json");
    expect(fs.readdirSync(dir).sort()).toEqual([SQLITE_FILE_NAME, "damaged-20261123T100000Z"]);

    expect((await storedRecords(dir)).map(key)).toEqual(committed.map(key));
    expect((await recoverStore({ dir, apply: false })).status).toBe("no-damage");
  });

  it("recovery: a flipped row loses that record and the rest of its session, and says exactly which", async () => {
    const dir = copyOfPristine();
    const target = findLateRowFrame(dir);
    flipByte(walOf(dir), target.byte, 0x01);

    const plan = await recoverStore({ dir, apply: false, verify: byLoad });
    const victim = committed.find((c) => c.position === target.rowid)!;
    const expectedLost = committed.filter((c) => c.sessionId === victim.sessionId && c.seq >= victim.seq);
    expect(plan.lost.records).toBe(expectedLost.length);
    expect(plan.lost.sessions).toEqual([
      {
        sessionId: victim.sessionId,
        records: expectedLost.length,
        fromSeq: victim.seq,
        fromPosition: victim.position,
        reason: "row checksum mismatch",
      },
    ]);
    expect(plan.lost.sample[0]).toEqual({ ...victim, kind: "envelope", reason: "row checksum mismatch" });
    expect(plan.lost.sample.slice(1).every((l) => l.reason === "an earlier record of its session is lost")).toBe(true);
    expect(plan.recovered.records).toBe(committed.length - expectedLost.length);
    expect(plan.sqliteWouldKeep.records).toBeLessThan(target.rowid);

    const done = await recoverStore({ dir, apply: true, verify: byLoad });
    const lostFile = fs
      .readFileSync(done.lostRecordsFile!, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Written);
    expect(lostFile.map(key)).toEqual(expectedLost.map(key));
    const lostKeys = new Set(expectedLost.map(key));
    expect((await storedRecords(dir)).map(key)).toEqual(committed.filter((c) => !lostKeys.has(key(c))).map(key));
  });

  it("an interrupted --apply blocks the runtime until the command is run again, which finishes it", async () => {
    // The state an --apply leaves if it dies between writing its marker and swapping the files.
    const recovered = copyOfPristine();
    flipByte(walOf(recovered), frameOffset(recovered, 5) + 24 + 2000);
    await recoverStore({ dir: recovered, apply: true });
    const dir = copyOfPristine();
    flipByte(walOf(dir), frameOffset(dir, 5) + 24 + 2000);
    const scratch = path.join(dir, ".recovery-test");
    fs.mkdirSync(path.join(scratch, "recovered"), { recursive: true });
    const replacement = path.join(scratch, "recovered", SQLITE_FILE_NAME);
    fs.copyFileSync(path.join(recovered, SQLITE_FILE_NAME), replacement);
    const backupDir = path.join(dir, "damaged-test");
    fs.mkdirSync(backupDir);
    const marker = { database: path.join(dir, SQLITE_FILE_NAME), backupDir, replacement, scratch, startedAt: "2026-11-23T10:00:00.000Z" };
    fs.writeFileSync(path.join(dir, RECOVERY_MARKER_FILE), JSON.stringify(marker));

    const err = openError(dir);
    expect(err).toBeInstanceOf(WalDamageError);
    expect((err as Error).message).toContain(`a recovery of this data folder was interrupted`);
    expect((err as Error).message).toContain(`npm run runtime:recover -- --data-dir ${dir} --apply`);
    const plan: RecoveryReport = await recoverStore({ dir, apply: false });
    expect(plan.status).toBe("planned");
    expect(plan.damage).toContain("interrupted");

    expect((await recoverStore({ dir, apply: true })).status).toBe("finished");
    expect(fs.readdirSync(dir).sort()).toEqual([SQLITE_FILE_NAME, "damaged-test"]);
    expect((await storedRecords(dir)).map(key)).toEqual(committed.map(key));
  });
});

/**
 * A byte to flip so that one record committed after the damage point fails
 * its row checksum: the last byte (the crc column) of the newest row on a
 * table leaf page, in a frame that is that page's last version and whose row
 * SQLite's own recovery (stopping at that frame) would not have.
 */
function findLateRowFrame(dir: string): { byte: number; rowid: number } {
  const wal = fs.readFileSync(walOf(dir));
  const ps = wal.readUInt32BE(8);
  const frames = Math.floor((wal.length - 32) / (ps + 24));
  const pageOf = (f: number) => wal.readUInt32BE(32 + (f - 1) * (ps + 24));
  const varint = (at: number): [number, number] => {
    let v = 0;
    for (let i = 0; i < 8; i++) {
      const c = wal[at + i]!;
      v = v * 128 + (c & 0x7f);
      if (!(c & 0x80)) return [v, at + i + 1];
    }
    return [v * 256 + wal[at + 8]!, at + 9];
  };
  for (let f = Math.floor(frames / 2); f < frames; f++) {
    const page = 32 + (f - 1) * (ps + 24) + 24;
    if (wal[page] !== 0x0d) continue; // table b-tree leaf
    let later = false;
    for (let g = f + 1; g <= frames && !later; g++) later = pageOf(g) === pageOf(f);
    if (later) continue; // superseded: the damage would not matter
    const cells = wal.readUInt16BE(page + 3);
    const cell = page + wal.readUInt16BE(page + 8 + 2 * (cells - 1));
    const [payload, afterLen] = varint(cell);
    const [rowid, start] = varint(afterLen);
    // What SQLite alone keeps when its replay stops at this frame.
    const probe = path.join(root, `probe-${f}`);
    fs.mkdirSync(probe);
    fs.copyFileSync(path.join(dir, SQLITE_FILE_NAME), path.join(probe, SQLITE_FILE_NAME));
    fs.writeFileSync(path.join(probe, `${SQLITE_FILE_NAME}-wal`), wal.subarray(0, 32 + (f - 1) * (ps + 24)));
    const db = new Database(path.join(probe, SQLITE_FILE_NAME));
    const kept = db.prepare<[], { last: number }>("SELECT COALESCE(MAX(position), 0) AS last FROM log").get()?.last ?? 0;
    db.close();
    if (rowid > kept) return { byte: start + payload - 1, rowid };
  }
  throw new Error("no table leaf frame with a row committed after it");
}
