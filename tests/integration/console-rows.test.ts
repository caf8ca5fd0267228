// The console's catalog fed by the runtime's list-row feed
// (baton.v1.RuntimeCatalogService.WatchListRows), against a runtime PROCESS
// over real gRPC (issue 9):
// - the catalog fills from the rows alone: no session history is read for
//   the list (counted on the feeder's upstream reads); only the open sessions
//   are followed, for the inbox; paging and search answer the right rows;
// - a console restart resumes from its stored cursor: no row is sent again;
// - a runtime replaced at the same address (a new store_id): the old rows go;
// - a watcher the runtime cuts off with RESOURCE_EXHAUSTED (a tiny subscriber
//   buffer and a console made slow) resumes from its cursor and loses no
//   session.
// The history path (a runtime without the feed) is console-catalog.test.ts.
import fs from "node:fs";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsoleService, type CatalogStatus } from "@/lib/gen/baton/v1/console_pb";
import { loadConsoleConfig } from "@/lib/server/config";
import { startConsole, type RunningConsole } from "@/lib/server/console";
import { capturingLogger, OBSERVER, seed, seedInProcess, spawnRuntime, TARGET, type RuntimeProcess } from "./catalog-harness";
import { tempDir, waitFor } from "./harness";

const SESSIONS = 1_500;

const folders: string[] = [];
const dir = (prefix: string) => {
  const d = tempDir(prefix);
  folders.push(d);
  return d;
};

async function externalConsole(runtime: RuntimeProcess, dataDir: string, lines: string[]): Promise<RunningConsole> {
  const env = {
    PORT: "0",
    BATON_REQUIRE_SIGN_IN: "0",
    MACP_RUNTIME_URL: runtime.url,
    MACP_RUNTIME_TOKEN: OBSERVER,
    BATON_DATA_DIR: dataDir,
    BATON_CATALOG_CONCURRENCY: "4",
  };
  return startConsole({ config: loadConsoleConfig(env, ["--no-ui"], process.cwd()), env, logger: capturingLogger(lines) });
}

const browserOf = (c: { url: string }) => createClient(ConsoleService, createConnectTransport({ baseUrl: c.url, httpVersion: "1.1" }));

/** The console follows the feed and its catalog holds `total` sessions, caught up. */
async function caughtUp(c: RunningConsole, total: number, timeoutMs = 120_000): Promise<CatalogStatus[]> {
  const browser = browserOf(c);
  const seen: CatalogStatus[] = [];
  await waitFor(
    async () => {
      const page = await browser.listSessionPage({ limit: 1 });
      if (page.status) seen.push(page.status);
      return c.gateway.feeder.mode === "rows" && page.status?.backfilling === false && page.total === BigInt(total);
    },
    timeoutMs,
    `catalog of ${total} sessions from the list rows`,
  );
  return seen;
}

afterAll(() => {
  for (const d of folders) fs.rmSync(d, { recursive: true, force: true });
});

