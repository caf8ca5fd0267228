// `npm run bench:web`: what is measured inside Chromium on a cold page load
// (JS before `load`, LCP, when the content is in place). The live acceptance
// → DOM latency of the session timeline is in web-live.ts, the browser
// context both start from in web-browser.ts. Benchmark code only.

import zlib from "node:zlib";
import type { Browser } from "playwright-core";
import { freshContext } from "./web-browser";

/** Rough content labels for a chunk, from strings its libraries keep when minified. */
const SIGNATURES: [RegExp, string][] = [
  [/__reactFiber/, "react-dom"],
  [/next-router-state-tree/, "next router"],
  [/thematicBreak/, "markdown (react-markdown/micromark)"],
  [/FileDescriptorProto/, "protobuf reflection"],
  [/connect-protocol-version/i, "connect"],
  [/refetchOnWindowFocus/, "react-query"],
  [/getVirtualItems/, "react-virtual"],
  [/data-sequence/, "session timeline"],
  [/data-row-id/, "session list"],
];

export function chunkTags(body: Buffer): string[] {
  const text = body.toString("latin1");
  return SIGNATURES.filter(([re]) => re.test(text)).map(([, tag]) => tag);
}

export interface ScriptLoad {
  url: string;
  tags: string[];
  /** Uncompressed body bytes. */
  rawBytes: number;
  /** Body bytes as they came over the wire (Resource Timing encodedBodySize). */
  sentBytes: number;
  /** Content-Encoding as sent ("" = none). */
  encoding: string;
  /** The body as gzip -9 would make it (the "gzip-equivalent"). */
  gzipBytes: number;
  responseEndMs: number;
}

export interface ColdRun {
  url: string;
  /** Sum over script responses that ended before the load event: as sent, gzip -9 equivalent, uncompressed. */
  jsSentBytes: number;
  jsGzipBytes: number;
  jsRawBytes: number;
  scriptsBeforeLoad: number;
  /** Scripts that arrived after `load` (lazy chunks): count and gzip bytes. */
  scriptsAfterLoad: number;
  jsAfterLoadGzipBytes: number;
  /** The HTML document (it carries the inline RSC payload): as sent, gzip -9, uncompressed. */
  htmlSentBytes: number;
  htmlGzipBytes: number;
  htmlRawBytes: number;
  htmlEncoding: string;
  /** Navigation start → first byte of the document (responseStart). */
  firstByteMs: number;
  /** Request sent → first byte (the server's time, without connection setup). */
  serverMs: number;
  /** First paint and first contentful paint (Paint Timing). */
  firstPaintMs: number | null;
  fcpMs: number | null;
  lcpMs: number | null;
  lcpElement: string;
  /** Every LCP candidate reported: when, its size, the element, and whether that element is still in the page at the end. */
  lcpCandidates: { ms: number; size: number; el: string; connected: boolean }[];
  /** The page's console errors and warnings (BENCH_LCP_TRACE=1 only). */
  consoleLines: string[];
  loadMs: number;
  domContentLoadedMs: number;
  /** Navigation start → the page's content was in place (see `ready`), checked every frame from navigation start. */
  readyMs: number | null;
  /** Navigation start → the live view had taken over (`live`), when asked. */
  liveMs: number | null;
  /** Navigation start → the first script asked for after `load` (the lazy live code), and the last one's end. */
  lateScriptStartMs: number | null;
  lateScriptEndMs: number | null;
  /** Each script that arrived after `load`: asked, in (ms from navigation start), gzip -9 bytes. */
  lateScripts: { file: string; startMs: number; endMs: number; gzipBytes: number }[];
  /** Long animation frames (> 50 ms) from navigation start to the live view, with their longest scripts. */
  longFrames: { startMs: number; durationMs: number; renderMs: number; scripts: string[] }[];
  /** Navigation start → the page's first SubscribeSession request (the live view's stream), when it made one. */
  streamAskedMs: number | null;
  /** True when the server sent the scripts compressed itself. */
  serverCompressed: boolean;
  /** Content-Encoding of the scripts before load, by count (e.g. { br: 9 }). */
  scriptEncodings: Record<string, number>;
  /** Script responses with an error status (e.g. a rebuild swapped .next mid-run). */
  failedScripts: string[];
  scripts: ScriptLoad[];
}

/** gzip -9 sizes by URL; chunk names are content hashes, so one fetch each. */
const gzipCache = new Map<string, { raw: number; gz: number; tags: string[] }>();

