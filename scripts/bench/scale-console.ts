// Console section of `npm run bench:scale`, for one history size: the console
// (lib/server/main.ts --no-ui, in its own process) against the seeded runtime
// as an external runtime (MACP_RUNTIME_URL, an observer identity):
// - cold start: a fresh catalog, so the first start fills it in the
//   background (from the runtime's list rows: no history is read);
//   spawn → first ListSessionPage rows, spawn → catalog complete, the
//   console's RSS (peak while it fills, and settled after it);
// - warm start on that catalog: spawn → first rows, and RSS;
// - one search (a session's intent words): the catalog query itself (the same
//   SqliteCatalog.page on the console's file, in this process) and the
//   ListSessionPage round trip on loopback;
// - four never-reading SubscribeSession browser streams on the large session
//   through the console: its RSS before, while they are connected, and after
//   they leave.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ConsoleService } from "@/lib/gen/baton/v1/console_pb";
import { SqliteCatalog } from "@/lib/gateway/catalog/sqlite";
import { SERVER_ENV, SERVER_NODE_FLAGS } from "../server-flags.mjs";
import { fmt, fmtInt, median, mib, rssOf, sleep, table, verdict, type ScaleContext, type ScaleSection } from "./scale-common";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const OBSERVER = "bench:console";
const STREAMS = 4;
const CONNECTED_MS = 8_000;
const AFTER_LEAVE_MAX_MS = 90_000;

export interface ConsoleScaleResult {
  cold: { firstRowsMs: number; backfillMs: number; peakRssBytes: number; settledRssBytes: number; readsStarted: number | null };
  warm: { firstRowsMs: number; settledMs: number; rssBytes: number };
  search: { text: string; rows: number; total: number; queryMs: number; roundTripMs: number };
  streams: {
    count: number;
    baselineBytes: number;
    peakBytes: number;
    afterLeaveBytes: number;
    growthBytes: number;
    backWithinMs: number | null;
    cutOff: number;
  };
}

export interface ConsoleProcess {
  url: string;
  pid: number;
  lines: string[];
  stop(): Promise<void>;
}

/**
 * The console against `runtimeUrl` as its observer, catalog in `dataDir`, run as `npm start` runs
 * it; `command` is what follows the Node flags: by default lib/server/main.ts --no-ui through tsx
 * (the web section passes the compiled server, .baton/server/main.mjs, with its UI).
 */
export async function startConsole(
  runtimeUrl: string,
  dataDir: string,
  t0: number,
  command: string[] = ["--import", "tsx", path.join(ROOT, "lib", "server", "main.ts"), "--no-ui"],
): Promise<ConsoleProcess> {
  const child: ChildProcess = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...command], {
    cwd: ROOT,
    env: {
      // As `npm start` runs it (scripts/start.mjs).
      ...SERVER_ENV,
      ...process.env,
      NODE_ENV: "production",
      PORT: "0",
      LOG_LEVEL: "info",
      MACP_RUNTIME_URL: runtimeUrl,
      MACP_RUNTIME_TOKEN: OBSERVER,
      BATON_DATA_DIR: dataDir,
      BATON_REQUIRE_SIGN_IN: "0",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error("console did not listen within 120 s")), 120_000);
    child.stdout?.on("data", (d: Buffer) => {
      buf += d.toString();
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        lines.push(line);
        if (lines.length > 2_000) lines.splice(0, 1_000);
        try {
          const j = JSON.parse(line) as { msg?: string; console?: string };
          if (j.msg?.startsWith("Baton console on") && j.console) {
            clearTimeout(timer);
            resolve(j.console);
          }
        } catch {
          // not JSON
        }
      }
    });
    child.once("exit", (code) => reject(new Error(`console exited with ${code}: ${stderr.slice(-2000)}`)));
  });
  void t0;
  return {
    url,
    pid: child.pid as number,
    lines,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const force = setTimeout(() => child.kill("SIGKILL"), 30_000);
        child.once("exit", () => {
          clearTimeout(force);
          resolve();
        });
        child.kill("SIGTERM");
      }),
  };
}

const clientOf = (url: string) => createClient(ConsoleService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));

/** Poll ListSessionPage until it returns rows; ms since t0. */
async function firstRows(url: string, t0: number): Promise<number> {
  const c = clientOf(url);
  for (;;) {
    try {
      const page = await c.listSessionPage({ limit: 50 });
      if (page.sessions.length > 0) return performance.now() - t0;
    } catch {
      // not ready yet
    }
    await sleep(20);
  }
}