describe("the console catalog fed by the runtime's list rows", () => {
  let runtime: RuntimeProcess;
  let seeded: { ids: string[]; open: Set<string> };
  const consoleDir = dir("baton-rows-console-");

  beforeAll(async () => {
    runtime = await spawnRuntime(dir("baton-rows-runtime-"));
    seeded = await seed(runtime, SESSIONS);
  }, 300_000);

  afterAll(async () => {
    await runtime?.stop();
  });

  it("fills the catalog from the rows without reading one history for the list, follows only the open sessions, and pages and searches the right rows", async () => {
    const lines: string[] = [];
    const c = await externalConsole(runtime, consoleDir, lines);
    try {
      const browser = browserOf(c);
      await caughtUp(c, SESSIONS);
      const feeder = c.gateway.feeder;
      // Every session arrived as exactly one row (its newest), and no history was read for the list.
      expect(feeder.rowsApplied).toBe(SESSIONS);
      expect(feeder.readsStarted).toBe(0);
      expect(feeder.rowStreamsOpened).toBe(1);
      expect(c.gateway.catalog.cursor?.storeId).not.toBe("");
      // The inbox's live views: the open sessions, and only those, each read once.
      // A session is followed as soon as its row arrives, but its read starts only when one of the
      // follower's concurrent slots frees up: wait for both before counting the reads.
      await waitFor(
        () => feeder.followedCount === seeded.open.size && feeder.openReads >= seeded.open.size,
        30_000,
        "open sessions followed and read",
      );
      expect(feeder.openReads).toBe(seeded.open.size);
      expect(lines.some((l) => l.includes("session catalog complete") && l.includes("list rows"))).toBe(true);

      // Paging: every session exactly once, in start order.
      const ids: string[] = [];
      for (let offset = 0; ; offset += 500) {
        const page = await browser.listSessionPage({ query: { sort: "started", ascending: true }, offset, limit: 500 });
        expect(page.total).toBe(BigInt(SESSIONS));
        ids.push(...page.sessions.map((s) => s.metadata?.sessionId ?? ""));
        const started = page.sessions.map((s) => Number(s.metadata?.startedAtUnixMs));
        expect(started).toEqual([...started].sort((a, b) => a - b));
        if (page.sessions.length < 500) break;
      }
      expect(ids).toHaveLength(SESSIONS);
      expect(new Set(ids)).toEqual(new Set(seeded.ids));
      // Filters and search over the rows the runtime folded.
      const openPage = await browser.listSessionPage({ query: { state: "open" }, limit: 500 });
      expect(new Set(openPage.sessions.map((s) => s.metadata?.sessionId))).toEqual(seeded.open);
      expect(openPage.sessions.every((s) => s.phase === "OfferPending" && s.currentTarget === TARGET)).toBe(true);
      const committed = await browser.listSessionPage({ query: { state: "resolved", phase: "Committed" }, limit: 1 });
      expect(committed.total).toBe(BigInt(SESSIONS - seeded.open.size));
      const one = await browser.listSessionPage({ query: { text: "Pager 01234" } });
      expect(one.sessions.map((s) => s.metadata?.sessionId)).toEqual([seeded.ids[1234]]);
      expect(one.sessions[0]).toMatchObject({
        intent: "rotate pager 01234",
        scope: "day shift",
        currentOwner: TARGET,
        outcome: "positive",
      });
      const night = await browser.listSessionPage({ query: { text: "night", state: "open" }, limit: 500 });
      expect(night.total).toBe(BigInt([...seeded.open].filter((sid) => seeded.ids.indexOf(sid) % 2 === 1).length));
      // Who acts next comes with the row: an open offer waits on its target.
      const openId = [...seeded.open][0] ?? "";
      expect(c.gateway.catalog.get(openId)?.nextActors).toEqual([TARGET]);
      expect(c.gateway.catalog.get(seeded.ids[1] ?? "")?.final).toBe(true);
    } finally {
      await c.close();
    }
  }, 300_000);

  it("resumes after a restart from its stored cursor: no row is sent again, new ones arrive live", async () => {
    const lines: string[] = [];
    const c = await externalConsole(runtime, consoleDir, lines);
    try {
      const browser = browserOf(c);
      const first = await browser.listSessionPage({ query: { state: "resolved" }, limit: 5 });
      expect(first.total).toBe(BigInt(SESSIONS - seeded.open.size));
      await caughtUp(c, SESSIONS, 30_000);
      // Give anything that would re-send or re-read the chance to.
      await new Promise((r) => setTimeout(r, 500));
      const feeder = c.gateway.feeder;
      expect(feeder.rowsApplied).toBe(0);
      expect(feeder.readsStarted).toBe(0);
      const before = c.gateway.catalog.cursor?.change ?? 0n;
      // A new session (seeding's session 0 stays open) arrives as live rows, one per change.
      const [sid] = (await seed(runtime, 1)).ids;
      await waitFor(
        async () => (await browser.listSessionPage({ query: { text: sid?.slice(0, 18) ?? "" } })).sessions[0]?.phase === "OfferPending",
        10_000,
        "new session",
      );
      expect(feeder.rowsApplied).toBeGreaterThanOrEqual(1);
      expect(feeder.rowsApplied).toBeLessThanOrEqual(2); // SessionStart, HandoffOffer
      expect(c.gateway.catalog.cursor?.change).toBeGreaterThan(before);
      expect(feeder.readsStarted).toBe(0);
      seeded.ids.push(sid ?? "");
    } finally {
      await c.close();
    }
  }, 120_000);
});

