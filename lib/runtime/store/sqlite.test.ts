// SQLite-specific behaviour: file layout and pragmas, integrity checks,
// locking, and recovery from a crash that tore the end of the WAL.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type StoreLogger } from "./common";
import { recordCrc } from "./row-crc";
import { CLEAN_CLOSE_SUFFIX } from "./clean-close";
import { openSqliteStore, SQL, SQLITE_FILE_NAME, type SqliteStore } from "./sqlite";
import { StoreCorruptionError, type LogRecord } from "./types";
import { inspectWalFile } from "./wal";

const enc = new TextEncoder();
const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "../../..");

function env(sessionId: string, seq: number, text = `${sessionId}#${seq}`): LogRecord {
  return { sessionId, kind: "envelope", seq, recvMs: 1_700_000_000_000 + seq, envelope: enc.encode(text) };
}

interface LogLine {
  level: "info" | "warn" | "error";
  obj: object;
  msg: string | undefined;
}

function recordingLogger(): StoreLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  return {
    lines,
    info: (obj, msg) => void lines.push({ level: "info", obj, msg }),
    warn: (obj, msg) => void lines.push({ level: "warn", obj, msg }),
    error: (obj, msg) => void lines.push({ level: "error", obj, msg }),
  };
}

/** Run `fn` on a plain connection to the (closed) store file. */
function withRaw<T>(dir: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path.join(dir, SQLITE_FILE_NAME));
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

let dir: string;
let open: SqliteStore[];

function openStore(logger?: StoreLogger, at = dir, integrityCheck?: "auto" | "always"): SqliteStore {
  const s = openSqliteStore({ dir: at, logger, integrityCheck });
  open.push(s);
  return s;
}

beforeEach(() => {
  dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "baton-sqlite-")), "data");
  open = [];
});

afterEach(async () => {
  for (const s of open) await s.close().catch(() => undefined);
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
});

