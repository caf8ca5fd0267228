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
//      (scripts/bench/web-page.ts, web-live.ts).
//
// Options: see scripts/bench/web-options.ts. The phases are in
// scripts/bench/web-phases.ts and the report in scripts/bench/web-report.ts.
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser } from "playwright-core";
import { CHROMIUM_PATH } from "../e2e/support/ports";
import { signIn, startApp } from "./bench/web-app";
import { LAUNCH_ARGS, session as browserSession } from "./bench/web-browser";
import { agents, seedBigSession, seedList, waitForRuntime } from "./bench/web-seed";
import { log, opts } from "./bench/web-options";
import { background, coldRuns, livePhase, type Condition } from "./bench/web-phases";
import { printReport } from "./bench/web-report";
import { f0, f1, pct, waitForQuiet } from "./bench/web-stats";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const CHROMIUM = CHROMIUM_PATH;

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
    // In place means shown: not still in the hidden copy a streamed Suspense
    // boundary waits in before it is revealed.
    const listReady: Condition = {
      fn: (sessions) => {
        const row = document.querySelector("[data-testid=session-list] [data-row]");
        return (
          row !== null &&
          row.closest("[hidden]") === null &&
          new RegExp(`\\b${sessions} sessions\\b`).test(document.querySelector("[data-testid=list-count]")?.textContent ?? "")
        );
      },
      arg: String(opts.sessions),
    };
    const inboxReady: Condition = {
      // What waits (or that nothing does) is shown; the count line alone is there while loading too.
      fn: () => {
        const el = document.querySelector("[data-testid=inbox-empty], [data-testid=inbox-item]");
        return el !== null && el.closest("[hidden]") === null;
      },
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

    printReport({
      version,
      list,
      inbox,
      session,
      hugeSession,
      big,
      huge,
      live,
      serverFirstByte,
      firstViewReadyMs,
      load0,
      load1,
      app,
      seedMs,
      measureMs,
    });
  } catch (e) {
    log(`failed: ${(e as Error).stack ?? String(e)}`);
    log(`app log tail:\n${app.logTail()}`);
    await stopAll();
    process.exitCode = 1;
  }
}

await main();
