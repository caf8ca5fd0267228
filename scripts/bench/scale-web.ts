// Web section of `npm run bench:scale`, for one history size: the console
// with its UI, run as `npm start` runs it (scripts/build.mjs --if-needed, then
// the compiled server .baton/server/main.mjs with the flags of
// scripts/server-flags.mjs), against the seeded runtime as an external
// runtime (an observer identity), sign-in off, catalog in its own temporary
// folder. Once the catalog is complete it is restarted warm, and real
// Chromium measures (bench:web's browser contexts and page timing,
// web-browser.ts and web-page.ts: a fresh context per load, HTTP cache off):
// - the list page: navigation start → first row shown (one load to warm the
//   server, then the median of 5);
// - one search for a session by its intent words ("on-call (N)"): typed into
//   the list's search box, time until exactly that row shows (median of 5;
//   it includes the box's 200 ms debounce before the URL and the query change),
//   and the `?q=` deep link, navigation start → exactly that row (median of 5);
// - opening that session's page: navigation start → its first view (a
//   timeline entry), and → the live timeline (median of 5).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { CHROMIUM_PATH } from "../../e2e/support/ports";
import { backfilled, OBSERVER, startConsole } from "./scale-console";
import { fmt, fmtInt, median, table, verdict, type ScaleContext, type ScaleSection } from "./scale-common";
import { freshContext, LAUNCH_ARGS } from "./web-browser";
import { coldRun, type PageCondition } from "./web-page";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const RUNS = 5;
const TIMEOUT_MS = 60_000;
/** Targets (issue #9). */
const LIST_TARGET_MS = 1_000;

export interface WebScaleResult {
  /** Whether `build.mjs --if-needed` had to build, and how long it took. */
  build: { ran: boolean; ms: number };
  /** Warm restart → catalog caught up (ms). */
  warmCaughtUpMs: number;
  /** Navigation start → first row, and → the document's first byte. */
  list: { firstRowMs: number; firstByteMs: number; runs: (number | null)[] };
  search: {
    text: string;
    sessionId: string;
    /** Typed into the search box → exactly that row shown. */
    boxMs: number;
    boxRuns: number[];
    /** `/?q=` deep link: navigation start → exactly that row. */
    deepLinkMs: number;
    deepLinkFirstByteMs: number;
    deepLinkRuns: (number | null)[];
  };
  session: { firstViewMs: number; liveMs: number; firstByteMs: number; firstViewRuns: (number | null)[]; liveRuns: (number | null)[] };
}

/** scripts/build.mjs --if-needed, as `npm start` runs it; true when it built something. */
async function buildIfNeeded(say: (line: string) => void): Promise<{ ran: boolean; ms: number }> {
  const t0 = performance.now();
  const out: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, "scripts", "build.mjs"), "--if-needed"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const keep = (d: Buffer) => {
      out.push(d.toString());
      if (out.length > 400) out.splice(0, 200);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.once("error", reject);
    child.once("exit", resolve);
  });
  const text = out.join("");
  if (code !== 0) throw new Error(`scripts/build.mjs --if-needed failed (${code}): ${text.slice(-2_000)}`);
  const ran = /building/i.test(text);
  const ms = performance.now() - t0;
  say(`  build: ${ran ? `built in ${fmt(ms / 1000, 1)} s` : "up to date"}`);
  return { ran, ms };
}

// Page conditions, tested on every frame from navigation start (web-page.ts):
// plain arrow functions, their source stands alone in the page.
const firstRow: PageCondition = {
  fn: () => document.querySelector("[data-testid=session-list] [data-row-id]") !== null,
  arg: "",
  timeoutMs: TIMEOUT_MS,
};
const onlyRow = (text: string): PageCondition => ({
  fn: (t) => {
    const rows = document.querySelectorAll("[data-testid=session-list] [data-row-id]");
    return rows.length === 1 && (rows[0]?.textContent ?? "").includes(t);
  },
  arg: text,
  timeoutMs: TIMEOUT_MS,
});
const firstView: PageCondition = {
  fn: () => document.querySelector("article[data-sequence]") !== null,
  arg: "",
  timeoutMs: TIMEOUT_MS,
};
const liveTimeline: PageCondition = {
  fn: () =>
    document.querySelector("[data-testid=timeline] article[data-sequence]") !== null &&
    !(document.body.textContent ?? "").includes("loading history"),
  arg: "",
  timeoutMs: TIMEOUT_MS,
};

