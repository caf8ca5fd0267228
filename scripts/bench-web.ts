// `npm run bench:web`: page-weight, LCP and live-latency benchmark of the
// console in Chromium, against the app started exactly as the README says
// (`npm start`: production build, built first when needed). A benchmark, not
// a test: it asserts nothing, prints a table with the budgets and a final
// JSON blob, and exits 0 unless something broke.
//
//   1. `npm start` on free loopback ports, fresh MACP_DATA_DIR, message rate
//      limit off (MACP_MESSAGE_LIMIT_PER_MINUTE=0) so seeding is not throttled.
//   2. Seed with real agents over gRPC (lib/agent): ~50 sessions for the list
//      and one handoff session with 1,000 events (scripts/bench/web-seed.ts).
//   3. Chromium (/usr/bin/chromium): 5 cold loads (fresh context, cache
//      disabled) of the list `/`, the inbox, and the session page at 1,000
//      and at 20,000 events: JS that finished before `load` as sent over the
//      wire (the server compresses it) and its gzip -9 equivalent, the HTML
//      as sent, first byte, first paint, LCP, content in place and live view
//      in place (tested every frame from navigation start); then, with the
//      1,000-event session page open and following the latest event, N more
//      envelopes one at a time: Ack at the agent → row in the DOM
//      (scripts/bench/web-page.ts).
//
// Options: --runs=5 --live=40 --spacing=100 --events=1000 --big-events=20000 (0: skip) --sessions=50
//          --settle=500 (ms after load + content before LCP is read)
//          --role=operator (the console user the browser signs in as)
//          --quiet-cores=0.5 --quiet-wait=15000 (before each phase, wait up
//          to that long for other processes to leave the CPUs mostly idle)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { CHROMIUM_PATH } from "../e2e/support/ports";
import { signIn, startApp, type RunningApp } from "./bench/web-app";
import {
  coldRun,
  clockOffset,
  openLiveSession,
  session as browserSession,
  wallNow,
  type ColdRun,
  type PageCondition,
} from "./bench/web-page";
import { agents, contextPayload, seedBigSession, seedList, waitForRuntime, type Agents } from "./bench/web-seed";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const benchStart = performance.now();

