// Runtime section of `npm run bench:scale`, for one history size:
// - restart: spawn to listening (five restarts, median), what the kernel read
//   (resident sessions, index rows, records) and the runtime's RSS once idle;
// - the same restart with MACP_STORE_INTEGRITY_CHECK=always, to show what a
//   full PRAGMA quick_check costs at this size (it runs at open only when the
//   file may have changed since the last verified clean shutdown);
// - four StreamSession subscribers that subscribe to the large session from
//   its start and never read: the runtime's RSS before, while they are
//   connected, and after they leave.
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  fmt,
  median,
  mib,
  sleep,
  table,
  verdict,
  type ScaleContext,
  type ScaleSection,
  type SubscriberCommand,
  type SubscriberReply,
} from "./scale-common";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const RESTARTS = 5;
const SETTLE_MS = 2_000;
const CONNECTED_MS = 5_000;
/**
 * After the subscribers leave, what they held is garbage: the runtime keeps no
 * reference, and V8 frees it (the 1 MB buffers included) at its next major
 * collection, which an idle process reaches on its own within about a minute.
 * The RSS is watched until it is back within 10% of the baseline (or this
 * long), and the time that took is reported.
 */
const AFTER_LEAVE_MAX_MS = 90_000;
const SUBSCRIBERS = 4;

export interface RuntimeScaleResult {
  restartMs: number;
  restartRunsMs: number[];
  /** CPU time of the runtime process from spawn to listening (median run). */
  restartCpuMs: number;
  /** Store open + kernel load, from the runtime's own log (median run). */
  kernelLoadMs: number;
  resident: number;
  indexRowsRead: number;
  recordsRead: number;
  quickCheck: string;
  rssAfterRestartBytes: number;
  forcedCheck: { restartMs: number; quickCheck: string };
  subscribers: {
    count: number;
    baselineBytes: number;
    peakConnectedBytes: number;
    afterLeaveBytes: number;
    growthBytes: number;
    afterLeaveOverBaseline: number;
    /** Time from the subscribers leaving to RSS back within 10% of the baseline (null: not within AFTER_LEAVE_MAX_MS). */
    backWithinMs: number | null;
  };
}

class SubscriberChild {
  private nextId = 1;
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<SubscriberChild> {
    const child = fork(path.join(HERE, "scale-subscribers.ts"), [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    await new Promise<void>((resolve, reject) => {
      child.once("message", (m: SubscriberReply) => (m.type === "ready" ? resolve() : reject(new Error("unexpected reply"))));
      child.once("exit", (code) => reject(new Error(`subscriber child exited with ${code}`)));
    });
    return new SubscriberChild(child);
  }

  call(cmd: Omit<Extract<SubscriberCommand, { type: "subscribe" }>, "id"> | { type: "leave" }): Promise<SubscriberReply> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onMessage = (m: SubscriberReply) => {
        if (!("id" in m) || m.id !== id) return;
        this.child.off("message", onMessage);
        if (m.type === "failed") reject(new Error(m.error));
        else resolve(m);
      };
      this.child.on("message", onMessage);
      this.child.send({ ...cmd, id });
    });
  }

  close(): void {
    this.child.send({ type: "exit", id: 0 });
  }
}

async function sampleFor(ms: number, read: () => number): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    out.push(read());
    await sleep(100);
  }
  return out;
}

