// The indexes beside the log on a real SQLite file (sessions, message ids,
// list rows): the migration of a v1 store, damage in their rows, and reads
// through them.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { dir, env, freshDirPerTest, openStore, withRaw } from "./__fixtures__/sqlite-test-kit";
import { CLEAN_CLOSE_SUFFIX } from "./clean-close";
import { SQL, SQLITE_FILE_NAME } from "./sqlite";
import { StoreCorruptionError } from "./types";

const enc = new TextEncoder();
const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "../../..");

freshDirPerTest();

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
