// Ports for one e2e run, chosen when Playwright loads its config: the console,
// the embedded runtime's gRPC port and the local OpenID Connect provider.
// Playwright evaluates the config in its main process and again in every
// worker, so the first evaluation picks free ports and publishes them in the
// environment, which the workers and web servers inherit. Setting
// BATON_E2E_PORTS="console,runtime,oidc" beforehand pins them.
import { spawnSync } from "node:child_process";

export interface E2ePorts {
  console: number;
  runtime: number;
  oidc: number;
}

const FREE_PORTS_SCRIPT = `
const net = require("node:net");
const servers = [];
let left = 3;
const ports = [];
for (let i = 0; i < 3; i++) {
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

function parse(raw: string): E2ePorts | null {
  const parts = raw.split(",").map((p) => Number(p.trim()));
  if (parts.length !== 3 || parts.some((p) => !Number.isInteger(p) || p <= 0 || p > 65_535)) return null;
  const [c, r, o] = parts as [number, number, number];
  return { console: c, runtime: r, oidc: o };
}

/** The run's ports: from BATON_E2E_PORTS, or three free loopback ports (then published there). */
export function e2ePorts(): E2ePorts {
  const pinned = process.env.BATON_E2E_PORTS;
  if (pinned) {
    const p = parse(pinned);
    if (!p) throw new Error(`BATON_E2E_PORTS must be "console,runtime,oidc" port numbers, got "${pinned}"`);
    return p;
  }
  const r = spawnSync(process.execPath, ["-e", FREE_PORTS_SCRIPT], { encoding: "utf8" });
  const p = r.status === 0 ? parse(r.stdout) : null;
  if (!p) throw new Error(`could not find free ports for the e2e run: ${r.stderr || r.stdout}`);
  process.env.BATON_E2E_PORTS = `${p.console},${p.runtime},${p.oidc}`;
  return p;
}

/** Chromium used by Playwright and the web benchmark: BATON_CHROMIUM, else Debian's. */
export const CHROMIUM_PATH = process.env.BATON_CHROMIUM || "/usr/bin/chromium";
