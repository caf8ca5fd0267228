import Database from "better-sqlite3";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { SORT_KEYS, type CatalogQuery } from "./query";
import { SqliteCatalog } from "./sqlite";
import { catalog, closeAfterEach, dirs, ids, open, q, reference, rng, summary, write } from "./sqlite-test-kit";

closeAfterEach();

describe("SqliteCatalog", () => {
  const r = rng(42);
  const rows = Array.from({ length: 600 }, (_, i) => summary(i, r));

  it("pages every sort, both directions, exactly like the browser's list (ties: newest activity, then id)", () => {
    const c = catalog();
    c.write(rows.map((s) => write(s)));
    for (const sort of SORT_KEYS) {
      for (const ascending of [true, false]) {
        const query = q({ sort, ascending });
        const want = ids(reference(rows, query));
        const got: string[] = [];
        for (let offset = 0; offset < rows.length; offset += 128) {
          const page = c.page(query, offset, 128);
          expect(page.total).toBe(rows.length);
          got.push(...ids(page.rows));
        }
        expect(got, `${sort} ${ascending ? "asc" : "desc"}`).toEqual(want);
      }
    }
  });

  it("filters by mode, state, phase, participant and text, alone and together", () => {
    const c = catalog();
    c.write(rows.map((s) => write(s)));
    const queries: CatalogQuery[] = [
      q({ mode: TASK_MODE }),
      q({ state: SessionState.OPEN, sort: "intent", ascending: true }),
      q({ phase: "Committed" }),
      q({ participant: "zoe" }),
      q({ participant: "al" }),
      q({ text: "night" }),
      q({ text: "eu" }),
      q({ text: "q3 report", mode: HANDOFF_MODE, sort: "owner", ascending: true }),
      q({ text: "sess-00012" }),
      q({ text: "ctx-1" }),
      q({ participant: "human:", state: SessionState.RESOLVED, text: "deploy", sort: "ttl", ascending: true }),
    ];
    for (const query of queries) {
      const want = ids(reference(rows, query));
      const page = c.page(query, 0, 500);
      expect(page.total, JSON.stringify(query)).toBe(want.length);
      expect(ids(page.rows), JSON.stringify(query)).toEqual(want.slice(0, 500));
      expect(c.count(query)).toBe(want.length);
    }
  });

  it("takes any user text as a literal substring, never as FTS syntax", () => {
    const c = catalog();
    const tricky = [
      'say "hi" now',
      "a*b",
      "-x OR y",
      "NEAR(a b)",
      "col:value",
      "ünïcödé straße",
      "日本語のテキスト",
      "(",
      "'; DROP TABLE sessions; --",
      "AND",
      "^start",
    ];
    const r2 = rng(7);
    const all = tricky.map((intent, i): SessionSummary => ({ ...summary(10_000 + i, r2), intent }));
    c.write(all.map((s) => write(s)));
    for (const needle of [...tricky, '"', '""', "*", "-", "NOT", "OR", ":", "^", "日本", "STRASSE", "ÜNÏ", "(a", "a*"]) {
      const lc = needle.toLowerCase();
      const want = ids(reference(all, q({ text: lc })));
      if (tricky.includes(needle)) expect(want.length, needle).toBeGreaterThan(0);
      expect(ids(c.page(q({ text: lc }), 0, 50).rows), needle).toEqual(want);
      expect(() => c.count(q({ participant: lc }))).not.toThrow();
    }
  });

  it("updates rows in place, bumps the version, and lists what changed since a version", () => {
    const c = catalog();
    const v1 = c.write(rows.slice(0, 10).map((s) => write(s)));
    const changed: SessionSummary = { ...(rows[3] as SessionSummary), intent: "rotated the pager" };
    const v2 = c.write([write(changed)]);
    expect(v2).toBe(v1 + 1);
    expect(c.get(rows[3]?.metadata?.sessionId ?? "")?.summary.intent).toBe("rotated the pager");
    expect(c.page(q({ text: "rotated" }), 0, 10).rows).toHaveLength(1);
    // The old text is gone from the full-text index.
    expect(ids(c.page(q({ text: rows[3]?.intent.toLowerCase() ?? "" }), 0, 500).rows)).not.toContain(rows[3]?.metadata?.sessionId);
    expect(c.changedSince(v1, 10)).toEqual({ ids: [rows[3]?.metadata?.sessionId], overflow: false, version: v2, through: v2 });
    expect(c.changedSince(0, 5)).toMatchObject({ overflow: true });
    expect(c.changedSince(0, 5).ids).toHaveLength(5);
    expect(c.count(q())).toBe(10);
  });

  it("tracks what must still be read, survives a reopen, and defers failed reads", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-catalog-"));
    dirs.push(dir);
    const file = path.join(dir, "console.sqlite");
    const c = catalog(file);
    c.write(rows.slice(0, 20).map((s, i) => write(s, { final: i >= 5, needsRead: i < 3 })));
    expect(c.counts()).toEqual({ known: 20, pending: 3 });
    const pend = c.pendingReads(0, Date.now(), 2);
    expect(pend.map((p) => p.sessionId)).toEqual(ids(rows.slice(0, 2)));
    expect(c.pendingReads(pend[1]?.position ?? 0, Date.now(), 10).map((p) => p.sessionId)).toEqual(ids(rows.slice(2, 3)));
    c.deferRead(rows[0]?.metadata?.sessionId ?? "", Date.now() + 60_000);
    expect(c.pendingReads(0, Date.now(), 10)).toHaveLength(2);
    expect(c.nextDeferred()).toBeGreaterThan(Date.now());
    const version = c.version;
    c.close();

    const again = catalog(file);
    expect(again.version).toBe(version);
    expect(again.counts()).toEqual({ known: 20, pending: 3 });
    // Start-up: every unfinished row (here 5) is read again, deferrals forgotten.
    expect(again.resetUnfinished()).toBe(5);
    expect(again.counts()).toEqual({ known: 20, pending: 5 }); // counts are kept between changes, not past one
    expect(again.pendingReads(0, Date.now(), 50)).toHaveLength(5);
    expect(again.page(q({ sort: "started", ascending: true }), 0, 50).rows).toHaveLength(20);
  });

  it("keeps its counts between changes and reads them again after any write", () => {
    const c = catalog();
    expect(c.counts()).toEqual({ known: 0, pending: 0 });
    c.write(rows.slice(0, 4).map((s, i) => write(s, { needsRead: i < 1 })));
    expect(c.counts()).toEqual({ known: 4, pending: 1 });
    expect(c.counts()).toBe(c.counts()); // no change in between: the same answer, not asked again
    c.write([write(rows[0] as SessionSummary, { needsRead: false }), write(rows[4] as SessionSummary, { needsRead: true })]);
    expect(c.counts()).toEqual({ known: 5, pending: 1 });
    c.applyFeed([write(rows[5] as SessionSummary)], { storeId: "s", change: 1n });
    expect(c.counts()).toEqual({ known: 6, pending: 1 });
    c.applyFeed([], { storeId: "t", change: 0n }, true);
    expect(c.counts()).toEqual({ known: 0, pending: 0 });
  });

  it("applies feed rows with their cursor in one transaction, resumes it after a reopen, and empties the rows on reset", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-catalog-"));
    dirs.push(dir);
    const file = path.join(dir, "console.sqlite");
    const c = catalog(file);
    expect(c.cursor).toBeUndefined();
    const v1 = c.applyFeed(
      rows.slice(0, 10).map((s) => write(s)),
      { storeId: "store-a", change: 10n },
    );
    expect(v1).toBe(1);
    expect(c.cursor).toEqual({ storeId: "store-a", change: 10n });
    // Only a cursor move (a response without rows): same version.
    expect(c.applyFeed([], { storeId: "store-a", change: 12n })).toBe(v1);
    // A later row for a known session updates it in place.
    const changed = create(SessionSummarySchema, { ...(rows[0] as SessionSummary), phase: "Committed" });
    c.applyFeed([write(changed), ...rows.slice(10, 15).map((s) => write(s))], { storeId: "store-a", change: 2n ** 63n + 5n });
    expect(c.counts()).toEqual({ known: 15, pending: 0 });
    expect(c.get(ids(rows.slice(0, 1))[0] ?? "")?.summary.phase).toBe("Committed");
    c.close();

    const again = catalog(file);
    expect(again.cursor).toEqual({ storeId: "store-a", change: 2n ** 63n + 5n });
    expect(again.counts().known).toBe(15);
    // A failed transaction moves neither the rows nor the cursor.
    const bad = { ...write(rows[20] as SessionSummary), nextActors: null as unknown as string[] };
    expect(() => again.applyFeed([write(rows[16] as SessionSummary), bad], { storeId: "store-a", change: 99n })).toThrow();
    expect(again.cursor?.change).toBe(2n ** 63n + 5n);
    expect(again.counts().known).toBe(15);
    // Another store (or a restarted feed): the rows of the old one are gone, in the same transaction.
    const v = again.version;
    expect(
      again.applyFeed(
        rows.slice(30, 33).map((s) => write(s)),
        { storeId: "store-b", change: 3n },
        true,
      ),
    ).toBe(v + 1);
    expect(again.counts().known).toBe(3);
    expect(again.page(q({ text: "sess-000001" }), 0, 10).rows).toHaveLength(0);
    expect(ids(again.page(q({ sort: "started", ascending: true }), 0, 10).rows).sort()).toEqual(ids(rows.slice(30, 33)).sort());
    // A reset with no rows still empties (and bumps the version for list watchers).
    expect(again.applyFeed([], { storeId: "store-c", change: 0n }, true)).toBe(v + 2);
    expect(again.counts().known).toBe(0);
    again.clearCursor();
    expect(again.cursor).toBeUndefined();
    again.close();
    expect(catalog(file).cursor).toBeUndefined();
  });

  it("forgets the feed cursor with the rows when the catalog is bound to another runtime", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-catalog-"));
    dirs.push(dir);
    const file = path.join(dir, "console.sqlite");
    const c = new SqliteCatalog({ path: file, source: "http://a" });
    c.applyFeed(
      rows.slice(0, 2).map((s) => write(s)),
      { storeId: "s", change: 2n },
    );
    c.close();
    const b = new SqliteCatalog({ path: file, source: "http://b" });
    open.push(b);
    expect(b.cursor).toBeUndefined();
    expect(b.counts().known).toBe(0);
  });

  it("migrates a schema 2 catalog (before v0.1 file rows) in place, keeping its rows, cursor and search", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-catalog-"));
    dirs.push(dir);
    const file = path.join(dir, "console.sqlite");
    const c = catalog(file);
    c.applyFeed(
      rows.slice(0, 5).map((s) => write(s)),
      { storeId: "store-1", change: 7n },
    );
    const version = c.version;
    c.close();
    // Make it exactly what schema 2 wrote: no kind or stuck column, neither of their indexes.
    const raw = new Database(file);
    raw.exec(
      "DROP INDEX sessions_files; DROP INDEX sessions_stuck; ALTER TABLE sessions DROP COLUMN kind; ALTER TABLE sessions DROP COLUMN stuck_since_ms; UPDATE meta SET value = '2' WHERE key = 'schema';",
    );
    expect(raw.prepare("SELECT count(*) AS c FROM pragma_table_info('sessions') WHERE name = 'kind'").get()).toEqual({ c: 0 });
    raw.close();
    const migrated = catalog(file);
    expect(migrated.migratedFrom).toBe(2);
    expect(migrated.counts().known).toBe(5);
    expect(migrated.version).toBe(version);
    expect(migrated.cursor).toEqual({ storeId: "store-1", change: 7n });
    const first = rows[0] as SessionSummary;
    expect(migrated.get(first.metadata?.sessionId ?? "")).toMatchObject({ kind: "macp" });
    expect(ids(migrated.page(q({ text: first.metadata?.sessionId ?? "" }), 0, 10).rows)).toEqual([first.metadata?.sessionId]);
    expect(migrated.fileCount()).toBe(0);
    migrated.close();
    const raw2 = new Database(file);
    expect(raw2.prepare("SELECT value FROM meta WHERE key = 'schema'").get()).toEqual({ value: "3" });
    raw2.close();
  });

  it("rebuilds a catalog of an older schema and refuses a newer one", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-catalog-"));
    dirs.push(dir);
    const file = path.join(dir, "console.sqlite");
    const c = catalog(file);
    c.write(rows.slice(0, 3).map((s) => write(s)));
    c.close();
    const raw = new Database(file);
    raw.prepare("UPDATE meta SET value = '0' WHERE key = 'schema'").run();
    raw.close();
    const rebuilt = catalog(file);
    expect(rebuilt.counts().known).toBe(0);
    rebuilt.close();
    const raw2 = new Database(file);
    raw2.prepare("UPDATE meta SET value = '99' WHERE key = 'schema'").run();
    raw2.close();
    expect(() => new SqliteCatalog({ path: file })).toThrow(/newer Baton/);
  });
});