async function gzipSize(url: string, body: () => Promise<Buffer>): Promise<{ raw: number; gz: number; tags: string[] }> {
  const hit = gzipCache.get(url);
  if (hit) return hit;
  const buf = await body();
  const out = { raw: buf.byteLength, gz: zlib.gzipSync(buf, { level: 9 }).byteLength, tags: chunkTags(buf) };
  gzipCache.set(url, out);
  return out;
}

/**
 * A condition polled in the page: a function and its argument. Functions,
 * not source strings: the console's Content-Security-Policy refuses `eval`,
 * which Playwright needs to run a string.
 */
export interface PageCondition {
  fn: (arg: string) => boolean;
  arg: string;
  timeoutMs: number;
}

/**
 * Page-side, from navigation start: tests `cond` on every animation frame
 * and tells the bench the first frame it holds through the SEEN_BINDING
 * binding. A source string (added with addInitScript, which the page's CSP
 * does not apply to); the condition is a plain arrow function, so its source
 * stands alone.
 */
function frameWatch(name: string, cond: PageCondition): string {
  return `(() => {
  const fn = ${cond.fn.toString()};
  const arg = ${JSON.stringify(cond.arg)};
  const tick = () => {
    let ok = false;
    try { ok = Boolean(document.body) && fn(arg); } catch {}
    if (ok) {
      try { window.${SEEN_BINDING}(${JSON.stringify(name)}, performance.now()); } catch {}
    } else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})()`;
}

/**
 * How the page tells the bench that a watched condition holds. Not
 * page.waitForFunction: its first use in a document makes Playwright inject
 * its own script, several hundred KB that the page's main thread parses and
 * compiles (40–190 ms on the 2-core machine, traced 2026-11-28), and after
 * `load` that lands in the middle of what is being measured (so would
 * page.evaluate's smaller helper). A binding is a CDP event: nothing runs in
 * the page but the call.
 */
const SEEN_BINDING = "__benchSeen";

/** The times the page reported through SEEN_BINDING, by name. */
class SeenWaiter {
  private readonly waits = new Map<string, { promise: Promise<number>; resolve: (t: number) => void }>();
  private entry(name: string): { promise: Promise<number>; resolve: (t: number) => void } {
    let e = this.waits.get(name);
    if (!e) {
      let resolve!: (t: number) => void;
      const promise = new Promise<number>((r) => (resolve = r));
      e = { promise, resolve };
      this.waits.set(name, e);
    }
    return e;
  }
  seen(name: unknown, t: unknown): void {
    if (typeof name === "string" && typeof t === "number") this.entry(name).resolve(t);
  }
  /** The time reported for `name` (ms from navigation start), or null when none came within `timeoutMs`. */
  wait(name: string, timeoutMs: number): Promise<number | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    return Promise.race([this.entry(name).promise, new Promise<null>((r) => (timer = setTimeout(() => r(null), timeoutMs)))]).finally(() =>
      clearTimeout(timer),
    );
  }
}

/**
 * Page-side: records in window.__benchAt.stream when the page first asks for
 * a SubscribeSession stream (connect-web calls the global fetch per request).
 */
const STREAM_WATCH = `(() => {
  const at = (window.__benchAt = window.__benchAt || {});
  const orig = window.fetch;
  window.fetch = function (input, init) {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    if (at.stream === undefined && url.includes("SubscribeSession")) at.stream = performance.now();
    return orig.call(this, input, init);
  };
})()`;

/** Page-side: keeps every long animation frame (with its scripts) in window.__benchLoaf. */
const LOAF_WATCH = `(() => {
  const frames = (window.__benchLoaf = []);
  try {
    new PerformanceObserver((list) => { for (const e of list.getEntries()) frames.push(e); }).observe({ type: "long-animation-frame", buffered: true });
  } catch {}
})()`;

/**
 * One cold load in a fresh context with the cache disabled. `ready` is a
 * selector-based condition for "the page's content is in place", tested on
 * every frame from navigation start; LCP is read after `load`, that
 * condition and `settleMs`.
 */
