// bench:web's measured phases: cold loads of a page in fresh browser
// contexts (summarised as medians) and the live phase, envelopes sent one at
// a time to an open session page, each timed from its Ack to its row in the
// DOM and split where the page's clock allows.
import type { Browser } from "playwright-core";
import type { RunningApp } from "./web-app";
import { wallNow } from "./web-browser";
import { clockOffset, openLiveSession } from "./web-live";
import { coldRun, type ColdRun, type PageCondition } from "./web-page";
import { contextPayload, type Agents, type seedBigSession } from "./web-seed";
import { log, opts } from "./web-options";
import { f0, f1, kib, median, pct, waitForQuiet } from "./web-stats";

export interface PageSummary {
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

/** Busy cores just before each phase, for the report. */
export const background: Record<string, number> = {};

export type Condition = Omit<PageCondition, "timeoutMs">;

const after = (t: number | null, load: number): number | null => (t === null ? null : t - load);

export async function coldRuns(browser: Browser, label: string, url: string, ready: Condition, live?: Condition): Promise<PageSummary> {
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
      `${label} run ${i + 1}/${opts.runs}: JS ${f1(kib(r.jsSentBytes))} KiB sent / ${f1(kib(r.jsGzipBytes))} KiB gzip-eq. (${r.scriptsBeforeLoad} scripts), HTML ${f1(kib(r.htmlSentBytes))} KiB sent, first byte ${f0(r.firstByteMs)} ms, first paint ${f0(r.firstPaintMs)} ms, load ${f0(r.loadMs)} ms, LCP ${f0(r.lcpMs)} ms, content ${f0(r.readyMs)} ms${live ? `, live view ${f0(r.liveMs)} ms (after load: live code asked +${f0(after(r.lateScriptStartMs, r.loadMs))}, in +${f0(after(r.lateScriptEndMs, r.loadMs))}, stream asked +${f0(after(r.streamAskedMs, r.loadMs))}, in place +${f0(after(r.liveMs, r.loadMs))} ms; late scripts ${r.lateScripts.map((x) => `${x.file} +${f0(x.startMs - r.loadMs)}..+${f0(x.endMs - r.loadMs)} ${f1(kib(x.gzipBytes))} KiB`).join(", ")})` : ""}`,
    );
    if (process.env.BENCH_LCP_TRACE === "1")
      for (const c of r.lcpCandidates)
        log(`  LCP candidate at ${f0(c.ms)} ms, ${f0(c.size)} px²: ${c.el}${c.connected ? "" : " (since removed from the page)"}`);
    for (const line of r.consoleLines) log(`  console ${line}`);
    if (live && process.env.BENCH_LONG_FRAMES === "1")
      for (const f of r.longFrames)
        log(
          `  long frame at ${f0(f.startMs - r.loadMs)} ms after load: ${f0(f.durationMs)} ms (render ${f0(f.renderMs)}): ${f.scripts.join("; ")}`,
        );
    runs.push(r);
  }
  return summarize(runs);
}

export interface LiveResult {
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

export async function livePhase(
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
