// The "stuck" filter in the catalog: an indexed range read over the rows that
// wait on an answer or an approval, the same rule the list rows render with
// (lib/macp/projections/status.ts), a schema 2 file migrated with its rows
// kept, and the list service turning "stuck" into a cut-off at read time.
import Database from "better-sqlite3";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { createClient, createRouterTransport } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import {
  ConsoleService,
  SessionListQuerySchema,
  SessionSummarySchema,
  type SessionSummary,
  type WatchSessionChangesResponse,
} from "@/lib/gen/baton/v1/console_pb";
import { SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { stuckFor } from "@/lib/macp/projections/status";
import { createGateway, type Gateway } from "../gateway";
import { consoleRoutes } from "../routes";
import { FakeRuntime } from "../testing/fake-runtime";
import { handoffScript } from "../testing/scenario";
import { ListService } from "./list-service";
import { parseListQuery, type CatalogQuery } from "./query";
import { SqliteCatalog } from "./sqlite";
import type { CatalogWrite } from "./store";

const T0 = 1_800_000_000_000;
const MIN = 60_000;
const STATES = [SessionState.OPEN, SessionState.SUSPENDED, SessionState.RESOLVED, SessionState.EXPIRED, SessionState.CANCELLED];
const PHASES = ["Pending", "OfferPending", "ContextSharing", "Accepted", "Declined", "Committed", "Requested", "InProgress", ""];
const DETAILS = ["", "", "awaiting_approval", "rejected"];

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function row(i: number, r: () => number): SessionSummary {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const activity = T0 + Math.floor(r() * 120) * MIN;
  return create(SessionSummarySchema, {
    metadata: create(SessionMetadataSchema, {
      sessionId: `stuck-${String(i).padStart(5, "0")}`,
      mode: r() < 0.5 ? HANDOFF_MODE : TASK_MODE,
      state: pick(STATES),
      startedAtUnixMs: BigInt(T0 - MIN),
      initiator: "agent://owner",
    }),
    phase: pick(PHASES),
    phaseDetail: pick(DETAILS),
    intent: `row ${i}`,
    lastActivityUnixMs: BigInt(activity),
    // A few rows from an older Baton, without the status start.
    phaseSinceUnixMs: r() < 0.1 ? 0n : BigInt(activity - Math.floor(r() * 30) * MIN),
    eventCount: 2n,
  });
}

const write = (s: SessionSummary): CatalogWrite => ({ summary: s, folded: 2, final: false, needsRead: false, nextActors: [] });
const ids = (rows: readonly SessionSummary[]) => rows.map((s) => s.metadata?.sessionId ?? "").sort();
const q = (init: Partial<CatalogQuery> = {}): CatalogQuery => ({ participant: "", text: "", sort: "activity", ascending: false, ...init });

function isStuck(s: SessionSummary, now: number, threshold: number): boolean {
  const f = {
    state: s.metadata?.state ?? 0,
    phase: s.phase,
    outcome: s.outcome,
    detail: s.phaseDetail,
    phaseSinceMs: Number(s.phaseSinceUnixMs),
    lastActivityMs: Number(s.lastActivityUnixMs),
  };
  return stuckFor(f, now, threshold) !== undefined;
}

const closers: (() => void)[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function catalog(file = ":memory:"): SqliteCatalog {
  const c = new SqliteCatalog({ path: file });
  closers.push(() => c.close());
  return c;
}

describe("the catalog's stuck filter", () => {
  const r = rng(11);
  const rows = Array.from({ length: 800 }, (_, i) => row(i, r));

  it("finds exactly the rows the shared rule calls stuck, at several times and thresholds, alone and with other filters", () => {
    const c = catalog();
    c.write(rows.map(write));
    let some = 0;
    for (const threshold of [1, 15 * MIN, 45 * MIN]) {
      for (const now of [T0, T0 + 30 * MIN, T0 + 90 * MIN, T0 + 300 * MIN]) {
        const want = rows.filter((s) => isStuck(s, now, threshold));
        some += want.length;
        const page = c.page(q({ stuckBefore: now - threshold }), 0, 1_000);
        expect(ids(page.rows), `${threshold}@${now}`).toEqual(ids(want));
        expect(page.total).toBe(want.length);
        const tasks = c.page(q({ stuckBefore: now - threshold, mode: TASK_MODE }), 0, 1_000);
        expect(ids(tasks.rows)).toEqual(ids(want.filter((s) => s.metadata?.mode === TASK_MODE)));
      }
    }
    expect(some).toBeGreaterThan(100);
  });

  it("reads the partial index, not the table", () => {
    const c = catalog();
    c.write(rows.map(write));
    const db = (c as unknown as { db: Database.Database }).db;
    const plan = db
      .prepare("EXPLAIN QUERY PLAN SELECT count(*) FROM sessions WHERE stuck_since_ms > 0 AND stuck_since_ms <= ?")
      .all(T0) as { detail: string }[];
    expect(plan.map((p) => p.detail).join("\n")).toMatch(/sessions_stuck/);
  });

  it("follows a row as it moves on: answered or closed, it is no longer stuck", () => {
    const c = catalog();
    const s = create(SessionSummarySchema, {
      metadata: create(SessionMetadataSchema, {
        sessionId: "one",
        mode: HANDOFF_MODE,
        state: SessionState.OPEN,
        startedAtUnixMs: BigInt(T0),
      }),
      phase: "OfferPending",
      phaseSinceUnixMs: BigInt(T0),
      lastActivityUnixMs: BigInt(T0),
    });
    c.write([write(s)]);
    expect(c.count(q({ stuckBefore: T0 + 14 * MIN }))).toBe(1);
    expect(c.count(q({ stuckBefore: T0 - 1 }))).toBe(0);
    c.write([write(create(SessionSummarySchema, { ...s, phase: "Accepted", phaseSinceUnixMs: BigInt(T0 + MIN) }))]);
    expect(c.count(q({ stuckBefore: T0 + 60 * MIN }))).toBe(0);
    c.write([
      write(
        create(SessionSummarySchema, { ...s, phase: "Accepted", phaseDetail: "awaiting_approval", phaseSinceUnixMs: BigInt(T0 + MIN) }),
      ),
    ]);
    expect(c.count(q({ stuckBefore: T0 + 60 * MIN }))).toBe(1);
    const m = create(SessionMetadataSchema, {
      sessionId: "one",
      mode: HANDOFF_MODE,
      state: SessionState.EXPIRED,
      startedAtUnixMs: BigInt(T0),
    });
    c.write([write(create(SessionSummarySchema, { ...s, metadata: m }))]);
    expect(c.count(q({ stuckBefore: T0 + 60 * MIN }))).toBe(0);
  });

  it("migrates a schema 2 file in place: rows kept, the stuck start computed from each stored row", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-stuck-"));
    dirs.push(dir);
    const file = path.join(dir, "console.sqlite");
    const c = new SqliteCatalog({ path: file });
    c.write(rows.map(write));
    const version = c.version;
    c.close();
    // What schema 2 looked like: no stuck_since_ms, no row kind, and neither of their indexes.
    const raw = new Database(file);
    raw.exec(
      "DROP INDEX sessions_stuck; DROP INDEX sessions_files; ALTER TABLE sessions DROP COLUMN stuck_since_ms; ALTER TABLE sessions DROP COLUMN kind; UPDATE meta SET value = '2' WHERE key = 'schema';",
    );
    expect(
      (raw.prepare("SELECT count(*) AS c FROM pragma_table_info('sessions') WHERE name = 'stuck_since_ms'").get() as { c: number }).c,
    ).toBe(0);
    raw.close();
    const migrated = catalog(file);
    expect(migrated.counts().known).toBe(rows.length);
    expect(migrated.version).toBe(version);
    const now = T0 + 90 * MIN;
    expect(ids(migrated.page(q({ stuckBefore: now - 15 * MIN }), 0, 1_000).rows)).toEqual(
      ids(rows.filter((s) => isStuck(s, now, 15 * MIN))),
    );
    // Text search and the other indexes still answer.
    expect(migrated.page(q({ text: "row 12" }), 0, 1_000).total).toBeGreaterThan(0);
  });

  it("takes `stuck` from the browser's query as a flag; the cut-off is never the browser's", () => {
    expect(parseListQuery(create(SessionListQuerySchema, { stuck: true }))).toMatchObject({ stuck: true });
    expect(parseListQuery(create(SessionListQuerySchema, {})).stuck).toBeUndefined();
    expect(parseListQuery(create(SessionListQuerySchema, { stuck: true })).stuckBefore).toBeUndefined();
  });
});

describe("ListSessionPage and WatchSessionChanges with stuck", () => {
  const gateways: Gateway[] = [];
  afterEach(() => {
    for (const g of gateways.splice(0)) g.close();
  });

  async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
    const t0 = Date.now();
    while (!(await cond())) {
      if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
      await new Promise((res) => setTimeout(res, 10));
    }
  }

  it("an offer left unanswered past the threshold is listed as stuck, the total is re-counted as time passes, and an answer clears it", async () => {
    const rt = new FakeRuntime();
    const waiting = handoffScript();
    rt.start(waiting.start(), [waiting.owner, waiting.target]);
    rt.append(waiting.offer());
    const quiet = handoffScript();
    rt.start(quiet.start(), [quiet.owner, quiet.target]);
    const gw = createGateway({ runtime: rt, flushMs: 5, heartbeatMs: 60_000, stuckAfterMs: 400 });
    gateways.push(gw);
    const client = createClient(ConsoleService, createRouterTransport(consoleRoutes(gw)));
    await waitFor(
      async () =>
        (await client.listSessionPage({})).total === 2n &&
        (await client.listSessionPage({ query: { phase: "OfferPending" } })).total === 1n,
      "rows",
    );

    const first = await client.listSessionPage({ query: { stuck: true } });
    expect(first.stuckAfterMs).toBe(400n);
    const row = (await client.listSessionPage({ query: { phase: "OfferPending" } })).sessions[0];
    expect(Number(row?.phaseSinceUnixMs)).toBeGreaterThan(0);

    // A watcher of the stuck query hears of it without any write (the clock moved, not the catalog).
    const list = new ListService(gw.catalog, gw.feeder, { stuckAfterMs: 400, stuckRecountMs: 50, heartbeatMs: 60_000 });
    const ac = new AbortController();
    const seen: WatchSessionChangesResponse[] = [];
    const watching = (async () => {
      for await (const m of list.watchChanges(parseListQuery(create(SessionListQuerySchema, { stuck: true })), ac.signal)) seen.push(m);
    })();
    await waitFor(async () => (await client.listSessionPage({ query: { stuck: true } })).total === 1n, "stuck after the threshold");
    const stuck = await client.listSessionPage({ query: { stuck: true } });
    expect(stuck.sessions.map((s) => s.metadata?.sessionId)).toEqual([waiting.sessionId]);
    await waitFor(
      () => seen.some((m) => m.item.case === "change" && m.item.value.total === 1n && m.item.value.overflow),
      "a re-count notice",
    );

    rt.append(waiting.accept());
    await waitFor(async () => (await client.listSessionPage({ query: { stuck: true } })).total === 0n, "answered: no longer stuck");
    ac.abort();
    await watching;
  });
});
