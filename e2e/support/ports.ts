// Ports for one e2e run, chosen when Playwright loads its config: for each of
// the apps the suite runs (APP_NAMES; e2e/support/apps.ts) its console and its
// embedded runtime's gRPC port, and the local OpenID Connect provider's.
// Playwright evaluates the config in its main process and again in every
// worker, so the first evaluation picks free ports and publishes them in the
// environment, which the workers and web servers inherit. Setting
// BATON_E2E_PORTS="aConsole,aRuntime,bConsole,bRuntime,oidc" beforehand pins
// them.
import { spawnSync } from "node:child_process";
import fs from "node:fs";

/** The apps an e2e run starts, each the whole console with its own runtime (e2e/support/apps.ts). */
export const APP_NAMES = ["a", "b"] as const;
export type AppName = (typeof APP_NAMES)[number];

export interface AppPorts {
  console: number;
  runtime: number;
}

export type E2ePorts = Record<AppName, AppPorts> & { oidc: number };

const COUNT = APP_NAMES.length * 2 + 1;
const PINNED_FORMAT = [...APP_NAMES.flatMap((n) => [`${n}Console`, `${n}Runtime`]), "oidc"].join(",");

const FREE_PORTS_SCRIPT = `
const net = require("node:net");
const servers = [];
let left = ${COUNT};
const ports = [];
for (let i = 0; i < ${COUNT}; i++) {
  const s = net.createServer();
  servers.push(s);
  s.listen(0, "127.0.0.1", () => {
    ports.push(s.address().port);
    if (--left === 0) {
      process.stdout.write(ports.join(","));
      for (const x of servers) x.close();
    }
  });
}`;

/** Ports in PINNED_FORMAT's order: each app's console and runtime, then the OIDC provider's. */
function parse(raw: string): E2ePorts | null {
  const parts = raw.split(",").map((p) => Number(p.trim()));
  if (parts.length !== COUNT || parts.some((p) => !Number.isInteger(p) || p <= 0 || p > 65_535)) return null;
  if (new Set(parts).size !== COUNT) return null;
  const at = (i: number): number => parts[i] ?? 0;
  const apps = {} as Record<AppName, AppPorts>;
  APP_NAMES.forEach((name, i) => {
    apps[name] = { console: at(2 * i), runtime: at(2 * i + 1) };
  });
  return { ...apps, oidc: at(COUNT - 1) };
}

function serialize(p: E2ePorts): string {
  return [...APP_NAMES.flatMap((n) => [p[n].console, p[n].runtime]), p.oidc].join(",");
}

/** The run's ports: from BATON_E2E_PORTS, or free loopback ports (then published there). */
export function e2ePorts(): E2ePorts {
  const pinned = process.env.BATON_E2E_PORTS;
  if (pinned) {
    const p = parse(pinned);
    if (!p) throw new Error(`BATON_E2E_PORTS must be "${PINNED_FORMAT}": ${COUNT} different port numbers, got "${pinned}"`);
    return p;
  }
  const r = spawnSync(process.execPath, ["-e", FREE_PORTS_SCRIPT], { encoding: "utf8" });
  const p = r.status === 0 ? parse(r.stdout) : null;
  if (!p) throw new Error(`could not find free ports for the e2e run: ${r.stderr || r.stdout}`);
  process.env.BATON_E2E_PORTS = serialize(p);
  return p;
}

/** Debian's Chromium (package chromium): the whole browser, as people run it. */
const DEBIAN_CHROMIUM = "/usr/bin/chromium";
/**
 * Debian's Chromium headless shell (package chromium-headless-shell): the same Chromium build, with
 * the same Blink and V8, without the windowed browser around it; Playwright uses this build for
 * headless runs of its own Chromium too. The end-to-end suite took 357 s and 594 CPU-seconds in it,
 * against 483 s and 856 in the whole browser, with the same 58 tests passing (2026-11-27, 2 cores).
 */
const DEBIAN_HEADLESS_SHELL = "/usr/bin/chromium-headless-shell";

/** The Chromium the benchmarks load pages in: BATON_CHROMIUM, else Debian's whole browser. */
export const CHROMIUM_PATH = process.env.BATON_CHROMIUM || DEBIAN_CHROMIUM;

/**
 * The Chromium the end-to-end suite drives: BATON_CHROMIUM, else Debian's headless shell, else
 * (when only the package chromium is installed) Debian's whole browser.
 */
export const E2E_CHROMIUM_PATH =
  process.env.BATON_CHROMIUM || (fs.existsSync(DEBIAN_HEADLESS_SHELL) ? DEBIAN_HEADLESS_SHELL : DEBIAN_CHROMIUM);
