// Shared pieces of `npm run bench:scale` (scripts/bench-scale.ts): the IPC
// messages of its child processes, the contract of a bench section, process
// memory readings and formatting. Benchmark code only.
import fs from "node:fs";
import type { RuntimeProcess } from "./scale-runtime-process";

/** Orchestrator -> seeder child (scale-seed.ts). */
export type SeedCommand =
  | {
      type: "seed";
      id: number;
      url: string;
      /** Session numbers [from, from + count) are seeded; the number decides each session's shape. */
      from: number;
      count: number;
      /** Sessions seeded at once (each one's envelopes in order). */
      concurrency: number;
      /** Every openEvery-th session is left open (1%: 100). */
      openEvery: number;
      /** Every bigEvery-th session carries one context of bigBytes. */
      bigEvery: number;
      bigBytes: number;
      tag: string;
    }
  | { type: "big-session"; id: number; url: string; tag: string; contexts: number; bytes: number }
  | { type: "exit"; id: number };

export interface SeedResult {
  sessions: number;
  open: number;
  envelopes: number;
  /** Payload bytes sent. */
  bytes: number;
  ms: number;
}

/** Seeder child -> orchestrator. */
export type SeedReply =
  | { type: "ready" }
  | { type: "seeded"; id: number; result: SeedResult }
  | { type: "big-seeded"; id: number; sessionId: string; result: SeedResult }
  | { type: "failed"; id: number; error: string };

/** Orchestrator -> subscriber child (scale-subscribers.ts). */
export type SubscriberCommand =
  | { type: "subscribe"; id: number; url: string; identity: string; sessionId: string; count: number }
  | { type: "leave"; id: number }
  | { type: "exit"; id: number };

export type SubscriberReply =
  | { type: "ready" }
  | { type: "subscribed"; id: number; streams: number }
  | { type: "left"; id: number; bytesReceived: number }
  | { type: "failed"; id: number; error: string };

/** What one bench section gets for one history size. */
export interface ScaleContext {
  /** Sessions in the store now. */
  sessions: number;
  /** Of which left open. */
  open: number;
  /** The runtime's data folder (its SQLite store). */
  dataDir: string;
  /** Environment the runtime runs with (rate limits off, loopback dev auth). */
  runtimeEnv: Record<string, string>;
  /** Start the runtime on that folder as `npm run runtime` would (the caller stops it). */
  startRuntime(extraEnv?: Record<string, string>): Promise<RuntimeProcess>;
  /** A resolved handoff session holding `bigSessionBytes` of contexts. */
  bigSessionId: string;
  bigSessionBytes: number;
  /** An identity that may read every session. */
  readerIdentity: string;
  say(line: string): void;
}

/**
 * One part of the benchmark (runtime; a console section can be added as its
 * own module). `measure` runs once per history size; `report` prints the
 * section's table and target lines from all sizes and returns its JSON part.
 */
export interface ScaleSection<R> {
  name: string;
  measure(ctx: ScaleContext): Promise<R>;
  report(results: { sessions: number; open: number; result: R }[], say: (line: string) => void): unknown;
}

/** Resident set size of a process (Linux /proc), in bytes. */
export function rssOf(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const m = /VmRSS:\s+(\d+) kB/.exec(status);
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** CPU time (user + system) a process has used so far (Linux /proc), in ms. */
export function cpuMsOf(pid: number): number {
  try {
    const fields = (fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1] ?? "").split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return NaN;
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 ? (s[(n - 1) >> 1] as number) : ((s[n / 2 - 1] as number) + (s[n / 2] as number)) / 2;
}

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "-");
export const fmtInt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "-");
export const mib = (b: number) => (Number.isFinite(b) ? `${(b / 1_048_576).toFixed(0)} MiB` : "-");
export const verdict = (ok: boolean) => (ok ? "met" : "MISSED");

export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, c) => Math.max(...cells.map((r) => (r[c] ?? "").length)));
  const line = (r: string[]) => r.map((v, c) => (c === 0 ? v.padEnd(widths[c]!) : v.padStart(widths[c]!))).join("  ");
  return [line(cells[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)].join("\n");
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
