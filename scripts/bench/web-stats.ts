// bench:web's measurement helpers: machine-wide busy cores and waiting for
// other work to quieten before a phase, medians and percentiles, and number
// formatting.
import fs from "node:fs";
import os from "node:os";
import { log, opts } from "./web-options";

/** Busy cores, machine-wide, over `ms` (from /proc/stat; NaN where unavailable). */
export async function busyCores(ms: number): Promise<number> {
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
export async function waitForQuiet(label: string): Promise<number> {
  const deadline = performance.now() + opts.quietWaitMs;
  let busy = await busyCores(500);
  while (busy > opts.quietCores && performance.now() < deadline) busy = await busyCores(1_000);
  if (busy > opts.quietCores) log(`${label}: other processes keep ${busy.toFixed(2)} cores busy; measuring anyway`);
  return busy;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Nearest-rank percentile. */
export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export const kib = (b: number): number => b / 1024;
export const f1 = (x: number | null | undefined): string => (x === null || x === undefined || Number.isNaN(x) ? "—" : x.toFixed(1));
export const f0 = (x: number | null | undefined): string => (x === null || x === undefined || Number.isNaN(x) ? "—" : x.toFixed(0));