describe("a watcher the runtime cuts off with RESOURCE_EXHAUSTED", () => {
  let runtime: RuntimeProcess;
  beforeAll(async () => {
    // A live buffer of one batch: a console that falls behind is cut off at once.
    runtime = await spawnRuntime(dir("baton-rows-cut-runtime-"), { MACP_SUBSCRIBER_BUFFER: "1" });
  }, 60_000);
  afterAll(async () => {
    await runtime?.stop();
  });

  it("resumes from its stored cursor and loses no session", async () => {
    const lines: string[] = [];
    const c = await externalConsole(runtime, dir("baton-rows-cut-console-"), lines);
    try {
      await waitFor(() => c.gateway.feeder.mode === "rows", 30_000, "feed answered");
      // A console too slow for a burst: a few catalog writes hold its event
      // loop for 3 s each, while another process seeds at full speed, with
      // 4 KB intents so the rows soon fill what the transport holds (the
      // HTTP/2 window, the runtime's in-flight bytes), then the runtime's
      // one-batch buffer.
      let seeding = true;
      let blocks = 0;
      const stop = c.gateway.feeder.onWrite(() => {
        if (!seeding || c.gateway.feeder.rowStreamsOpened > 1 || blocks >= 5) return;
        blocks++;
        const until = Date.now() + 3_000;
        while (Date.now() < until) {
          // busy
        }
      });
      const burst = await seedInProcess(runtime, 300, 4_096);
      seeding = false;
      stop();
      await caughtUp(c, 300, 120_000);
      const feeder = c.gateway.feeder;
      expect(feeder.rowStreamsOpened).toBeGreaterThan(1);
      expect(lines.some((l) => l.includes("RESOURCE_EXHAUSTED"))).toBe(true);
      expect(feeder.readsStarted).toBe(0);
      // Every session is there, in its final state.
      for (const sid of burst.ids) {
        const row = c.gateway.catalog.get(sid);
        expect(row, sid).toBeDefined();
        expect(row?.summary.phase, sid).toBe(burst.open.has(sid) ? "OfferPending" : "Committed");
        expect(row?.final, sid).toBe(!burst.open.has(sid));
      }
    } finally {
      await c.close();
    }
  }, 300_000);
});

describe("a runtime whose store was replaced (same address, new store_id)", () => {
  const runtimes: RuntimeProcess[] = [];
  afterAll(async () => {
    for (const r of runtimes) await r.stop();
  });

  it("empties the catalog's rows of the old store and fills it from the new one", async () => {
    const first = await spawnRuntime(dir("baton-rows-store-a-"));
    runtimes.push(first);
    const old = await seed(first, 30);
    const lines: string[] = [];
    const c = await externalConsole(first, dir("baton-rows-store-console-"), lines);
    try {
      await caughtUp(c, 30, 60_000);
      const storeA = c.gateway.catalog.cursor?.storeId;
      // The runtime is replaced by one with another data folder, at the same address.
      await first.stop();
      const second = await spawnRuntime(dir("baton-rows-store-b-"), { MACP_BIND_ADDR: new URL(first.url).host });
      runtimes.push(second);
      const fresh = await seed(second, 12);
      await waitFor(
        () => {
          const cursor = c.gateway.catalog.cursor;
          return cursor !== undefined && cursor.storeId !== storeA && c.gateway.catalog.counts().known === 12;
        },
        60_000,
        "catalog rebuilt from the new store",
      );
      expect(lines.some((l) => l.includes("store was replaced"))).toBe(true);
      for (const sid of old.ids) expect(c.gateway.catalog.get(sid), sid).toBeUndefined();
      for (const sid of fresh.ids)
        expect(c.gateway.catalog.get(sid)?.summary.phase, sid).toBe(fresh.open.has(sid) ? "OfferPending" : "Committed");
      const page = await browserOf(c).listSessionPage({ query: { text: "pager" }, limit: 50 });
      expect(page.total).toBe(12n);
      expect(c.gateway.feeder.readsStarted).toBe(0);
    } finally {
      await c.close();
    }
  }, 180_000);
});
