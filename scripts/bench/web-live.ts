// `npm run bench:web`: the live phase inside Chromium. The session page is
// opened and follows the latest event; recorders in the page note when each
// row enters the DOM, when the timeline commits, long animation frames and
// the byte chunks of fetch bodies, all in the page's clock (clockOffset
// relates it to this process's). Benchmark code only.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { freshContext, wallNow } from "./web-browser";

/** Page clock minus this process's clock, from the round trip with the least delay. */
export async function clockOffset(page: Page, rounds = 15): Promise<{ offsetMs: number; uncertaintyMs: number }> {
  let best = { offsetMs: 0, uncertaintyMs: Number.POSITIVE_INFINITY };
  for (let i = 0; i < rounds; i++) {
    const t0 = wallNow();
    const pageT = await page.evaluate(() => performance.timeOrigin + performance.now());
    const t1 = wallNow();
    const half = (t1 - t0) / 2;
    if (half < best.uncertaintyMs) best = { offsetMs: pageT - (t0 + half), uncertaintyMs: half };
  }
  return best;
}

/** Page-side: records when each article[data-sequence] first enters the DOM. */
const ROW_RECORDER = `(() => {
  const times = {};
  window.__benchRows = times;
  for (const a of document.querySelectorAll("article[data-sequence]")) times[a.getAttribute("data-sequence")] = { dom: 0 };
  function record(el) {
    const seq = el.getAttribute("data-sequence");
    if (seq === null || times[seq]) return;
    const entry = { dom: performance.timeOrigin + performance.now() };
    times[seq] = entry;
    requestAnimationFrame(() => { entry.frame = performance.timeOrigin + performance.now(); });
  }
  new MutationObserver((muts) => {
    for (const m of muts) for (const n of m.addedNodes) {
      if (n.nodeType !== 1) continue;
      if (n.matches("article[data-sequence]")) record(n);
      for (const a of n.querySelectorAll("article[data-sequence]")) record(a);
    }
  }).observe(document.body, { childList: true, subtree: true });
  // React commits that change the timeline's row count (data-rows).
  const commits = [];
  window.__benchCommits = commits;
  const tl = document.querySelector("[data-testid=timeline]");
  if (tl) new MutationObserver(() => commits.push({ t: performance.timeOrigin + performance.now(), v: Number(tl.getAttribute("data-rows")) }))
    .observe(tl, { attributes: true, attributeFilter: ["data-rows"] });
  // Main-thread frames longer than 50 ms while events arrive (Chromium's
  // Long Animation Frames API): how much of the latency is page work.
  const frames = [];
  window.__benchLongFrames = frames;
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) frames.push({ t: performance.timeOrigin + e.startTime, d: e.duration, b: e.blockingDuration || 0 });
    }).observe({ type: "long-animation-frame" });
  } catch {}
})()`;

/**
 * Page-side, before any app script: notes when the page's JavaScript receives
 * each network chunk of a fetch body (ReadableStream reads of bytes), per
 * stream, so the live latency splits into "server → page" and "page → DOM".
 */
const CHUNK_RECORDER = `(() => {
  const chunks = [];
  window.__benchChunks = chunks;
  const ids = new WeakMap();
  let nextId = 1;
  const read = ReadableStreamDefaultReader.prototype.read;
  ReadableStreamDefaultReader.prototype.read = function () {
    let id = ids.get(this);
    if (id === undefined) { id = nextId++; ids.set(this, id); }
    return read.call(this).then((r) => {
      if (r && !r.done && r.value instanceof Uint8Array) {
        chunks.push({ s: id, t: performance.timeOrigin + performance.now(), n: r.value.byteLength });
        if (chunks.length > 20000) chunks.splice(0, 10000);
      }
      return r;
    });
  };
})()`;

export interface ChunkTime {
  /** Reader id (one per stream). */
  s: number;
  /** Page wall clock. */
  t: number;
  n: number;
}

export interface LivePage {
  context: BrowserContext;
  page: Page;
  /** Page-clock times at which each sequence's row was first in the DOM, and the next frame after it. */
  rowTimes(): Promise<Record<string, { dom: number; frame?: number }>>;
  /** Times (page clock) at which the timeline's row count changed. */
  commits(): Promise<{ t: number; v: number }[]>;
  /** Long animation frames since the recorder was installed (page clock start, duration). */
  longFrames(): Promise<{ t: number; d: number; b: number }[]>;
  /** Byte chunks the page's JS received from fetch bodies (page clock). */
  chunkTimes(): Promise<ChunkTime[]>;
  following(): Promise<{ scrollY: number; atBottom: boolean; rows: number }>;
  close(): Promise<void>;
}

/**
 * Open the session page, wait for its history, follow the latest with the
 * End key (the UI's own jump-to-latest), and record when rows appear.
 */
export async function openLiveSession(browser: Browser, url: string, expectedEvents: number): Promise<LivePage> {
  const { context, page } = await freshContext(browser);
  await page.addInitScript(CHUNK_RECORDER);
  await page.goto(url, { waitUntil: "load", timeout: 60_000 });
  if (new URL(page.url()).pathname === "/login") throw new Error(`${url} redirected to /login: the browser is not signed in`);
  await page.waitForFunction(
    (n) =>
      document.querySelectorAll("article[data-sequence]").length > 0 &&
      document.body.innerText.includes(`${n.toLocaleString("en-US")} events`),
    expectedEvents,
    { timeout: 30_000 },
  );
  const following = () =>
    page.evaluate(() => {
      const doc = document.documentElement;
      const tl = document.querySelector("[data-testid=timeline]");
      return {
        scrollY: window.scrollY,
        atBottom: window.scrollY + window.innerHeight >= doc.scrollHeight - 120,
        rows: Number(tl?.getAttribute("data-rows") ?? 0),
      };
    });
  // End: jump to the newest event and follow from there on.
  for (let attempt = 0; attempt < 5; attempt++) {
    await page.keyboard.press("End");
    try {
      await page.waitForFunction(
        (n) => {
          const doc = document.documentElement;
          const atBottom = window.scrollY + window.innerHeight >= doc.scrollHeight - 120;
          return window.scrollY > 0 && atBottom && document.getElementById(`e-${n}`) !== null;
        },
        expectedEvents,
        { timeout: 3_000 },
      );
      break;
    } catch {
      /* press again: row heights were still being measured */
    }
  }
  // Records the first time each timeline row (article[data-sequence]) enters
  // the DOM, in the page's wall clock, and the animation frame after it.
  // (A string, not a function: tsx would wrap named arrows in a helper the
  // page does not have.)
  await page.evaluate(ROW_RECORDER);
  await page.waitForTimeout(500);
  return {
    context,
    page,
    rowTimes: () =>
      page.evaluate(() => (window as unknown as { __benchRows: Record<string, { dom: number; frame?: number }> }).__benchRows),
    commits: () => page.evaluate(() => (window as unknown as { __benchCommits?: { t: number; v: number }[] }).__benchCommits ?? []),
    longFrames: () =>
      page.evaluate(() => (window as unknown as { __benchLongFrames?: { t: number; d: number; b: number }[] }).__benchLongFrames ?? []),
    chunkTimes: () => page.evaluate(() => (window as unknown as { __benchChunks?: ChunkTime[] }).__benchChunks ?? []),
    following,
    close: () => context.close(),
  };
}
