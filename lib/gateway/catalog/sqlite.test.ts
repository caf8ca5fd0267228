import Database from "better-sqlite3";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { SessionListQuerySchema, SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { applyListQuery, type ListQuery } from "@/lib/views/list-query";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { parseListQuery, parsePage, SORT_KEYS, type CatalogQuery } from "./query";
import { SqliteCatalog } from "./sqlite";
import type { CatalogWrite } from "./store";

const STATES = [SessionState.OPEN, SessionState.SUSPENDED, SessionState.RESOLVED, SessionState.EXPIRED, SessionState.CANCELLED];
const STATE_KEY: Record<number, ListQuery["state"]> = {
  [SessionState.OPEN]: "open",
  [SessionState.SUSPENDED]: "suspended",
  [SessionState.RESOLVED]: "resolved",
  [SessionState.EXPIRED]: "expired",
  [SessionState.CANCELLED]: "cancelled",
};
const PHASES = ["Pending", "OfferPending", "Accepted", "Committed", "InProgress", "Failed", ""];
const WORDS = ["pager", "rota", "deploy", "billing", "search", "index", "night shift", "eu west", "q3 report"];

/** A deterministic pseudo-random generator (tests must not flake). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function summary(i: number, r: () => number): SessionSummary {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const id = `sess-${String(i).padStart(6, "0")}-${"x".repeat(16)}`;
  const owner = `agent:${pick(["alice", "bob", "carol", "dave", "erin"])}`;
  const target = r() < 0.2 ? "" : `human:${pick(["zoe", "yann", "xia", "walt"])}`;
  const expires = r() < 0.3 ? 0 : 1_700_000_000_000 + Math.floor(r() * 1000) * 1000;
  return create(SessionSummarySchema, {
    metadata: create(SessionMetadataSchema, {
      sessionId: id,
      mode: r() < 0.5 ? HANDOFF_MODE : TASK_MODE,
      state: pick(STATES),
      startedAtUnixMs: BigInt(1_700_000_000_000 + Math.floor(r() * 50) * 1000),
      expiresAtUnixMs: BigInt(expires),
      participants: [owner, ...(target ? [target] : [])],
      initiator: owner,
      contextId: r() < 0.1 ? `ctx-${i}` : "",
    }),
    phase: pick(PHASES),
    intent: `${pick(WORDS)} ${pick(WORDS)}`,
    scope: r() < 0.5 ? pick(WORDS) : "",
    currentOwner: owner,
    currentTarget: target,
    // Coarse activity so ties (and the tie-break) happen often.
    lastActivityUnixMs: BigInt(1_700_000_000_000 + Math.floor(r() * 40) * 1000),
    eventCount: BigInt(1 + Math.floor(r() * 9)),
  });
}

function write(s: SessionSummary, extra: Partial<CatalogWrite> = {}): CatalogWrite {
  return { summary: s, folded: Number(s.eventCount), final: true, needsRead: false, nextActors: [], ...extra };
}

const ids = (rows: readonly SessionSummary[]) => rows.map((s) => s.metadata?.sessionId ?? "");

/** The browser's in-memory list (lib/views/list-query.ts) is the reference. */
function reference(rows: SessionSummary[], q: CatalogQuery): SessionSummary[] {
  const lq: ListQuery = {
    participant: q.participant,
    q: "",
    waiting: q.waitingOn ?? "",
    stuck: false,
    sort: q.sort,
    dir: q.ascending ? "asc" : "desc",
    ...(q.mode ? { mode: q.mode === HANDOFF_MODE ? "handoff" : "task" } : {}),
    ...(q.state !== undefined ? { state: STATE_KEY[q.state] } : {}),
    ...(q.phase ? { phase: q.phase as ListQuery["phase"] & string } : {}),
  };
  let out = applyListQuery(rows, lq);
  if (q.text) {
    // The catalog's full text also covers participants.
    out = out.filter((s) => {
      const m = s.metadata;
      const hay = [
        s.intent,
        s.scope,
        m?.sessionId ?? "",
        s.currentOwner,
        s.currentTarget,
        s.phase,
        m?.mode ?? "",
        m?.contextId ?? "",
        ...(m?.participants ?? []),
        m?.initiator ?? "",
      ];
      return hay.some((h) => h.toLowerCase().includes(q.text));
    });
  }
  return out;
}

const open: SqliteCatalog[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function catalog(file = ":memory:"): SqliteCatalog {
  const c = new SqliteCatalog({ path: file });
  open.push(c);
  return c;
}

function q(init: Partial<CatalogQuery> = {}): CatalogQuery {
  return { participant: "", text: "", sort: "activity", ascending: false, ...init };
}

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
    expect(again.pendingReads(0, Date.now(), 50)).toHaveLength(5);
    expect(again.page(q({ sort: "started", ascending: true }), 0, 50).rows).toHaveLength(20);
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

describe("parseListQuery / parsePage", () => {
  const bad = (init: Record<string, unknown>) => {
    try {
      parseListQuery(create(SessionListQuerySchema, init));
    } catch (e) {
      return e instanceof ConnectError ? `${Code[e.code]}: ${e.rawMessage}` : String(e);
    }
    return "accepted";
  };

  it("accepts the browser's vocabulary", () => {
    expect(parseListQuery(undefined)).toEqual({ participant: "", text: "", sort: "activity", ascending: false });
    expect(
      parseListQuery(
        create(SessionListQuerySchema, {
          mode: "task",
          state: "expired",
          phase: "Failed",
          participant: " Bob ",
          text: "Pager",
          sort: "ttl",
          ascending: true,
        }),
      ),
    ).toEqual({
      mode: TASK_MODE,
      state: SessionState.EXPIRED,
      phase: "Failed",
      participant: "bob",
      text: "pager",
      sort: "ttl",
      ascending: true,
    });
    expect(parseListQuery(create(SessionListQuerySchema, { mode: "file" })).mode).toBe("v0.1.file");
  });

  it("refuses anything else with INVALID_ARGUMENT naming the field", () => {
    expect(bad({ mode: "chat" })).toMatch(/^InvalidArgument: query.mode "chat" is not one of "", "handoff", "task", "file"/);
    expect(bad({ mode: "__proto__" })).toMatch(/^InvalidArgument: query.mode/);
    expect(bad({ state: "OPEN" })).toMatch(/^InvalidArgument: query.state/);
    expect(bad({ phase: "Done" })).toMatch(/^InvalidArgument: query.phase/);
    expect(bad({ sort: "n; DROP" })).toMatch(/^InvalidArgument: query.sort/);
    expect(bad({ text: "a\u0000b" })).toMatch(/^InvalidArgument: query.text must not contain control characters/);
    expect(bad({ participant: "x".repeat(201) })).toMatch(/^InvalidArgument: query.participant is longer than 200/);
  });

  it("caps the page", () => {
    expect(parsePage(0, 0)).toEqual({ offset: 0, limit: 100 });
    expect(parsePage(40, 10_000)).toEqual({ offset: 40, limit: 500 });
  });
});

describe("SqliteCatalog actors (the people picker's agents)", () => {
  it("counts each session's participants once, newest first, and forgets them with the rows", () => {
    const c = catalog();
    const meta = (id: string, started: number, participants: string[]) =>
      create(SessionSummarySchema, {
        metadata: create(SessionMetadataSchema, {
          sessionId: id,
          mode: HANDOFF_MODE,
          state: SessionState.OPEN,
          startedAtUnixMs: BigInt(started),
          participants,
          initiator: participants[0] ?? "",
        }),
      });
    c.write([write(meta("s-one-xxxxxxxxxxxxxxxxxxxx", 1_000, ["agent://a", "agent://b"]))]);
    c.write([write(meta("s-two-xxxxxxxxxxxxxxxxxxxx", 2_000, ["agent://b", "human:zoe"]))]);
    // Rewriting a known session (a later change) does not count it again.
    c.write([write(meta("s-one-xxxxxxxxxxxxxxxxxxxx", 1_000, ["agent://a", "agent://b"]))]);
    expect(c.actors(10)).toEqual([
      { participantId: "agent://b", sessions: 2, lastSeenMs: 2_000 },
      { participantId: "human:zoe", sessions: 1, lastSeenMs: 2_000 },
      { participantId: "agent://a", sessions: 1, lastSeenMs: 1_000 },
    ]);
    expect(c.actors(1)).toHaveLength(1);
    // A feed that starts over (another runtime store) starts the actors over too.
    c.applyFeed([], { storeId: "other", change: 0n }, true);
    expect(c.actors(10)).toEqual([]);
  });
});

describe("SqliteCatalog waiting on", () => {
  it("lists only the sessions whose next move is the participant's, with who must act filled in", () => {
    const c = catalog();
    const r = rng(7);
    const rows = Array.from({ length: 40 }, (_, i) => summary(i, r));
    // Every fifth session waits on its target, every seventh on two people.
    const actorsOf = (s: SessionSummary, i: number): string[] =>
      i % 7 === 0 ? ["human:zoe", "human:walt"] : i % 5 === 0 && s.currentTarget ? [s.currentTarget] : [];
    c.write(rows.map((s, i) => write(s, { nextActors: actorsOf(s, i) })));
    const expected = rows
      .map((s, i) => create(SessionSummarySchema, { ...s, waitingOn: actorsOf(s, i) }))
      .filter((s) => s.waitingOn.includes("human:zoe"));
    const page = c.page(q({ waitingOn: "human:zoe" }), 0, 100);
    expect(ids(page.rows)).toEqual(ids(reference(expected, q({ waitingOn: "human:zoe" }))));
    expect(page.total).toBe(expected.length);
    for (const row of page.rows) expect(row.waitingOn).toContain("human:zoe");
    // A prefix of an id is not the id.
    expect(c.page(q({ waitingOn: "human:zo" }), 0, 100).total).toBe(0);
    // Without the filter, rows still say who must act.
    const all = c.page(q(), 0, 100).rows;
    expect(all.filter((s) => s.waitingOn.length > 0).length).toBe(rows.filter((s, i) => actorsOf(s, i).length > 0).length);
  });

  it("refuses a waiting_on that is not a participant id", () => {
    expect(() => parseListQuery(create(SessionListQuerySchema, { waitingOn: "two words" }))).toThrow(ConnectError);
    expect(parseListQuery(create(SessionListQuerySchema, { waitingOn: " human:zoe " })).waitingOn).toBe("human:zoe");
  });
});
