// bench:web's report: the table of every page against the budgets, the
// scripts loaded before `load`, per-run figures, and the final JSON blob.
import os from "node:os";
import path from "node:path";
import type { RunningApp } from "./web-app";
import { BUDGET, opts } from "./web-options";
import { background, type LiveResult, type PageSummary } from "./web-phases";
import { f0, f1, kib } from "./web-stats";

/** What one run of the bench measured. */
export interface WebRun {
  /** Chromium's version. */
  version: string;
  list: PageSummary;
  inbox: PageSummary;
  session: PageSummary;
  hugeSession: PageSummary | null;
  big: { events: number };
  huge: { events: number } | null;
  live: LiveResult;
  serverFirstByte: Record<string, { p50: number; p90: number }>;
  firstViewReadyMs: Record<string, number | null>;
  /** 1-minute load average before and after. */
  load0: number;
  load1: number;
  app: RunningApp;
  seedMs: number;
  measureMs: number;
}

/** Print the report, then the JSON blob, to stdout. */
export function printReport(r: WebRun): void {
  const {
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
  } = r;
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
}
