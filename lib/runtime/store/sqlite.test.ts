// SQLite-specific behaviour: file layout and pragmas, integrity checks,
// locking, and the integrity check at open. The session indexes are
// sqlite-indexes.test.ts, recovery from a crash sqlite-crash.test.ts.
import fs from "node:fs";
import path from "node:path";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { type StoreLogger } from "./common";
import { recordCrc } from "./row-crc";
import { CLEAN_CLOSE_SUFFIX } from "./clean-close";
import { dir, env, freshDirPerTest, openStore, recordingLogger, withRaw } from "./__fixtures__/sqlite-test-kit";
import { SQL, SQLITE_FILE_NAME } from "./sqlite";
import { StoreCorruptionError } from "./types";

const enc = new TextEncoder();

freshDirPerTest();

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
