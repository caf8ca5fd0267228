// bench:runtime's report formatting: numbers, plain-text tables, the server
// labels, and the marks for a saturated process or a point disturbed by
// other work on the machine.
import type { ServerKind } from "./runtime-common";
import { opts } from "./runtime-options";

/** Other processes' CPU during a point: "" when quiet, else the cores and a warning mark. */
export const disturbed = (otherCores: number) => !(otherCores <= opts.quietCores * 1.5);
export const otherLoad = (otherCores: number) => (disturbed(otherCores) ? `${fmt(otherCores, 2)} !` : "");

/** Which side ran out of CPU (>= 0.85 of a core), if any. */
export function saturated(serverCores: number, clientCores: number): string {
  const s = serverCores >= 0.85;
  const c = clientCores >= 0.85;
  return s && c ? "both" : s ? "server" : c ? "CLIENT" : "-";
}

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "-");
export const fmtInt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "-");
export const mib = (b: number) => `${(b / 1_048_576).toFixed(0)} MiB`;

export function table(headers: string[], rows: (string | number)[][], align?: ("l" | "r")[]): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, c) => Math.max(...cells.map((r) => (r[c] ?? "").length)));
  const line = (r: string[]) =>
    r.map((v, c) => ((align?.[c] ?? (c === 0 ? "l" : "r")) === "l" ? v.padEnd(widths[c]!) : v.padStart(widths[c]!))).join("  ");
  return [line(cells[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(line)].join("\n");
}

export const LABEL: Record<ServerKind, string> = {
  "runtime-durable": "runtime (durable)",
  "runtime-connect": "runtime (durable) on connect-node",
  "runtime-memory": "runtime (memory-only)",
  "connect-noop": "connect-node no-op",
  "grpcjs-noop": "grpc-js no-op",
};
export const LABEL_WIDTH = Math.max(...Object.values(LABEL).map((l) => l.length));

export function verdict(met: boolean, wasDisturbed: boolean): string {
  return `${met ? "MET" : "MISSED"}${wasDisturbed ? " (disturbed by other load: unreliable)" : ""}`;
}