/** Wait until the catalog holds every session, caught up; returns ms since t0 and the peak RSS seen. */
export async function backfilled(p: ConsoleProcess, sessions: number, t0: number): Promise<{ ms: number; peak: number }> {
  const c = clientOf(p.url);
  let peak = 0;
  for (;;) {
    peak = Math.max(peak, rssOf(p.pid));
    const page = await c.listSessionPage({ limit: 1 });
    const st = page.status;
    if (st && !st.backfilling && Number(st.sessionsKnown) >= sessions) return { ms: performance.now() - t0, peak };
    await sleep(250);
  }
}

/** SubscribeSessionRequest{session_id} in protobuf, framed as a Connect stream message. */
function subscribeFrame(sessionId: string): Buffer {
  const id = Buffer.from(sessionId);
  const msg = Buffer.concat([Buffer.from([0x0a, id.length]), id]);
  const frame = Buffer.alloc(5 + msg.length);
  frame.writeUInt32BE(msg.length, 1);
  msg.copy(frame, 5);
  return frame;
}

/** A browser's SubscribeSession (binary Connect, as lib/client/transport.ts speaks it) that never reads. */
function neverReading(url: string, sessionId: string): { req: http.ClientRequest; agent: http.Agent; closed: Promise<void> } {
  const agent = new http.Agent({ keepAlive: false });
  const req = http.request(`${url}/baton.v1.ConsoleService/SubscribeSession`, {
    method: "POST",
    agent,
    headers: { "content-type": "application/connect+proto", "connect-protocol-version": "1" },
  });
  const closed = new Promise<void>((resolve) => {
    req.on("response", (res) => {
      res.pause();
      res.socket.once("close", () => resolve());
    });
    req.on("error", () => resolve());
  });
  req.end(subscribeFrame(sessionId));
  return { req, agent, closed };
}

/** The process's RSS once it moved by less than 2 MiB over 3 s (sampled every 250 ms), or after `maxMs`. */
async function steadyRss(pid: number, maxMs: number): Promise<number> {
  const window: number[] = [];
  const until = performance.now() + maxMs;
  for (;;) {
    window.push(rssOf(pid));
    if (window.length > 12) window.shift();
    if (window.length === 12 && Math.max(...window) - Math.min(...window) < 2 * 1_048_576) return window.at(-1)!;
    if (performance.now() > until) return window.at(-1)!;
    await sleep(250);
  }
}