/**
 * One load to warm the server, then RUNS measured ones: the `ready` and `live` times (null: not
 * within the timeout) and navigation start → the document's first byte (the server's share).
 */
async function loads(
  browser: Browser,
  url: string,
  ready: PageCondition,
  live?: PageCondition,
): Promise<{ ready: (number | null)[]; live: (number | null)[]; firstByte: number[] }> {
  await coldRun(browser, url, ready, 0, live);
  const out = { ready: [] as (number | null)[], live: [] as (number | null)[], firstByte: [] as number[] };
  for (let i = 0; i < RUNS; i++) {
    const r = await coldRun(browser, url, ready, 0, live);
    out.ready.push(r.readyMs);
    out.live.push(r.liveMs);
    out.firstByte.push(r.firstByteMs);
  }
  return out;
}

/** Median of the runs that finished; NaN (printed "-") when any did not. */
const medianOf = (xs: (number | null)[]): number => (xs.some((x) => x === null) ? NaN : median(xs as number[]));

/**
 * The list's search box: once the list is live (hydrated, its stream up), type `text` and time
 * until exactly one row, holding it, is shown. Returns that time and the row's session id.
 */
async function boxSearch(browser: Browser, baseUrl: string, text: string): Promise<{ ms: number; sessionId: string }> {
  const { context, page } = await freshContext(browser);
  try {
    await page.goto(`${baseUrl}/`, { waitUntil: "load", timeout: TIMEOUT_MS });
    await page.locator('[data-connection="live"]').first().waitFor({ state: "visible", timeout: TIMEOUT_MS });
    const box = page.getByTestId("filter-q");
    const t0 = performance.now();
    await box.fill(text);
    await page.waitForFunction(onlyRow(text).fn, text, { polling: "raf", timeout: TIMEOUT_MS });
    const ms = performance.now() - t0;
    const url = new URL(page.url());
    if (url.searchParams.get("q") !== text) throw new Error(`the search box did not put ?q= in the URL: ${page.url()}`);
    const sessionId = (await page.locator("[data-testid=session-list] [data-row-id]").first().getAttribute("data-row-id")) ?? "";
    return { ms, sessionId };
  } finally {
    await context.close();
  }
}