describe("sqlite store: file, pragmas and schema", () => {
  it("creates <dir>/baton-runtime.sqlite (dir mode 0700) in WAL mode with synchronous=FULL", async () => {
    const logger = recordingLogger();
    const s = openStore(logger);
    expect(s.path).toBe(path.join(dir, SQLITE_FILE_NAME));
    expect(fs.existsSync(s.path)).toBe(true);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(s.openReport).toMatchObject({
      path: s.path,
      created: true,
      walBytesBefore: 0,
      wal: null,
      recoveredRecords: 0,
      lastPosition: 0,
      policies: 0,
      checkedOk: true,
      quickCheck: { ran: true, reason: "no record of a verified clean shutdown" },
      schemaVersion: 3,
      journalMode: "wal",
      synchronous: "FULL",
      lockingMode: "exclusive",
    });
    expect(logger.lines).toEqual([expect.objectContaining({ level: "info", msg: "runtime store: opened" })]);
    await s.append([env("a", 1)]);
    await s.close();

    withRaw(dir, (db) => {
      expect(db.pragma("user_version", { simple: true })).toBe(3);
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      const schema = db.prepare<[], { name: string; sql: string }>("SELECT name, sql FROM sqlite_schema").all();
      const sqlOf = (name: string): string => schema.find((r) => r.name === name)?.sql ?? "";
      expect(sqlOf("log")).toMatch(/STRICT$/);
      expect(sqlOf("policies")).toMatch(/STRICT$/);
      expect(sqlOf("log_session_seq")).toMatch(/ON log \(session_id, seq\)/);
    });
  });

  it("accepts a pino logger", async () => {
    const logger: StoreLogger = pino({ level: "silent" });
    const s = openStore(logger);
    await s.append([env("a", 1)]);
    expect(s.loadAll()).toHaveLength(1);
  });

  it("persists across reopen and leaves no WAL after a clean close", async () => {
    const s = openStore();
    await s.append([{ ...env("a", 1), boundPolicy: enc.encode("bound") }, env("a", 2)]);
    await s.putPolicy({ policyId: "p", descriptor: enc.encode("d") });
    const before = s.loadAll();
    await s.close();
    expect(fs.existsSync(`${s.path}-wal`)).toBe(false);

    const again = openStore();
    expect(again.openReport).toMatchObject({ created: false, walBytesBefore: 0, recoveredRecords: 2, lastPosition: 2, policies: 1 });
    expect(again.loadAll()).toEqual(before);
  });

  it("readSession reads through the (session_id, seq) index and loadAll needs no sort", async () => {
    await openStore().close();
    withRaw(dir, (db) => {
      const plan = (sql: string): string =>
        db
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
          .all("s", 0)
          .map((r) => r.detail)
          .join(" | ");
      expect(plan(SQL.selectSession)).toMatch(/SEARCH log USING INDEX log_session_seq \(session_id=\? AND seq>\?\)/);
      expect(plan(SQL.selectSession)).not.toMatch(/TEMP B-TREE/);
      expect(plan(SQL.selectAll.replace("ORDER BY", "WHERE ? IS NOT NULL AND ? IS NOT NULL ORDER BY"))).not.toMatch(/TEMP B-TREE/);
    });
  });

  it("refuses to open a folder another runtime has open", async () => {
    const first = openStore();
    expect(() => openStore()).toThrow(/in use by another process/);
    await first.close();
    // Also when the holder has only read so far (existing database).
    const holder = openStore();
    expect(holder.openReport.created).toBe(false);
    expect(() => openStore()).toThrow(/in use by another process/);
  });

  it("refuses a database written by a newer schema", async () => {
    await openStore().close();
    withRaw(dir, (db) => db.pragma("user_version = 4"));
    expect(() => openStore()).toThrow(/schema version 4 is newer/);
  });

  it("logs loudly and stores nothing when a real SQLite constraint fails mid-transaction", async () => {
    const logger = recordingLogger();
    const s = openStore(logger);
    s.__failNextCommitForTests();
    const results = await Promise.allSettled([s.append([env("a", 1)]), s.append([env("b", 1)])]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    const reason = (results[0] as PromiseRejectedResult).reason as Error & { code: string };
    expect(reason.code).toBe("SQLITE_CONSTRAINT_CHECK");
    const failure = logger.lines.find((l) => l.level === "error");
    expect(failure?.msg).toMatch(/COMMIT FAILED/);
    expect(failure?.obj).toMatchObject({ err: reason, calls: 2, records: 2 });
    expect(s.loadAll()).toEqual([]);
    await s.close();
    withRaw(dir, (db) => expect(db.prepare("SELECT COUNT(*) AS n FROM log").get()).toEqual({ n: 0 }));
  });
});

describe("sqlite store: integrity", () => {
  async function seed(): Promise<void> {
    const s = openStore();
    await s.append([{ ...env("a", 1), boundPolicy: enc.encode("bound") }, env("b", 1), env("a", 2)]);
    await s.append([env("a", 3), env("b", 2), env("a", 4)]);
    await s.putPolicy({ policyId: "p1", descriptor: enc.encode("descriptor-1") });
    await s.putPolicy({ policyId: "p2", descriptor: enc.encode("descriptor-2") });
    await s.close();
  }

  function flipByte(column: string, table: string, where: string): void {
    withRaw(dir, (db) => {
      const row = db.prepare<[], { v: Buffer }>(`SELECT ${column} AS v FROM ${table} WHERE ${where}`).get();
      if (!row) throw new Error("row to corrupt not found");
      const bytes = Buffer.from(row.v);
      bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0x01;
      const changed = db.prepare(`UPDATE ${table} SET ${column} = ? WHERE ${where}`).run(bytes).changes;
      expect(changed).toBe(1);
    });
  }

  function corruption(fn: () => unknown): StoreCorruptionError {
    try {
      fn();
    } catch (e) {
      expect(e).toBeInstanceOf(StoreCorruptionError);
      return e as StoreCorruptionError;
    }
    throw new Error("expected a StoreCorruptionError");
  }

  it("detects a flipped byte in an envelope (old CRC kept) and names the position", async () => {
    await seed();
    flipByte("envelope", "log", "position = 5");
    const s = openStore(); // quick_check passes: the page is well-formed
    const err = corruption(() => s.loadAll());
    expect(err.position).toBe(5);
    expect(err.message).toMatch(/position 5 .*checksum mismatch/);
    expect(corruption(() => s.readSession("b", 0)).position).toBe(5);
    expect(corruption(() => s.readSession("b", 1)).position).toBe(5);
    // Rows that are intact still read, and nothing is skipped silently.
    expect(s.readSession("a", 0).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
  });

  it("detects a flipped byte in a bound policy", async () => {
    await seed();
    flipByte("bound_policy", "log", "position = 1");
    const s = openStore();
    expect(corruption(() => s.loadAll()).position).toBe(1);
    expect(corruption(() => s.readSession("a", 0)).position).toBe(1);
  });

  it("detects a flipped byte in a policy descriptor", async () => {
    await seed();
    flipByte("descriptor", "policies", "policy_id = 'p2'");
    const s = openStore();
    expect(corruption(() => s.loadPolicies()).message).toMatch(/policy p2: checksum mismatch/);
    expect(s.loadAll()).toHaveLength(6);
  });

  it("detects a missing record in a session's seq run", async () => {
    await seed();
    withRaw(dir, (db) => db.prepare("DELETE FROM log WHERE position = 3").run()); // a#2
    const s = openStore();
    const err = corruption(() => s.loadAll());
    expect(err.position).toBe(4); // a#3 comes right after a#1
    expect(err.message).toMatch(/session a has seq 3 where 2 was expected/);
    expect(corruption(() => s.readSession("a", 0)).position).toBe(4);
    expect(corruption(() => s.readSession("a", 1)).position).toBe(4);
    expect(s.readSession("a", 2).map((r) => r.seq)).toEqual([3, 4]);
  });

  it("detects a repeated seq even with a valid checksum", async () => {
    await seed();
    withRaw(dir, (db) => {
      db.exec("DROP INDEX log_session_seq");
      const dup = env("b", 2, "forged");
      db.prepare(SQL.insertLog).run(dup.sessionId, dup.kind, dup.seq, dup.recvMs, dup.envelope, null, recordCrc(dup));
    });
    const s = openStore();
    const err = corruption(() => s.loadAll());
    expect(err.position).toBe(7);
    expect(err.message).toMatch(/repeated/);
  });

  it("refuses to open a file that fails PRAGMA quick_check", async () => {
    const s = openStore();
    for (let seq = 1; seq <= 100; seq++) void s.append([env("a", seq, "x".repeat(300))]);
    await s.close();
    const file = path.join(dir, SQLITE_FILE_NAME);
    const image = fs.readFileSync(file);
    const pageSize = image.readUInt16BE(16);
    // Find the last table-leaf page and misreport its fragmented byte count.
    let leaf = -1;
    for (let off = pageSize; off < image.length; off += pageSize) if (image[off] === 0x0d) leaf = off;
    expect(leaf).toBeGreaterThan(0);
    image[leaf + 7] = 0xff;
    fs.writeFileSync(file, image);
    const err = corruption(() => openStore());
    expect(err.message).toMatch(/quick_check failed: .*Fragmentation/s);
  });
});

describe("sqlite store: schema v2 indexes", () => {
  const v1Fixture = path.join(repoRoot, "tests", "integration", "__fixtures__", "v1-store", SQLITE_FILE_NAME);

  it("migrates a v1 store in place, once: every session gets an unsummarised index row", async () => {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.copyFileSync(v1Fixture, path.join(dir, SQLITE_FILE_NAME));
    const v1 = withRaw(dir, (db) => ({
      version: db.pragma("user_version", { simple: true }),
      records: (db.prepare("SELECT COUNT(*) AS n FROM log").get() as { n: number }).n,
      sessions: db
        .prepare<[], { session_id: string; first: number; last_seq: number }>(
          "SELECT session_id, MIN(position) AS first, MAX(seq) AS last_seq FROM log GROUP BY session_id ORDER BY first",
        )
        .all(),
    }));
    expect(v1.version).toBe(1);
    expect(v1.sessions.length).toBeGreaterThan(5);

    const s = openStore();
    expect(s.openReport).toMatchObject({ schemaVersion: 3, recoveredRecords: v1.records, quickCheck: { ran: true } });
    const rows = s.listSessions({ afterPosition: 0, limit: 100 });
    expect(rows.map((r) => [r.sessionId, r.firstPosition, r.lastSeq])).toEqual(v1.sessions.map((r) => [r.session_id, r.first, r.last_seq]));
    expect(rows.every((r) => r.status === null && r.metadata === null)).toBe(true);
    expect(s.listSessions({ afterPosition: 0, limit: 100, residentOnly: true })).toHaveLength(rows.length);
    expect(s.loadAll()).toHaveLength(v1.records); // every row still verifies
    // Summarise one session; a reopen must not migrate again (the summary stays).
    const first = rows[0] as { sessionId: string };
    await s.indexSessions([
      { summary: { sessionId: first.sessionId, status: "resolved", activityMs: 5, metadata: enc.encode("m") }, messageIds: ["x"] },
    ]);
    await s.append([{ ...env(first.sessionId, (rows[0] as { lastSeq: number }).lastSeq + 1), messageId: "y" }]);
    await s.close();
    const again = openStore();
    expect(again.openReport).toMatchObject({ schemaVersion: 3, recoveredRecords: v1.records + 1 });
    expect(again.getSession(first.sessionId)).toMatchObject({ status: "resolved", activityMs: 5 });
    expect(again.hasMessage(first.sessionId, "x") && again.hasMessage(first.sessionId, "y")).toBe(true);
    await again.close();
    withRaw(dir, (db) => expect(db.pragma("user_version", { simple: true })).toBe(3));
  });

  it("detects a flipped byte in a session-index summary and in a message-id row", async () => {
    const s = openStore();
    await s.append(
      [{ ...env("a", 1), messageId: "m1" }],
      [{ sessionId: "a", status: "open", activityMs: 1, metadata: enc.encode("summary") }],
    );
    await s.close();
    withRaw(dir, (db) => {
      db.prepare("UPDATE sessions SET metadata = ? WHERE session_id = 'a'").run(Buffer.from("summarz"));
      db.prepare("UPDATE messages SET crc = (crc + 1) % 4294967296 WHERE session_id = 'a'").run();
    });
    const again = openStore();
    expect(() => again.getSession("a")).toThrow(StoreCorruptionError);
    expect(() => again.getSession("a")).toThrow(/session index row for a: checksum mismatch/);
    expect(() => again.listSessions({ afterPosition: 0, limit: 10 })).toThrow(StoreCorruptionError);
    expect(() => again.hasMessage("a", "m1")).toThrow(/message index row \(a, m1\): checksum mismatch/);
    // A store that saw damage does not vouch for the file at close: the next open checks it.
    await again.close();
    expect(fs.existsSync(again.path + CLEAN_CLOSE_SUFFIX)).toBe(false);
  });

  it("detects a flipped byte in a list row, and reads list rows through the change index", async () => {
    const s = openStore();
    await s.append(
      [{ ...env("a", 1), messageId: "m1" }],
      [{ sessionId: "a", status: "open", activityMs: 1, metadata: enc.encode("m") }],
      [{ sessionId: "a", summary: enc.encode("row"), nextActors: ["agent://t"], final: false }],
    );
    expect(s.readListRows(0, 10)).toHaveLength(1);
    await s.close();
    withRaw(dir, (db) => {
      const plan = db
        .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${SQL.selectListRows}`)
        .all(0, 10)
        .map((r) => r.detail)
        .join("; ");
      expect(plan).toMatch(/USING INDEX sqlite_autoindex_list_rows_2 \(change>\?\)/);
      db.prepare("UPDATE list_rows SET next_actors = ? WHERE session_id = 'a'").run(JSON.stringify(["agent://u"]));
    });
    const again = openStore();
    expect(() => again.readListRows(0, 10)).toThrow(/list row of a \(change 1\): checksum mismatch/);
    await again.close();
  });

  it("reads pages, sessions, resident rows and message ids through indexes", async () => {
    await openStore().close();
    withRaw(dir, (db) => {
      const plan = (sql: string, ...args: unknown[]): string =>
        db
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
          .all(...args)
          .map((r) => r.detail)
          .join(" | ");
      expect(plan(SQL.selectSessionPage, "s", 0, 10, 5)).toMatch(
        /SEARCH log USING INDEX log_session_seq \(session_id=\? AND seq>\? AND seq<\?\)/,
      );
      expect(plan(SQL.selectAnnotations, "s", 0, 5)).toMatch(
        /SEARCH log USING INDEX log_session_annotations \(session_id=\? AND position>\?\)/,
      );
      expect(plan(SQL.lastSeq, "s")).toMatch(/SEARCH log USING COVERING INDEX log_session_seq \(session_id=\?\)/);
      expect(plan(SQL.selectSessionRow, "s")).toMatch(/SEARCH sessions USING INDEX sqlite_autoindex_sessions_1 \(session_id=\?\)/);
      expect(plan(SQL.listResidentSessions, 0, 10, 5)).toMatch(
        /SEARCH sessions USING INDEX sessions_resident \(first_position>\? AND first_position<\?\)/,
      );
      expect(plan(SQL.listSessions, 0, 10, 5)).toMatch(
        /SEARCH sessions USING INDEX sqlite_autoindex_sessions_2 \(first_position>\? AND first_position<\?\)/,
      );
      expect(plan(SQL.selectMessage, "s", "m")).toMatch(/SEARCH messages USING PRIMARY KEY \(session_id=\? AND message_id=\?\)/);
      const all: [string, unknown[]][] = [
        [SQL.selectSessionPage, ["s", 0, 10, 5]],
        [SQL.selectAnnotations, ["s", 0, 5]],
        [SQL.listResidentSessions, [0, 10, 5]],
        [SQL.listSessions, [0, 10, 5]],
      ];
      for (const [sql, args] of all) expect(plan(sql, ...args)).not.toMatch(/TEMP B-TREE|SCAN/);
    });
  });
});

describe("sqlite store: PRAGMA quick_check at open", () => {
  async function cleanStore(): Promise<string> {
    const s = openStore();
    await s.append([env("a", 1), env("a", 2)]);
    await s.close();
    return s.path;
  }

  it("is skipped for a file exactly as a verified clean shutdown left it, and runs otherwise", async () => {
    const file = await cleanStore();
    expect(fs.existsSync(file + CLEAN_CLOSE_SUFFIX)).toBe(true);
    const logger = recordingLogger();
    const s = openStore(logger);
    expect(s.openReport.quickCheck).toMatchObject({ ran: false, reason: "unchanged since the last verified clean shutdown" });
    expect(s.openReport.checkedOk).toBe(true);
    expect(logger.lines[0]?.obj).toMatchObject({ quickCheck: "skipped: unchanged since the last verified clean shutdown" });
    // The record is consumed at open: a crash now would leave none behind.
    expect(fs.existsSync(file + CLEAN_CLOSE_SUFFIX)).toBe(false);
    await s.append([env("a", 3)]);
    await s.close();
    expect(openStore().openReport.quickCheck.ran).toBe(false); // the chain continues
  });

  it("runs after the file was written by someone else, after an unclean shutdown, and when asked to always", async () => {
    const file = await cleanStore();
    withRaw(dir, (db) => db.prepare("INSERT INTO counters (name, value) VALUES ('written-elsewhere', 1)").run());
    const touched = openStore();
    expect(touched.openReport.quickCheck).toMatchObject({ ran: true });
    expect(touched.openReport.quickCheck.reason).toMatch(/changed since the last clean shutdown/);
    await touched.close();

    // A -wal file next to the database means the last run did not close cleanly.
    fs.writeFileSync(`${file}-wal`, Buffer.alloc(0));
    const crashed = openStore();
    expect(crashed.openReport.quickCheck).toMatchObject({ ran: true, reason: "a write-ahead log is present (unclean shutdown)" });
    await crashed.close();

    const always = openStore(undefined, dir, "always");
    expect(always.openReport.quickCheck).toMatchObject({ ran: true, reason: "MACP_STORE_INTEGRITY_CHECK=always" });
    await always.close();

    fs.rmSync(file + CLEAN_CLOSE_SUFFIX);
    expect(openStore().openReport.quickCheck).toMatchObject({ ran: true, reason: "no record of a verified clean shutdown" });
  });
});

describe("sqlite store: crash recovery", () => {
  interface ChildResult {
    acked: Array<{ position: number; sessionId: string; seq: number }>;
    finalBurst: [number, number] | null;
    signal: NodeJS.Signals | null;
    stderr: string;
  }

  function runCrashWriter(bursts: number, perBurst: number): Promise<ChildResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", path.join(here, "__fixtures__", "crash-writer.ts"), dir, String(bursts), String(perBurst)],
        { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("error", reject);
      child.on("close", (_code, signal) => {
        const result: ChildResult = { acked: [], finalBurst: null, signal, stderr };
        for (const line of stdout.split("\n")) {
          const [word, a, b, c] = line.split(" ");
          if (word === "ack") result.acked.push({ position: Number(a), sessionId: String(b), seq: Number(c) });
          if (word === "kill") result.finalBurst = [Number(a), Number(b)];
        }
        resolve(result);
      });
    });
  }

  it("recovers exactly the acknowledged records after SIGKILL and a torn final WAL frame", async () => {
    const bursts = 8;
    const perBurst = 64;
    const child = await runCrashWriter(bursts, perBurst);
    expect(child.stderr).toBe("");
    expect(child.signal).toBe("SIGKILL");
    expect(child.acked).toHaveLength(bursts * perBurst);
    expect(child.acked.map((a) => a.position)).toEqual(Array.from({ length: bursts * perBurst }, (_, i) => i + 1));
    expect(child.finalBurst).toEqual([bursts * perBurst + 1, (bursts + 1) * perBurst]);

    // The WAL holds every transaction the child committed, the last one
    // (the final burst, never acknowledged) included, all intact.
    const file = path.join(dir, SQLITE_FILE_NAME);
    const walPath = `${file}-wal`;
    const intact = inspectWalFile(walPath);
    if (!intact) throw new Error("the child left no WAL");
    const frameBytes = intact.pageSize + 24;
    expect(intact).toMatchObject({ headerValid: true, ignoredFrames: 0, tornTailBytes: 0 });
    // schema migration + one group commit per burst + the final burst
    expect(intact.committedTransactions).toBe(bursts + 2);
    expect(intact.bytes).toBe(32 + intact.committedFrames * frameBytes);

    // Keep an untouched copy, then tear the last frame (the final burst's
    // commit frame) as a crash in the middle of writing it would.
    const copyDir = `${dir}-intact`;
    fs.cpSync(dir, copyDir, { recursive: true });
    const cut = 100;
    fs.truncateSync(walPath, intact.bytes - cut);

    const logger = recordingLogger();
    const s = openStore(logger);
    expect(s.openReport.walBytesBefore).toBe(intact.bytes - cut);
    expect(s.openReport.checkedOk).toBe(true);
    expect(s.openReport.wal).toMatchObject({
      headerValid: true,
      committedTransactions: bursts + 1,
      tornTailBytes: frameBytes - cut,
    });
    const finalFrames = intact.committedFrames - (s.openReport.wal?.committedFrames ?? 0);
    expect(finalFrames).toBeGreaterThan(1); // the final burst spans several frames...
    expect(s.openReport.wal?.ignoredFrames).toBe(finalFrames - 1); // ...all dropped with its torn commit frame
    expect(s.openReport.recoveredRecords).toBe(bursts * perBurst);
    const info = logger.lines.find((l) => l.level === "warn");
    expect(info?.msg).toMatch(/did not shut down cleanly.*discarded an incomplete/);
    expect(info?.obj).toMatchObject({ records: bursts * perBurst, tornTailBytes: frameBytes - cut });

    // Every acknowledged record is there, at its position, and nothing else.
    const all = s.loadAll();
    expect(all.map((r) => ({ position: r.position, sessionId: r.sessionId, seq: r.seq }))).toEqual(child.acked);
    expect(all.every((r) => r.envelope.length >= 40 && r.envelope.length < 240)).toBe(true);

    // The store continues each session right after its last acknowledged seq.
    const lastA = Math.max(...child.acked.filter((a) => a.sessionId === "session-0").map((a) => a.seq));
    await expect(s.append([env("session-0", lastA + 2)])).rejects.toThrow(/expects seq/);
    await s.append([env("session-0", lastA + 1)]);
    expect(s.readSession("session-0", lastA).map((r) => r.position)).toEqual([bursts * perBurst + 1]);

    // Control: without the tear, the final burst is recovered whole.
    const c = openStore(undefined, copyDir);
    expect(c.openReport.recoveredRecords).toBe((bursts + 1) * perBurst);
    expect(c.openReport.wal).toMatchObject({ committedTransactions: bursts + 2, ignoredFrames: 0, tornTailBytes: 0 });
    const recovered = c.loadAll();
    expect(recovered.slice(bursts * perBurst).every((r) => r.envelope.length === 600)).toBe(true);
    await c.close();
    fs.rmSync(copyDir, { recursive: true, force: true });
  });
});