export const consoleSection: ScaleSection<ConsoleScaleResult> = {
  name: "console",

  async measure(ctx: ScaleContext): Promise<ConsoleScaleResult> {
    const rt = await ctx.startRuntime({ MACP_DEV_OBSERVERS: OBSERVER });
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-bench-console-"));
    try {
      // Cold: fresh catalog, filled in the background from the runtime's list rows.
      let t0 = performance.now();
      let p = await startConsole(rt.url, dataDir, t0);
      const coldFirst = await firstRows(p.url, t0);
      const fill = await backfilled(p, ctx.sessions, t0);
      await sleep(2_000);
      const coldSettled = rssOf(p.pid);
      ctx.say(
        `  cold start: first rows after ${fmtInt(coldFirst)} ms; catalog complete after ${fmt(fill.ms / 1000, 1)} s; RSS peak ${mib(fill.peak)}, settled ${mib(coldSettled)}`,
      );
      await p.stop();

      // Warm: the same catalog.
      t0 = performance.now();
      p = await startConsole(rt.url, dataDir, t0);
      const warmFirst = await firstRows(p.url, t0);
      const warmSettled = (await backfilled(p, ctx.sessions, t0)).ms;
      await sleep(2_000);
      const warmRss = rssOf(p.pid);
      ctx.say(`  warm start: first rows after ${fmtInt(warmFirst)} ms; caught up after ${fmtInt(warmSettled)} ms; RSS ${mib(warmRss)}`);

      // One search: the catalog query on the console's own file, and the RPC round trip.
      const n = Math.floor(ctx.sessions / 2) + 7;
      const text = `on-call (${n})`;
      const catalog = new SqliteCatalog({ path: path.join(dataDir, "console.sqlite") });
      const query = { participant: "", text: text.toLowerCase(), sort: "activity" as const, ascending: false };
      const queryRuns: number[] = [];
      let found = { rows: 0, total: 0 };
      for (let i = 0; i < 7; i++) {
        const q0 = performance.now();
        const page = catalog.page(query, 0, 100);
        queryRuns.push(performance.now() - q0);
        found = { rows: page.rows.length, total: page.total };
      }
      catalog.close();
      const c = clientOf(p.url);
      const rpcRuns: number[] = [];
      for (let i = 0; i < 7; i++) {
        const q0 = performance.now();
        await c.listSessionPage({ query: { text }, limit: 100 });
        rpcRuns.push(performance.now() - q0);
      }
      const search = { text, rows: found.rows, total: found.total, queryMs: median(queryRuns), roundTripMs: median(rpcRuns) };
      ctx.say(
        `  search "${text}": ${search.total} match(es); catalog query ${fmt(search.queryMs, 2)} ms (median of 7), ListSessionPage round trip ${fmt(search.roundTripMs, 1)} ms`,
      );

      // Four never-reading browser streams on the large session, once the console's RSS is
      // steady (within 2 MiB over 3 s, at most 60 s): after a warm start it still follows the
      // open sessions for a while, and that growth is not the streams'.
      const settle0 = performance.now();
      const baseline = await steadyRss(p.pid, 60_000);
      ctx.say(`  RSS steady at ${mib(baseline)} after ${fmt((performance.now() - settle0) / 1000, 1)} s`);
      const streams = Array.from({ length: STREAMS }, () => neverReading(p.url, ctx.bigSessionId));
      let peak = baseline;
      const until = performance.now() + CONNECTED_MS;
      while (performance.now() < until) {
        peak = Math.max(peak, rssOf(p.pid));
        await sleep(100);
      }
      for (const s of streams) {
        s.req.destroy();
        s.agent.destroy();
      }
      const left = performance.now();
      let after = rssOf(p.pid);
      let backWithinMs: number | null = null;
      while (performance.now() - left < AFTER_LEAVE_MAX_MS) {
        after = rssOf(p.pid);
        if (after <= baseline * 1.1) {
          backWithinMs = performance.now() - left;
          break;
        }
        await sleep(250);
      }
      const result: ConsoleScaleResult = {
        cold: { firstRowsMs: coldFirst, backfillMs: fill.ms, peakRssBytes: fill.peak, settledRssBytes: coldSettled, readsStarted: null },
        warm: { firstRowsMs: warmFirst, settledMs: warmSettled, rssBytes: warmRss },
        search,
        streams: {
          count: STREAMS,
          baselineBytes: baseline,
          peakBytes: peak,
          afterLeaveBytes: after,
          growthBytes: peak - baseline,
          backWithinMs,
          cutOff: 0,
        },
      };
      ctx.say(
        `  ${STREAMS} never-reading SubscribeSession streams on the ${mib(ctx.bigSessionBytes)} session: RSS ${mib(baseline)} → ${mib(peak)} (+${fmt((peak - baseline) / 1_048_576, 1)} MiB) → ${mib(after)}` +
          (backWithinMs === null ? " (not back within 10%)" : ` (${fmt(backWithinMs / 1000, 1)} s after they left)`),
      );
      await p.stop();
      return result;
    } finally {
      await rt.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  },

  report(results, say) {
    say("Console (external runtime, catalog in a fresh data folder; RSS of the console process):");
    say(
      table(
        [
          "sessions (open)",
          "cold: first rows",
          "cold: catalog complete",
          "RSS peak / settled",
          "warm: first rows",
          "warm RSS",
          "search: query / round trip",
          "4 never-reading streams: RSS before → peak → after",
        ],
        results.map(({ sessions, open, result: r }) => [
          `${fmtInt(sessions)} (${fmtInt(open)})`,
          `${fmtInt(r.cold.firstRowsMs)} ms`,
          `${fmt(r.cold.backfillMs / 1000, 1)} s`,
          `${mib(r.cold.peakRssBytes)} / ${mib(r.cold.settledRssBytes)}`,
          `${fmtInt(r.warm.firstRowsMs)} ms`,
          mib(r.warm.rssBytes),
          `${fmt(r.search.queryMs, 2)} / ${fmt(r.search.roundTripMs, 1)} ms`,
          `${mib(r.streams.baselineBytes)} → ${mib(r.streams.peakBytes)} (+${fmt(r.streams.growthBytes / 1_048_576, 1)}) → ${mib(r.streams.afterLeaveBytes)}`,
        ]),
      ),
    );
    const last = results.at(-1)?.result;
    if (last) {
      const maxRss = Math.max(last.cold.peakRssBytes, last.warm.rssBytes);
      say(`  console RSS ≤ 300 MB at the largest size: ${mib(maxRss)} peak, ${verdict(maxRss <= 300 * 1_000_000)}`);
      say(`  search ≤ 200 ms on the server: ${fmt(last.search.queryMs, 2)} ms, ${verdict(last.search.queryMs <= 200)}`);
      say(
        `  never-reading streams add ≤ 64 MB: +${fmt(last.streams.growthBytes / 1_000_000, 1)} MB, ${verdict(last.streams.growthBytes <= 64_000_000)}; back within 10%: ${verdict(last.streams.backWithinMs !== null)}`,
      );
    }
    return results;
  },
};