export const webSection: ScaleSection<WebScaleResult> = {
  name: "web",

  async measure(ctx: ScaleContext): Promise<WebScaleResult> {
    const build = await buildIfNeeded(ctx.say);
    const server = path.join(ROOT, ".baton", "server", "main.mjs");
    // As scripts/start.mjs runs it: source maps on, the compiled server, with its UI.
    const command = ["--enable-source-maps", server];
    const rt = await ctx.startRuntime({ MACP_DEV_OBSERVERS: OBSERVER });
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-bench-web-"));
    let browser: Browser | null = null;
    try {
      // Fill the catalog, then restart warm on it.
      let t0 = performance.now();
      let p = await startConsole(rt.url, dataDir, t0, command);
      const fill = await backfilled(p, ctx.sessions, t0);
      ctx.say(`  catalog complete after ${fmt(fill.ms / 1000, 1)} s; restarting warm`);
      await p.stop();
      t0 = performance.now();
      p = await startConsole(rt.url, dataDir, t0, command);
      const warm = await backfilled(p, ctx.sessions, t0);
      ctx.say(`  warm console on ${p.url}, caught up after ${fmtInt(warm.ms)} ms`);
      try {
        browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: LAUNCH_ARGS, headless: true });

        const list = await loads(browser, `${p.url}/`, firstRow);
        const listMs = medianOf(list.ready);
        const listFirstByte = median(list.firstByte);
        ctx.say(
          `  list page: first row after ${fmtInt(listMs)} ms, first byte ${fmtInt(listFirstByte)} ms (medians of ${RUNS}; runs ${list.ready.map((x) => (x === null ? "timeout" : fmtInt(x))).join(", ")})`,
        );

        const n = Math.floor(ctx.sessions / 2) + 7;
        const text = `on-call (${n})`;
        await boxSearch(browser, p.url, text); // warm
        const boxRuns: number[] = [];
        let sessionId = "";
        for (let i = 0; i < RUNS; i++) {
          const r = await boxSearch(browser, p.url, text);
          boxRuns.push(r.ms);
          sessionId = r.sessionId;
        }
        const deep = await loads(browser, `${p.url}/?q=${encodeURIComponent(text)}`, onlyRow(text));
        const search = {
          text,
          sessionId,
          boxMs: median(boxRuns),
          boxRuns,
          deepLinkMs: medianOf(deep.ready),
          deepLinkFirstByteMs: median(deep.firstByte),
          deepLinkRuns: deep.ready,
        };
        ctx.say(
          `  search "${text}" (session ${sessionId}): search box → that row only ${fmtInt(search.boxMs)} ms (with its 200 ms debounce); ?q= deep link → that row ${fmtInt(search.deepLinkMs)} ms, first byte ${fmtInt(search.deepLinkFirstByteMs)} ms (medians of ${RUNS})`,
        );

        if (!sessionId) throw new Error(`the search for "${text}" showed no session id`);
        const s = await loads(browser, `${p.url}/sessions/${encodeURIComponent(sessionId)}`, firstView, liveTimeline);
        const session = {
          firstViewMs: medianOf(s.ready),
          liveMs: medianOf(s.live),
          firstByteMs: median(s.firstByte),
          firstViewRuns: s.ready,
          liveRuns: s.live,
        };
        ctx.say(
          `  session page: first view after ${fmtInt(session.firstViewMs)} ms, live timeline after ${fmtInt(session.liveMs)} ms, first byte ${fmtInt(session.firstByteMs)} ms (medians of ${RUNS})`,
        );
        return {
          build,
          warmCaughtUpMs: warm.ms,
          list: { firstRowMs: listMs, firstByteMs: listFirstByte, runs: list.ready },
          search,
          session,
        };
      } finally {
        await browser?.close().catch(() => undefined);
        await p.stop();
      }
    } finally {
      await rt.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  },

  report(results, say) {
    say(
      "Web (Chromium, the console with its UI as `npm start` runs it, warm catalog; fresh context per load, HTTP cache off; medians of 5):",
    );
    say(
      table(
        [
          "sessions (open)",
          "list: first row",
          "search box → that row (incl. 200 ms debounce)",
          "?q= → that row",
          "session: first view",
          "session: live timeline",
        ],
        results.map(({ sessions, open, result: r }) => [
          `${fmtInt(sessions)} (${fmtInt(open)})`,
          `${fmtInt(r.list.firstRowMs)} ms (first byte ${fmtInt(r.list.firstByteMs)})`,
          `${fmtInt(r.search.boxMs)} ms`,
          `${fmtInt(r.search.deepLinkMs)} ms`,
          `${fmtInt(r.session.firstViewMs)} ms`,
          `${fmtInt(r.session.liveMs)} ms`,
        ]),
      ),
    );
    for (const { sessions, result: r } of results) {
      say(
        `  first rows of a warm list page ≤ ${fmtInt(LIST_TARGET_MS)} ms at ${fmtInt(sessions)} sessions: ${fmtInt(r.list.firstRowMs)} ms, ${verdict(r.list.firstRowMs <= LIST_TARGET_MS)}`,
      );
    }
    return results;
  },
};