export const runtimeSection: ScaleSection<RuntimeScaleResult> = {
  name: "runtime",

  async measure(ctx: ScaleContext): Promise<RuntimeScaleResult> {
    const runs: {
      ms: number;
      cpuMs: number;
      load: number;
      resident: number;
      indexRows: number;
      records: number;
      rss: number;
      quickCheck: string;
    }[] = [];
    let rt = null;
    for (let i = 0; i < RESTARTS; i++) {
      rt = await ctx.startRuntime();
      await sleep(SETTLE_MS);
      const l = rt.load;
      runs.push({
        ms: rt.listeningMs,
        cpuMs: rt.listeningCpuMs,
        load: l?.ms ?? NaN,
        resident: l?.resident ?? NaN,
        indexRows: l?.indexRows ?? NaN,
        records: l?.records ?? NaN,
        rss: rt.rss(),
        quickCheck: rt.quickCheck,
      });
      ctx.say(
        `  restart ${i + 1}: listening after ${fmt(rt.listeningMs, 0)} ms (${fmt(rt.listeningCpuMs, 0)} ms CPU), kernel load ${l?.ms} ms, RSS ${mib(rt.rss())}, ${l?.resident} resident, quick_check ${rt.quickCheck}`,
      );
      if (i < RESTARTS - 1) await rt.stop();
    }
    if (!rt) throw new Error("no runtime");
    const mid = [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)] as (typeof runs)[number];

    // Four never-reading subscribers on the large session.
    const subs = await SubscriberChild.start();
    let subscribers: RuntimeScaleResult["subscribers"];
    try {
      const baseline = median(await sampleFor(1_000, () => rt.rss()));
      await subs.call({ type: "subscribe", url: rt.url, identity: ctx.readerIdentity, sessionId: ctx.bigSessionId, count: SUBSCRIBERS });
      const connected = await sampleFor(CONNECTED_MS, () => rt.rss());
      await subs.call({ type: "leave" });
      const left = performance.now();
      const recent: number[] = [];
      let backWithinMs: number | null = null;
      while (performance.now() - left < AFTER_LEAVE_MAX_MS) {
        await sleep(250);
        recent.push(rt.rss());
        if (recent.length > 4) recent.shift();
        if (performance.now() - left >= 2_000 && median(recent) <= baseline * 1.1) {
          backWithinMs = performance.now() - left;
          break;
        }
      }
      const afterLeave = median(recent);
      const peak = Math.max(...connected);
      subscribers = {
        count: SUBSCRIBERS,
        baselineBytes: baseline,
        peakConnectedBytes: peak,
        afterLeaveBytes: afterLeave,
        growthBytes: peak - baseline,
        afterLeaveOverBaseline: afterLeave / baseline,
        backWithinMs,
      };
      ctx.say(
        `  ${SUBSCRIBERS} stalled subscribers: baseline ${mib(baseline)}, peak ${mib(peak)}, after leaving ${mib(afterLeave)} ` +
          (backWithinMs === null
            ? `(not back within ${AFTER_LEAVE_MAX_MS / 1000} s)`
            : `(within 10% after ${fmt(backWithinMs / 1000, 1)} s)`),
      );
    } finally {
      subs.close();
      await rt.stop();
    }

    const forced = await ctx.startRuntime({ MACP_STORE_INTEGRITY_CHECK: "always" });
    const forcedCheck = { restartMs: forced.listeningMs, quickCheck: forced.quickCheck };
    ctx.say(
      `  restart with MACP_STORE_INTEGRITY_CHECK=always: listening after ${fmt(forced.listeningMs, 0)} ms, quick_check ${forced.quickCheck}`,
    );
    await forced.stop();

    return {
      restartMs: median(runs.map((r) => r.ms)),
      restartRunsMs: runs.map((r) => Math.round(r.ms)),
      restartCpuMs: median(runs.map((r) => r.cpuMs)),
      kernelLoadMs: mid.load,
      resident: mid.resident,
      indexRowsRead: mid.indexRows,
      recordsRead: mid.records,
      quickCheck: mid.quickCheck,
      rssAfterRestartBytes: median(runs.map((r) => r.rss)),
      forcedCheck,
      subscribers,
    };
  },

  report(results, say) {
    say('Runtime: restart (spawn of lib/runtime/main.ts under tsx → "listening" log line; median of 5; CPU time of the runtime');
    say("process up to then, which other load on the machine does not inflate) and idle RSS after it;");
    say("four StreamSession subscribers on the large session that never read (each on its own HTTP/2 connection).");
    say("");
    say(
      table(
        [
          "sessions",
          "open",
          "restart ms",
          "restart CPU ms",
          "kernel load ms",
          "resident",
          "index rows read",
          "records read",
          "RSS after restart",
          "forced quick_check restart ms",
          "stalled subs: RSS before",
          "peak connected",
          "after leaving (time back)",
        ],
        results.map(({ sessions, open, result: r }) => [
          sessions.toLocaleString("en-US"),
          open.toLocaleString("en-US"),
          fmt(r.restartMs, 0),
          fmt(r.restartCpuMs, 0),
          fmt(r.kernelLoadMs, 0),
          r.resident,
          r.indexRowsRead,
          r.recordsRead,
          mib(r.rssAfterRestartBytes),
          `${fmt(r.forcedCheck.restartMs, 0)} (${r.forcedCheck.quickCheck.replace(/:.*$/, "")})`,
          mib(r.subscribers.baselineBytes),
          `${mib(r.subscribers.peakConnectedBytes)} (+${fmt(r.subscribers.growthBytes / 1_048_576, 1)})`,
          `${mib(r.subscribers.afterLeaveBytes)} (${fmt((r.subscribers.afterLeaveOverBaseline - 1) * 100, 1)}%, ${r.subscribers.backWithinMs === null ? "not back" : `${fmt(r.subscribers.backWithinMs / 1000, 1)} s`})`,
        ]),
      ),
    );
    const small = results[0];
    const large = results[results.length - 1];
    const targets: Record<string, unknown> = {};
    if (small && large && large !== small) {
      const restartRatio = large.result.restartMs / small.result.restartMs;
      const rssRatio = large.result.rssAfterRestartBytes / small.result.rssAfterRestartBytes;
      const loadRatio = large.result.kernelLoadMs / Math.max(1, small.result.kernelLoadMs);
      const cpuRatio = large.result.restartCpuMs / small.result.restartCpuMs;
      say("");
      say(
        `Targets at ${large.sessions.toLocaleString("en-US")} sessions (reference: ${small.sessions.toLocaleString("en-US")} sessions, same run):`,
      );
      say(
        `  restart time ≤ 1.5× the reference: ${fmt(restartRatio, 2)}× → ${verdict(restartRatio <= 1.5)} ` +
          `(restart CPU time: ${fmt(cpuRatio, 2)}×; kernel load alone, which grows with the open sessions: ${fmt(loadRatio, 2)}×)`,
      );
      say(`  RSS after restart ≤ 1.5× the reference: ${fmt(rssRatio, 2)}× → ${verdict(rssRatio <= 1.5)}`);
      say(
        `  runtime RSS ≤ 250 MB: ${mib(large.result.rssAfterRestartBytes)} → ${verdict(large.result.rssAfterRestartBytes <= 250 * 1_048_576)}`,
      );
      Object.assign(targets, { restartRatio, restartCpuRatio: cpuRatio, rssRatio, kernelLoadRatio: loadRatio });
    }
    for (const { sessions, result: r } of results) {
      const s = r.subscribers;
      say(
        `  ${sessions.toLocaleString("en-US")}: ${s.count} never-reading subscribers add ≤ 64 MB: +${fmt(s.growthBytes / 1_048_576, 1)} MB → ${verdict(s.growthBytes <= 64 * 1_048_576)}; ` +
          `back within 10% of baseline after they leave: ${fmt((s.afterLeaveOverBaseline - 1) * 100, 1)}%` +
          `${s.backWithinMs === null ? ` after ${AFTER_LEAVE_MAX_MS / 1000} s` : ` after ${fmt(s.backWithinMs / 1000, 1)} s`} → ${verdict(s.afterLeaveOverBaseline <= 1.1)}`,
      );
    }
    return { results, targets };
  },
};