const argv = new Map(
  process.argv.slice(2).map((a) => {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`unrecognised argument ${a}`);
    return [m[1]!, m[2] ?? "true"] as const;
  }),
);
const num = (k: string, d: number): number => {
  const v = argv.has(k) ? Number(argv.get(k)) : d;
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${k} must be a non-negative number`);
  return v;
};
const opts = {
  runs: Math.max(1, Math.round(num("runs", 5))),
  live: Math.max(1, Math.round(num("live", 40))),
  spacingMs: num("spacing", 100),
  events: Math.max(10, Math.round(num("events", 1000))),
  bigEvents: Math.round(num("big-events", 20_000)),
  sessions: Math.max(1, Math.round(num("sessions", 50))),
  settleMs: num("settle", 500),
  /** Busy cores (all processes) under which a phase starts without waiting. */
  quietCores: num("quiet-cores", 0.5),
  /** Longest wait for quiet before each phase. */
  quietWaitMs: num("quiet-wait", 15_000),
  /** Console role of the signed-in bench user. */
  role: argv.get("role") ?? "operator",
};

// Issue 14's budgets: JS before `load` counted as sent, on every page.
const BUDGET = {
  jsSentKiB: 160,
  referenceRunPageKiB: 260,
  lcpMs: 550,
  firstByteMs: 80,
  liveAfterLoadMs: 500,
  ackToDomP95Ms: 100,
};

const CHROMIUM = CHROMIUM_PATH;
const LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"];

const log = (msg: string): void => {
  process.stderr.write(`[bench:web ${((performance.now() - benchStart) / 1000).toFixed(1)}s] ${msg}\n`);
};

// ---------------------------------------------------------------- quiet

/** Busy cores, machine-wide, over `ms` (from /proc/stat; NaN where unavailable). */
async function busyCores(ms: number): Promise<number> {
  const read = (): { busy: number; total: number } | null => {
    try {
      const f = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
      const idle = (f[3] ?? 0) + (f[4] ?? 0);
      const total = f.reduce((a, b) => a + b, 0);
      return { busy: total - idle, total };
    } catch {
      return null;
    }
  };
  const a = read();
  await new Promise((r) => setTimeout(r, ms));
  const b = read();
  if (!a || !b || b.total === a.total) return Number.NaN;
  return ((b.busy - a.busy) / (b.total - a.total)) * os.cpus().length;
}

/**
 * Before a measured phase: wait (bounded) until other processes leave the
 * CPUs mostly idle. Returns the last reading, for the report.
 */
async function waitForQuiet(label: string): Promise<number> {
  const deadline = performance.now() + opts.quietWaitMs;
  let busy = await busyCores(500);
  while (busy > opts.quietCores && performance.now() < deadline) busy = await busyCores(1_000);
  if (busy > opts.quietCores) log(`${label}: other processes keep ${busy.toFixed(2)} cores busy; measuring anyway`);
  return busy;
}

// ---------------------------------------------------------------- stats

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Nearest-rank percentile. */
function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

const kib = (b: number): number => b / 1024;
const f1 = (x: number | null | undefined): string => (x === null || x === undefined || Number.isNaN(x) ? "—" : x.toFixed(1));
const f0 = (x: number | null | undefined): string => (x === null || x === undefined || Number.isNaN(x) ? "—" : x.toFixed(0));

// ---------------------------------------------------------------- phases

interface PageSummary {
  runs: ColdRun[];
  jsSentKiB: number;
  jsGzipKiB: number;
  jsRawKiB: number;
  scripts: number;
  jsAfterLoadGzipKiB: number;
  htmlSentKiB: number;
  htmlGzipKiB: number;
  htmlRawKiB: number;
  firstByteMs: number;
  serverMs: number;
  firstPaintMs: number;
  fcpMs: number;
  lcpMs: number;
  loadMs: number;
  readyMs: number;
  liveMs: number;
  /** Live view in place, counted from `load` (median of per-run differences). */
  liveAfterLoadMs: number;
  lcpElement: string;
  serverCompressed: boolean;
  encodings: string;
}

const present = (xs: (number | null)[]): number[] => xs.filter((x): x is number => x !== null);

function summarize(runs: ColdRun[]): PageSummary {
  const byLcp = [...runs].filter((r) => r.lcpMs !== null).sort((a, b) => a.lcpMs! - b.lcpMs!);
  const enc = runs[0]?.scriptEncodings ?? {};
  return {
    runs,
    jsSentKiB: kib(median(runs.map((r) => r.jsSentBytes))),
    jsGzipKiB: kib(median(runs.map((r) => r.jsGzipBytes))),
    jsRawKiB: kib(median(runs.map((r) => r.jsRawBytes))),
    scripts: median(runs.map((r) => r.scriptsBeforeLoad)),
    jsAfterLoadGzipKiB: kib(median(runs.map((r) => r.jsAfterLoadGzipBytes))),
    htmlSentKiB: kib(median(runs.map((r) => r.htmlSentBytes))),
    htmlGzipKiB: kib(median(runs.map((r) => r.htmlGzipBytes))),
    htmlRawKiB: kib(median(runs.map((r) => r.htmlRawBytes))),
    firstByteMs: median(runs.map((r) => r.firstByteMs)),
    serverMs: median(runs.map((r) => r.serverMs)),
    firstPaintMs: median(present(runs.map((r) => r.firstPaintMs))),
    fcpMs: median(present(runs.map((r) => r.fcpMs))),
    lcpMs: median(present(runs.map((r) => r.lcpMs))),
    loadMs: median(runs.map((r) => r.loadMs)),
    readyMs: median(present(runs.map((r) => r.readyMs))),
    liveMs: median(present(runs.map((r) => r.liveMs))),
    liveAfterLoadMs: median(present(runs.map((r) => (r.liveMs === null ? null : r.liveMs - r.loadMs)))),
    lcpElement: byLcp[Math.floor(byLcp.length / 2)]?.lcpElement ?? "",
    serverCompressed: runs.some((r) => r.serverCompressed),
    encodings: Object.entries(enc)
      .map(([k, v]) => `${v} ${k}`)
      .join(", "),
  };
}

const background: Record<string, number> = {};

type Condition = Omit<PageCondition, "timeoutMs">;

async function coldRuns(browser: Browser, label: string, url: string, ready: Condition, live?: Condition): Promise<PageSummary> {
  background[label] = await waitForQuiet(label);
  const runs: ColdRun[] = [];
  for (let i = 0; i < opts.runs; i++) {
    const r = await coldRun(
      browser,
      url,
      { ...ready, timeoutMs: 20_000 },
      opts.settleMs,
      live ? { ...live, timeoutMs: 20_000 } : undefined,
    );
    if (r.failedScripts.length > 0)
      log(`WARNING ${label} run ${i + 1}: script errors (a concurrent rebuild of .next?): ${r.failedScripts.join(", ")}`);
    log(
      `${label} run ${i + 1}/${opts.runs}: JS ${f1(kib(r.jsSentBytes))} KiB sent / ${f1(kib(r.jsGzipBytes))} KiB gzip-eq. (${r.scriptsBeforeLoad} scripts), HTML ${f1(kib(r.htmlSentBytes))} KiB sent, first byte ${f0(r.firstByteMs)} ms, first paint ${f0(r.firstPaintMs)} ms, load ${f0(r.loadMs)} ms, LCP ${f0(r.lcpMs)} ms, content ${f0(r.readyMs)} ms${live ? `, live view ${f0(r.liveMs)} ms` : ""}`,
    );
    runs.push(r);
  }
  return summarize(runs);
}

interface LiveResult {
  sent: number;
  measured: number;
  missing: number;
  clockOffsetMs: number;
  clockUncertaintyMs: number;
  ackToDomMs: number[];
  ackToFrameMs: number[];
  sendToAckMs: number[];
  p50: number;
  p95: number;
  max: number;
  frameP50: number;
  frameP95: number;
  ackRttP50: number;
  /** Ack → first bytes of the event in the page's JS (server, gateway, network). */
  ackToPageP50: number;
  /** Those bytes → row in the DOM (client batching, fold, React). */
  pageToDomP50: number;
  pageToDomP95: number;
  /** Samples for which the split could be made. */
  split: number;
  /** Bytes in page → the commit that grows the timeline (fold, publish, render). */
  pageToCommitP50: number;
  /** That commit → the row element in the DOM (virtualizer range, follow scroll). */
  commitToDomP50: number;
  commitToDomP95: number;
  /** Main-thread frames > 50 ms during the live phase. */
  longFrames: number;
  longFrameP50: number;
  longFrameMax: number;
}

async function livePhase(
  browser: Browser,
  app: RunningApp,
  a: Agents,
  big: Awaited<ReturnType<typeof seedBigSession>>,
): Promise<LiveResult> {
  const live = await openLiveSession(browser, `${app.baseUrl}/sessions/${big.sessionId}`, big.events);
  try {
    const follow = await live.following();
    log(`live: page open, ${follow.rows} rows, scrollY ${follow.scrollY}, at bottom ${follow.atBottom}`);
    background.live = await waitForQuiet("live");
    const clock = await clockOffset(live.page);
    const acks: { messageId: string; sentAt: number; ackAt: number }[] = [];
    for (let i = 0; i < opts.live; i++) {
      const sentAt = wallNow();
      const ack = await big.owner.sendContext({ handoffId: big.handoffId, ...contextPayload(big.events + i) });
      const ackAt = wallNow();
      acks.push({ messageId: ack.messageId, sentAt, ackAt });
      await new Promise((r) => setTimeout(r, opts.spacingMs));
    }
    // Sequence of each live envelope, from the runtime's own history.
    const history = await a.client("agent://bench/big-alice").history(big.sessionId, { timeoutMs: 20_000 });
    const seqOf = new Map(history.map((h) => [h.envelope.messageId, h.sequence]));
    const lastSeq = Math.max(...acks.map((x) => seqOf.get(x.messageId) ?? 0));
    await live.page.waitForFunction((n) => document.getElementById(`e-${n}`) !== null, lastSeq, { timeout: 5_000 }).catch(() => undefined);
    await live.page.waitForTimeout(100);
    const rows = await live.rowTimes();
    const commits = (await live.commits()).map((c) => c.t - clock.offsetMs);
    const longFrames = (await live.longFrames()).filter((f) => f.t - clock.offsetMs >= (acks[0]?.sentAt ?? 0));
    // The session stream is the fetch body that carried the most bytes (its history).
    const chunks = await live.chunkTimes();
    const bytesBy = new Map<number, number>();
    for (const c of chunks) bytesBy.set(c.s, (bytesBy.get(c.s) ?? 0) + c.n);
    const sessionStream = [...bytesBy.entries()].sort((x, y) => y[1] - x[1])[0]?.[0];
    const arrivals = chunks.filter((c) => c.s === sessionStream).map((c) => c.t - clock.offsetMs);
    const dom: number[] = [];
    const frame: number[] = [];
    const toPage: number[] = [];
    const inPage: number[] = [];
    const toCommit: number[] = [];
    const commitToDom: number[] = [];
    let missing = 0;
    acks.forEach((x, i) => {
      const seq = seqOf.get(x.messageId);
      const t = seq !== undefined ? rows[String(seq)] : undefined;
      if (!t) {
        missing += 1;
        return;
      }
      // Page clock → this process's clock.
      const domAt = t.dom - clock.offsetMs;
      dom.push(domAt - x.ackAt);
      if (t.frame !== undefined) frame.push(t.frame - clock.offsetMs - x.ackAt);
      // First bytes of the session stream after this Send started (and
      // before the next one): the event reaching the page's JS.
      const until = acks[i + 1]?.sentAt ?? Number.POSITIVE_INFINITY;
      const arrived = arrivals.find((a) => a >= x.sentAt && a < until && a <= domAt);
      if (arrived !== undefined) {
        toPage.push(arrived - x.ackAt);
        inPage.push(domAt - arrived);
        // The React commit that grew the timeline for this event.
        const committed = commits.find((c) => c >= arrived && c <= domAt);
        if (committed !== undefined) {
          toCommit.push(committed - arrived);
          commitToDom.push(domAt - committed);
        }
      }
    });
    const rtt = acks.map((x) => x.ackAt - x.sentAt);
    return {
      sent: acks.length,
      measured: dom.length,
      missing,
      clockOffsetMs: clock.offsetMs,
      clockUncertaintyMs: clock.uncertaintyMs,
      ackToDomMs: dom,
      ackToFrameMs: frame,
      sendToAckMs: rtt,
      p50: pct(dom, 50),
      p95: pct(dom, 95),
      max: dom.length > 0 ? Math.max(...dom) : Number.NaN,
      frameP50: pct(frame, 50),
      frameP95: pct(frame, 95),
      ackRttP50: pct(rtt, 50),
      ackToPageP50: pct(toPage, 50),
      pageToDomP50: pct(inPage, 50),
      pageToDomP95: pct(inPage, 95),
      split: toPage.length,
      pageToCommitP50: pct(toCommit, 50),
      commitToDomP50: pct(commitToDom, 50),
      commitToDomP95: pct(commitToDom, 95),
      longFrames: longFrames.length,
      longFrameP50: pct(
        longFrames.map((f) => f.d),
        50,
      ),
      longFrameMax: longFrames.length > 0 ? Math.max(...longFrames.map((f) => f.d)) : 0,
    };
  } finally {
    await live.close();
  }
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const load0 = os.loadavg()[0]!;
  log(`starting the app with npm start (builds first when the UI changed)…`);
  const app = await startApp({
    root: ROOT,
    env: { MACP_MESSAGE_LIMIT_PER_MINUTE: "0", MACP_SESSION_START_LIMIT_PER_MINUTE: "0" },
    role: opts.role,
    onLine: (line) => {
      if (/baton: building|Compiled|next build. failed|Route \(app\)/.test(line)) log(`app: ${line}`);
    },
  });
  const measureStart = performance.now();
  log(
    `app ready on ${app.baseUrl} (gRPC ${app.grpcAddress}) after ${f1(app.readyMs / 1000)} s${app.built ? `, build + start ${f1(app.buildMs / 1000)} s` : ", no build needed"}`,
  );
  const a = agents(app.grpcAddress);
  let browser: Browser | undefined;
  const stopAll = async (): Promise<void> => {
    a.closeAll();
    await browser?.close().catch(() => undefined);
    await app.stop();
  };
  const onSignal = (): void => {
    void stopAll().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    await waitForRuntime(a);
    // Reads need a signed-in person by default: every browser context starts
    // with this session cookie.
    browserSession.origin = app.baseUrl;
    browserSession.cookies = await signIn(app);
    const t0 = performance.now();
    // `sessions` in all: the small ones plus the 1,000- and 20,000-event sessions.
    const listEnvelopes = await seedList(a, Math.max(1, opts.sessions - 1 - (opts.bigEvents > 0 ? 1 : 0)));
    const big = await seedBigSession(a, opts.events);
    const huge = opts.bigEvents > 0 ? await seedBigSession(a, opts.bigEvents) : null;
    const seedMs = performance.now() - t0;
    log(
      `seeded ${Math.max(1, opts.sessions - 1 - (opts.bigEvents > 0 ? 1 : 0))} sessions (${listEnvelopes} envelopes) + session ${big.sessionId} with ${big.events} events${huge ? ` + session ${huge.sessionId} with ${huge.events} events` : ""} in ${f1(seedMs / 1000)} s`,
    );

    // Warm the server (route modules, first render) with plain GETs so the
    // cold runs measure a cold browser, not the server's very first request.
    // A session page's first view after a start folds its history once (in
    // the background when it outlasts the page's budget): wait until the page
    // carries it, so the runs measure the steady state, and say how long that took.
    const cookieHeader = browserSession.cookies.map((c) => `${c.name}=${c.value}`).join("; ");
    const getHtml = async (u: string): Promise<string> =>
      (await fetch(u, { headers: { cookie: cookieHeader, accept: "text/html" } })).text();
    for (const u of [`${app.baseUrl}/`, `${app.baseUrl}/inbox`]) for (let i = 0; i < 2; i++) await getHtml(u);
    const firstViewReadyMs: Record<string, number | null> = {};
    for (const s of [big, huge]) {
      if (!s) continue;
      const started = performance.now();
      let ready: number | null = null;
      for (let i = 0; i < 60 && ready === null; i++) {
        if ((await getHtml(`${app.baseUrl}/sessions/${s.sessionId}`)).includes('data-testid="session-preview"'))
          ready = performance.now() - started;
        else await new Promise((r) => setTimeout(r, 250));
      }
      await getHtml(`${app.baseUrl}/sessions/${s.sessionId}`);
      firstViewReadyMs[s.events] = ready;
      log(
        `session of ${s.events} events: first view ${ready === null ? "never rendered (measuring without it)" : `rendered after ${f0(ready)} ms of warm-up`}`,
      );
    }
    // Server time to the first byte, without a browser: 20 sequential GETs per
    // page (after the warm-up), headers received, medians. Less noisy than 5
    // cold browser loads on a shared machine.
    const serverFirstByte: Record<string, { p50: number; p90: number }> = {};
    const ttfbPages: [string, string][] = [
      ["list /", `${app.baseUrl}/`],
      ["inbox", `${app.baseUrl}/inbox`],
      [`session ${big.events.toLocaleString("en-US")} ev`, `${app.baseUrl}/sessions/${big.sessionId}`],
      ...(huge
        ? ([[`session ${huge.events.toLocaleString("en-US")} ev`, `${app.baseUrl}/sessions/${huge.sessionId}`]] as [string, string][])
        : []),
    ];
    background.firstByte = await waitForQuiet("first byte");
    for (const [label, u] of ttfbPages) {
      const xs: number[] = [];
      for (let i = 0; i < 20; i++) {
        const t = performance.now();
        const res = await fetch(u, { headers: { cookie: cookieHeader, accept: "text/html", "accept-encoding": "gzip, br" } });
        xs.push(performance.now() - t);
        await res.arrayBuffer();
      }
      serverFirstByte[label] = { p50: pct(xs, 50), p90: pct(xs, 90) };
      log(`first byte ${label}: p50 ${f1(pct(xs, 50))} ms, p90 ${f1(pct(xs, 90))} ms (20 GETs)`);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS, headless: true });
    const version = browser.version();

    // Conditions are tested on every frame from navigation start: textContent
    // (no layout), not innerText.
    const listReady: Condition = {
      fn: (sessions) =>
        document.querySelectorAll("[data-testid=session-list] [data-row]").length > 0 &&
        new RegExp(`\\b${sessions} sessions\\b`).test(document.querySelector("[data-testid=list-count]")?.textContent ?? ""),
      arg: String(opts.sessions),
    };
    const inboxReady: Condition = {
      fn: () => document.querySelector("[data-testid=inbox-count], [data-testid=inbox-empty], [data-testid=inbox-item]") !== null,
      arg: "",
    };
    const sessionReady = (events: number): Condition => ({
      fn: (text) =>
        document.querySelectorAll("article[data-sequence]").length > 0 &&
        (document.body.textContent ?? "").includes(`${text} events`) &&
        !(document.body.textContent ?? "").includes("loading history"),
      arg: events.toLocaleString("en-US"),
    });
    // The server-rendered first view satisfies `sessionReady`; the live view
    // (virtualized timeline, its own stream caught up) replaces it after load.
    const sessionLive: Condition = {
      fn: () =>
        document.querySelector("[data-testid=timeline] article[data-sequence]") !== null &&
        !(document.body.textContent ?? "").includes("loading history"),
      arg: "",
    };
    const list = await coldRuns(browser, "list", `${app.baseUrl}/`, listReady);
    const inbox = await coldRuns(browser, "inbox", `${app.baseUrl}/inbox`, inboxReady);
    const session = await coldRuns(browser, "session", `${app.baseUrl}/sessions/${big.sessionId}`, sessionReady(big.events), sessionLive);
    const hugeSession = huge
      ? await coldRuns(
          browser,
          `session ${huge.events}`,
          `${app.baseUrl}/sessions/${huge.sessionId}`,
          sessionReady(huge.events),
          sessionLive,
        )
      : null;
    const live = await livePhase(browser, app, a, big);
    log(`live: ${live.measured}/${live.sent} rows measured, clock offset ${f1(live.clockOffsetMs)} ± ${f1(live.clockUncertaintyMs)} ms`);

    await stopAll();
    const measureMs = performance.now() - measureStart;
    const load1 = os.loadavg()[0]!;

    // ------------------------------------------------------------ report
    const pass = (ok: boolean): string => (ok ? "PASS" : "FAIL");
    const pages: [string, PageSummary][] = [
      ["list /", list],
      ["inbox", inbox],
      [`session ${big.events.toLocaleString("en-US")} ev`, session],
      ...(hugeSession && huge ? ([[`session ${huge.events.toLocaleString("en-US")} ev`, hugeSession]] as [string, PageSummary][]) : []),
    ];
    const cols = pages.map(([, p]) => p);
    const row = (label: string, cell: (p: PageSummary) => string, budget = "", result = ""): string[] => [
      label,
      ...cols.map(cell),
      budget,
      result,
    ];
    const allJsOk = cols.every((p) => p.jsSentKiB <= BUDGET.jsSentKiB);
    const allLcpOk = cols.every((p) => p.lcpMs <= BUDGET.lcpMs);
    const rows: string[][] = [
      ["metric", ...pages.map(([l]) => l), "budget", "result"],
      row(
        "JS before load, as sent (KiB)",
        (p) => f1(p.jsSentKiB),
        `≤ ${BUDGET.jsSentKiB} KiB each`,
        `${pass(allJsOk)} (${cols.map((p) => pass(p.jsSentKiB <= BUDGET.jsSentKiB)).join("/")})`,
      ),
      row("  content-encoding of those scripts", (p) => p.encodings || "—"),
      row("  JS before load, gzip -9 equivalent (KiB)", (p) => f1(p.jsGzipKiB)),
      row("  JS before load, uncompressed (KiB)", (p) => f1(p.jsRawKiB)),
      row("  scripts before load", (p) => f0(p.scripts)),
      row("  JS after load (lazy), gzip -9 eq. (KiB)", (p) => f1(p.jsAfterLoadGzipKiB)),
      row("HTML document, as sent (KiB)", (p) => f1(p.htmlSentKiB)),
      row("  HTML, gzip -9 eq. / uncompressed (KiB)", (p) => `${f1(p.htmlGzipKiB)} / ${f1(p.htmlRawKiB)}`),
      row(
        "first byte (ms from navigation)",
        (p) => f0(p.firstByteMs),
        `≤ ${BUDGET.firstByteMs} ms (session ${big.events.toLocaleString("en-US")})`,
        pass(session.firstByteMs <= BUDGET.firstByteMs),
      ),
      row("  request → first byte (server, ms)", (p) => f0(p.serverMs)),
      [
        "  first byte, 20 GETs without a browser, p50 / p90 (ms)",
        ...pages.map(([l]) => (serverFirstByte[l] ? `${f0(serverFirstByte[l].p50)} / ${f0(serverFirstByte[l].p90)}` : "—")),
        "",
        "",
      ],
      row("first paint / first contentful paint (ms)", (p) => `${f0(p.firstPaintMs)} / ${f0(p.fcpMs)}`),
      row(
        "LCP (ms)",
        (p) => f0(p.lcpMs),
        `≤ ${BUDGET.lcpMs} ms each`,
        `${pass(allLcpOk)} (${cols.map((p) => pass(p.lcpMs <= BUDGET.lcpMs)).join("/")})`,
      ),
      row("  load event (ms)", (p) => f0(p.loadMs)),
      row("  content in place (ms, every frame)", (p) => f0(p.readyMs)),
      row("live view in place (ms)", (p) => (p === session || p === hugeSession ? f0(p.liveMs) : f0(p.readyMs))),
      row(
        "  live view in place after load (ms)",
        (p) => (p === session || p === hugeSession ? f0(p.liveAfterLoadMs) : "—"),
        `≤ ${BUDGET.liveAfterLoadMs} ms (session ${big.events.toLocaleString("en-US")})`,
        pass(session.liveAfterLoadMs <= BUDGET.liveAfterLoadMs),
      ),
      [
        `acceptance → DOM p95 (ms, n=${live.measured}, session ${big.events.toLocaleString("en-US")})`,
        ...cols.map((p) => (p === session ? f1(live.p95) : "")),
        `≤ ${BUDGET.ackToDomP95Ms} ms`,
        pass(live.missing === 0 && live.p95 <= BUDGET.ackToDomP95Ms),
      ],
      [`  acceptance → DOM p50 / max (ms)`, ...cols.map((p) => (p === session ? `${f1(live.p50)} / ${f1(live.max)}` : "")), "", ""],
      [
        `  acceptance → next frame p50 / p95 (ms)`,
        ...cols.map((p) => (p === session ? `${f1(live.frameP50)} / ${f1(live.frameP95)}` : "")),
        "",
        "",
      ],
      [`  Ack → bytes in page p50 (ms)`, ...cols.map((p) => (p === session ? f1(live.ackToPageP50) : "")), "", ""],
      [
        `  bytes in page → DOM p50 / p95 (ms)`,
        ...cols.map((p) => (p === session ? `${f1(live.pageToDomP50)} / ${f1(live.pageToDomP95)}` : "")),
        "",
        "",
      ],
      [`  agent Send → Ack p50 (ms)`, ...cols.map((p) => (p === session ? f1(live.ackRttP50) : "")), "", ""],
      [
        `  frames > 50 ms while live: n / p50 / max (ms)`,
        ...cols.map((p) => (p === session ? `${live.longFrames} / ${f0(live.longFrameP50)} / ${f0(live.longFrameMax)}` : "")),
        "",
        "",
      ],
    ];
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
    const line = (r: string[]): string => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ");
    const out: string[] = [];
    out.push("");
    out.push(`Baton web bench: Chromium ${version} headless, ${opts.runs} cold runs per page (fresh context, cache off), medians`);
    out.push(
      `  ${opts.sessions} sessions listed; session pages: ${big.events}${huge ? ` and ${huge.events}` : ""} events; live: ${live.sent} envelopes spaced ${opts.spacingMs} ms; browser signed in as a console ${opts.role}`,
    );
    out.push(
      `  JS and HTML "as sent" = Resource/Navigation Timing encodedBodySize (the body as it came over the wire); "gzip -9 eq." = the decoded body gzipped at level 9; viewport 1440×900; LCP read after load + content in place + ${opts.settleMs} ms; server warmed with GETs per page`,
    );
    out.push(
      `  ${os.cpus().length} cores, load average ${load0.toFixed(2)} → ${load1.toFixed(2)}; busy cores just before each phase: ${Object.entries(
        background,
      )
        .map(([k, v]) => `${k} ${v.toFixed(2)}`)
        .join(", ")}`,
    );
    out.push("");
    out.push(line(rows[0]!));
    out.push(widths.map((w) => "-".repeat(w)).join("  "));
    for (const r of rows.slice(1)) out.push(line(r));
    out.push("");
    // Scripts before load, page by page; a chunk already listed for an earlier page is named only.
    const listed = new Set<string>();
    out.push(
      `scripts before load (as sent / gzip -9 eq. KiB, largest first; labels are string signatures, exact split: \`next analyze -o\`):`,
    );
    for (const [label, p] of pages.slice(0, 3)) {
      const run = p.runs[0];
      if (!run) continue;
      const shared: string[] = [];
      out.push(`  ${label}:`);
      for (const sc of [...run.scripts].sort((x, y) => y.sentBytes - x.sentBytes)) {
        const name = path.basename(new URL(sc.url).pathname);
        if (listed.has(name)) {
          shared.push(`${name} ${f1(kib(sc.sentBytes))}`);
          continue;
        }
        listed.add(name);
        out.push(
          `    ${f1(kib(sc.sentBytes)).padStart(6)} ${(sc.encoding || "identity").padEnd(8)} ${f1(kib(sc.gzipBytes)).padStart(6)}  ${name.padEnd(28)} ${sc.tags.join(", ")}`,
        );
      }
      if (shared.length > 0) out.push(`    (and, as above: ${shared.join(", ")})`);
    }
    out.push(`LCP element (median run): ${pages.map(([l, p]) => `${l}: ${p.lcpElement || "—"}`).join("; ")}`);
    out.push(`per-run LCP (ms): ${pages.map(([l, p]) => `${l}: ${p.runs.map((r) => f0(r.lcpMs)).join(", ")}`).join("; ")}`);
    out.push(`per-run first byte (ms): ${pages.map(([l, p]) => `${l}: ${p.runs.map((r) => f0(r.firstByteMs)).join(", ")}`).join("; ")}`);
    out.push(
      `first view warm-up (a session's first fold after the start): ${Object.entries(firstViewReadyMs)
        .map(([n, ms]) => `${n} events ${ms === null ? "never" : `${f0(ms)} ms`}`)
        .join(", ")}`,
    );
    if (live.missing > 0) out.push(`WARNING: ${live.missing} live rows never appeared in the DOM (follow-latest not engaged?)`);
    out.push(
      `setup: ${app.built ? `build + start ${f1(app.buildMs / 1000)} s (not counted)` : "no build needed"}, app ready ${f1(app.readyMs / 1000)} s; seeding ${f1(seedMs / 1000)} s; measured part ${f1(measureMs / 1000)} s`,
    );
    process.stdout.write(`${out.join("\n")}\n\n`);

    const pageJson = (p: PageSummary) => ({
      jsSentKiB: +p.jsSentKiB.toFixed(2),
      jsGzipKiB: +p.jsGzipKiB.toFixed(2),
      jsRawKiB: +p.jsRawKiB.toFixed(2),
      scriptEncodings: p.encodings,
      scriptsBeforeLoad: p.scripts,
      jsAfterLoadGzipKiB: +p.jsAfterLoadGzipKiB.toFixed(2),
      htmlSentKiB: +p.htmlSentKiB.toFixed(2),
      htmlGzipKiB: +p.htmlGzipKiB.toFixed(2),
      htmlRawKiB: +p.htmlRawKiB.toFixed(2),
      firstByteMs: +p.firstByteMs.toFixed(1),
      serverMs: +p.serverMs.toFixed(1),
      firstPaintMs: +p.firstPaintMs.toFixed(1),
      fcpMs: +p.fcpMs.toFixed(1),
      lcpMs: +p.lcpMs.toFixed(1),
      loadMs: +p.loadMs.toFixed(1),
      contentReadyMs: +p.readyMs.toFixed(1),
      liveViewReadyMs: +p.liveMs.toFixed(1),
      liveViewAfterLoadMs: +p.liveAfterLoadMs.toFixed(1),
      lcpElement: p.lcpElement,
      runs: p.runs.map((r) => ({
        jsSentBytes: r.jsSentBytes,
        jsGzipBytes: r.jsGzipBytes,
        firstByteMs: r.firstByteMs,
        lcpMs: r.lcpMs,
        loadMs: r.loadMs,
        readyMs: r.readyMs,
        liveMs: r.liveMs,
      })),
    });
    const blob = {
      bench: "web",
      chromium: version,
      options: opts,
      budgets: BUDGET,
      list: pageJson(list),
      inbox: pageJson(inbox),
      session: {
        events: big.events,
        ...pageJson(session),
        ratioToReferenceRunPage: +(session.jsSentKiB / BUDGET.referenceRunPageKiB).toFixed(3),
        scripts:
          session.runs[0]?.scripts.map((s) => ({
            file: new URL(s.url).pathname,
            sentBytes: s.sentBytes,
            encoding: s.encoding,
            gzipBytes: s.gzipBytes,
            rawBytes: s.rawBytes,
            tags: s.tags,
          })) ?? [],
      },
      ...(hugeSession && huge ? { sessionHuge: { events: huge.events, ...pageJson(hugeSession) } } : {}),
      firstViewWarmupMs: firstViewReadyMs,
      serverFirstByteMs: serverFirstByte,
      live: {
        sent: live.sent,
        measured: live.measured,
        missing: live.missing,
        ackToDomP50Ms: +live.p50.toFixed(2),
        ackToDomP95Ms: +live.p95.toFixed(2),
        ackToDomMaxMs: +live.max.toFixed(2),
        ackToNextFrameP50Ms: +live.frameP50.toFixed(2),
        ackToNextFrameP95Ms: +live.frameP95.toFixed(2),
        sendToAckP50Ms: +live.ackRttP50.toFixed(2),
        ackToPageBytesP50Ms: +live.ackToPageP50.toFixed(2),
        pageBytesToDomP50Ms: +live.pageToDomP50.toFixed(2),
        pageBytesToDomP95Ms: +live.pageToDomP95.toFixed(2),
        splitSamples: live.split,
        pageBytesToCommitP50Ms: +live.pageToCommitP50.toFixed(2),
        commitToDomP50Ms: +live.commitToDomP50.toFixed(2),
        commitToDomP95Ms: +live.commitToDomP95.toFixed(2),
        longAnimationFrames: live.longFrames,
        longAnimationFrameP50Ms: +live.longFrameP50.toFixed(1),
        longAnimationFrameMaxMs: +live.longFrameMax.toFixed(1),
        clockOffsetMs: +live.clockOffsetMs.toFixed(2),
        clockUncertaintyMs: +live.clockUncertaintyMs.toFixed(2),
        samplesMs: live.ackToDomMs.map((x) => +x.toFixed(2)),
      },
      pass: {
        jsSentEveryPage: allJsOk,
        lcpEveryPage: allLcpOk,
        sessionFirstByte: session.firstByteMs <= BUDGET.firstByteMs,
        sessionLiveAfterLoad: session.liveAfterLoadMs <= BUDGET.liveAfterLoadMs,
        ackToDomP95: live.missing === 0 && live.p95 <= BUDGET.ackToDomP95Ms,
      },
      setup: {
        built: app.built,
        buildAndStartMs: Math.round(app.buildMs),
        appReadyMs: Math.round(app.readyMs),
        seedMs: Math.round(seedMs),
      },
      measuredMs: Math.round(measureMs),
      machine: {
        cores: os.cpus().length,
        loadAverage1m: [+load0.toFixed(2), +load1.toFixed(2)],
        busyCoresBeforePhase: Object.fromEntries(Object.entries(background).map(([k, v]) => [k, +v.toFixed(2)])),
      },
    };
    process.stdout.write(`${JSON.stringify(blob)}\n`);
  } catch (e) {
    log(`failed: ${(e as Error).stack ?? String(e)}`);
    log(`app log tail:\n${app.logTail()}`);
    await stopAll();
    process.exitCode = 1;
  }
}

await main();