export async function coldRun(
  browser: Browser,
  url: string,
  ready: PageCondition,
  settleMs: number,
  live?: PageCondition,
): Promise<ColdRun> {
  const { context, page } = await freshContext(browser);
  try {
    // Describe each LCP candidate when it is reported: the element may be
    // gone by the time the result is read (the session page's first view is
    // replaced by the live view).
    await page.addInitScript(() => {
      const w = window as unknown as { __lcpDesc?: Map<number, string>; __lcpEls?: { t: number; size: number; el: Element }[] };
      w.__lcpDesc = new Map();
      w.__lcpEls = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries() as (PerformanceEntry & { element?: Element | null; size?: number })[]) {
          const el = e.element;
          if (!el) continue;
          w.__lcpEls?.push({ t: e.startTime, size: e.size ?? 0, el });
          const testid = el.getAttribute("data-testid");
          w.__lcpDesc?.set(
            e.startTime,
            `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}${testid ? `[data-testid=${testid}]` : ""} "${(el.textContent ?? "").trim().slice(0, 40)}"`,
          );
        }
      }).observe({ type: "largest-contentful-paint", buffered: true });
    });
    const seen = new SeenWaiter();
    await page.exposeBinding(SEEN_BINDING, (_source, name: unknown, t: unknown) => seen.seen(name, t));
    await page.addInitScript({ content: frameWatch("ready", ready) });
    if (live) {
      await page.addInitScript({ content: frameWatch("live", live) });
      await page.addInitScript({ content: STREAM_WATCH });
      await page.addInitScript({ content: LOAF_WATCH });
    }
    // With BENCH_LCP_TRACE=1, the page's errors and warnings (a hydration mismatch redraws the page).
    const consoleLines: string[] = [];
    if (process.env.BENCH_LCP_TRACE === "1")
      page.on("console", (msg) => {
        if (msg.type() === "error" || msg.type() === "warning") consoleLines.push(`${msg.type()}: ${msg.text().slice(0, 300)}`);
      });
    const scriptResponses = new Map<string, { encoding: string; body: () => Promise<Buffer> }>();
    const failed: string[] = [];
    page.on("response", (res) => {
      if (res.request().resourceType() !== "script") return;
      if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`);
      scriptResponses.set(res.url(), { encoding: res.headers()["content-encoding"] ?? "", body: () => res.body() });
    });
    const nav = await page.goto(url, { waitUntil: "load", timeout: 60_000 });
    if (new URL(page.url()).pathname === "/login") throw new Error(`${url} redirected to /login: the browser is not signed in`);
    const html = nav ? await nav.body() : Buffer.alloc(0);
    const htmlEncoding = nav ? ((await nav.allHeaders())["content-encoding"] ?? "") : "";
    const readyMs = await seen.wait("ready", ready.timeoutMs);
    const liveMs = live ? await seen.wait("live", live.timeoutMs) : null;
    const longFrames: ColdRun["longFrames"] = live
      ? await page.evaluate(() =>
          (
            ((window as unknown as { __benchLoaf?: PerformanceEntry[] }).__benchLoaf ?? []) as (PerformanceEntry & {
              renderStart: number;
              scripts: { invoker: string; sourceURL: string; sourceFunctionName: string; duration: number }[];
            })[]
          ).map((f) => ({
            startMs: f.startTime,
            durationMs: f.duration,
            renderMs: f.renderStart > 0 ? f.startTime + f.duration - f.renderStart : 0,
            scripts: [...f.scripts]
              .sort((a, b) => b.duration - a.duration)
              .slice(0, 3)
              .map(
                (x) =>
                  `${x.invoker || "?"} ${x.sourceFunctionName || ""} ${(x.sourceURL.split("/").pop() ?? "").slice(0, 20)} ${Math.round(x.duration)}ms`,
              ),
          })),
        )
      : [];
    const streamAskedMs = live
      ? await page.evaluate(() => (window as unknown as { __benchAt?: Record<string, number> }).__benchAt?.stream ?? null)
      : null;
    await page.waitForTimeout(settleMs);
    const m = await page.evaluate(async () => {
      const lcp = await new Promise<{ t: number | null; el: string }>((resolve) => {
        let last: (PerformanceEntry & { renderTime?: number; loadTime?: number; element?: Element | null }) | undefined;
        const po = new PerformanceObserver((list) => {
          for (const e of list.getEntries()) last = e;
        });
        po.observe({ type: "largest-contentful-paint", buffered: true });
        // Buffered entries are delivered in a task; give it two.
        setTimeout(() => {
          po.disconnect();
          if (!last) return resolve({ t: null, el: "" });
          const el = last.element;
          const seen = (window as unknown as { __lcpDesc?: Map<number, string> }).__lcpDesc?.get(last.startTime);
          const desc = el
            ? `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}${el.getAttribute("data-testid") ? `[data-testid=${el.getAttribute("data-testid")}]` : ""} "${(el.textContent ?? "").trim().slice(0, 40)}"`
            : seen
              ? `${seen} (since replaced)`
              : "(removed)";
          resolve({ t: last.startTime, el: desc });
        }, 50);
      });
      // Every candidate, and whether its element is still in the page (a
      // later candidate for a replaced element means the DOM was redrawn).
      const candidates = ((window as unknown as { __lcpEls?: { t: number; size: number; el: Element }[] }).__lcpEls ?? []).map((c) => ({
        ms: c.t,
        size: c.size,
        el: `${(window as unknown as { __lcpDesc?: Map<number, string> }).__lcpDesc?.get(c.t) ?? c.el.tagName.toLowerCase()}`,
        connected: c.el.isConnected,
      }));
      const navEntry = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
      // (No named helper functions in here: tsx would wrap them in a helper the page does not have.)
      const firstPaint = performance.getEntriesByName("first-paint", "paint")[0]?.startTime ?? null;
      const fcp = performance.getEntriesByName("first-contentful-paint", "paint")[0]?.startTime ?? null;
      const resources = (performance.getEntriesByType("resource") as PerformanceResourceTiming[]).map((r) => ({
        name: r.name,
        startTime: r.startTime,
        responseEnd: r.responseEnd,
        encodedBodySize: r.encodedBodySize,
        decodedBodySize: r.decodedBodySize,
      }));
      return {
        lcp,
        candidates,
        loadEventStart: navEntry.loadEventStart,
        domContentLoaded: navEntry.domContentLoadedEventStart,
        responseStart: navEntry.responseStart,
        requestStart: navEntry.requestStart,
        htmlSent: navEntry.encodedBodySize,
        firstPaint,
        fcp,
        resources,
      };
    });
    let serverCompressed = false;
    const scripts: ScriptLoad[] = [];
    const scriptEncodings: Record<string, number> = {};
    let afterCount = 0;
    let afterGz = 0;
    const lateScripts: ColdRun["lateScripts"] = [];
    let lateScriptStartMs: number | null = null;
    let lateScriptEndMs: number | null = null;
    for (const r of m.resources) {
      const sr = scriptResponses.get(r.name);
      if (!sr) continue;
      const compressed = sr.encoding !== "" && sr.encoding !== "identity";
      serverCompressed ||= compressed;
      // gzip -9 of the decoded body, whatever was sent: the comparable figure.
      const size = await gzipSize(r.name, sr.body);
      if (r.responseEnd > 0 && r.responseEnd <= m.loadEventStart) {
        const encoding = compressed ? sr.encoding : "";
        scriptEncodings[encoding || "identity"] = (scriptEncodings[encoding || "identity"] ?? 0) + 1;
        scripts.push({
          url: r.name,
          tags: size.tags,
          rawBytes: size.raw,
          sentBytes: r.encodedBodySize,
          encoding,
          gzipBytes: size.gz,
          responseEndMs: r.responseEnd,
        });
      } else {
        afterCount += 1;
        afterGz += size.gz;
        lateScripts.push({
          file: new URL(r.name).pathname.split("/").pop() ?? r.name,
          startMs: r.startTime,
          endMs: r.responseEnd,
          gzipBytes: size.gz,
        });
        lateScriptStartMs = Math.min(lateScriptStartMs ?? Infinity, r.startTime);
        lateScriptEndMs = Math.max(lateScriptEndMs ?? 0, r.responseEnd);
      }
    }
    return {
      url,
      jsSentBytes: scripts.reduce((n, s) => n + s.sentBytes, 0),
      jsGzipBytes: scripts.reduce((n, s) => n + s.gzipBytes, 0),
      jsRawBytes: scripts.reduce((n, s) => n + s.rawBytes, 0),
      scriptsBeforeLoad: scripts.length,
      scriptsAfterLoad: afterCount,
      jsAfterLoadGzipBytes: afterGz,
      htmlSentBytes: m.htmlSent,
      htmlGzipBytes: zlib.gzipSync(html, { level: 9 }).byteLength,
      htmlRawBytes: html.byteLength,
      htmlEncoding,
      firstByteMs: m.responseStart,
      serverMs: m.responseStart - m.requestStart,
      firstPaintMs: m.firstPaint,
      fcpMs: m.fcp,
      lcpMs: m.lcp.t,
      lcpElement: m.lcp.el,
      lcpCandidates: m.candidates,
      consoleLines,
      loadMs: m.loadEventStart,
      domContentLoadedMs: m.domContentLoaded,
      readyMs,
      liveMs,
      lateScriptStartMs,
      lateScriptEndMs,
      lateScripts,
      longFrames,
      streamAskedMs,
      serverCompressed,
      scriptEncodings,
      failedScripts: failed,
      scripts,
    };
  } finally {
    await context.close();
  }
}
