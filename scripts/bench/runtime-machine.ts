// The machine bench:runtime runs on: CPU busy machine-wide (Linux
// /proc/stat), waiting for other work to quieten before a point, and the
// machine's description for the report.
import fs from "node:fs";
import os from "node:os";
import { opts, timePlan } from "./runtime-options";

/** Busy and total jiffies of all CPUs (Linux /proc/stat), or null elsewhere. */
export function procStat(): { busy: number; total: number; steal: number } | null {
  try {
    const f = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
    const total = user + nice + system + idle + iowait + irq + softirq + steal;
    return { busy: total - idle - iowait, total, steal };
  } catch {
    return null;
  }
}

/** Cores busy machine-wide between two procStat() readings (same unit as cpuCores). */
export function machineCores(a: ReturnType<typeof procStat>, b: ReturnType<typeof procStat>): { busy: number; steal: number } {
  if (!a || !b || b.total <= a.total) return { busy: NaN, steal: NaN };
  const n = os.cpus().length;
  return { busy: ((b.busy - a.busy) / (b.total - a.total)) * n, steal: ((b.steal - a.steal) / (b.total - a.total)) * n };
}

/**
 * Other engineers' builds and tests share this machine. Before each point,
 * wait (bounded by the slack) until the machine is idle apart from us, so one
 * `tsc` does not masquerade as a regression. Returns the busy cores seen last.
 */
export async function waitForQuiet(what: string): Promise<number> {
  const t0 = performance.now();
  let busy = NaN;
  for (;;) {
    const a = procStat();
    await new Promise((r) => setTimeout(r, 400));
    busy = machineCores(a, procStat()).busy;
    if (!(busy > opts.quietCores)) break;
    if (performance.now() - t0 > Math.min(opts.quietWaitPerPointMs, timePlan.slackMs())) {
      process.stderr.write(`  (machine still busy with other work: ${busy.toFixed(2)} cores; measuring ${what} anyway)\n`);
      break;
    }
  }
  return busy;
}

/** The machine the bench ran on, for the report. */
export function machine() {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? "unknown",
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    dataDirParent: os.tmpdir(),
  };
}
