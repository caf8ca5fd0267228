// The runtime as `npm run runtime` runs it (lib/runtime/main.ts under tsx),
// in its own process, for `npm run bench:scale`: started on a data folder,
// timed from spawn to its "listening" log line, its store and kernel reports
// read from its JSON log, its memory read from /proc, stopped with SIGTERM
// (a clean shutdown).
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cpuMsOf, rssOf } from "./scale-common";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface RuntimeProcess {
  pid: number;
  url: string;
  /** Spawn to the "MACP runtime listening" log line. */
  listeningMs: number;
  /** CPU time the process had used by then (robust to other load on the machine). */
  listeningCpuMs: number;
  /** The kernel's load report ("runtime state rebuilt from storage"). */
  load: { resident: number; open: number; indexRows: number; records: number; indexed: number; ms: number } | null;
  /** The store's open log line: whether PRAGMA quick_check ran, and its cost. */
  quickCheck: string;
  rss(): number;
  stop(): Promise<void>;
}

interface LogLine {
  msg?: string;
  address?: string;
  quickCheck?: string;
  resident?: number;
  open?: number;
  indexRows?: number;
  records?: number;
  indexed?: number;
  ms?: number;
  level?: number;
}

export async function startRuntimeProcess(env: Record<string, string>, timeoutMs = 600_000): Promise<RuntimeProcess> {
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "lib", "runtime", "main.ts")], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: "production", MACP_LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let load: RuntimeProcess["load"] = null;
  let quickCheck = "";
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const listening = new Promise<{ url: string; ms: number; cpuMs: number }>((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`runtime did not listen within ${timeoutMs} ms`)), timeoutMs);
    child.stdout?.on("data", (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let j: LogLine;
        try {
          j = JSON.parse(line) as LogLine;
        } catch {
          continue;
        }
        if (j.msg === "runtime store: opened" && j.quickCheck) quickCheck = j.quickCheck;
        if (j.msg?.startsWith("runtime state rebuilt")) {
          load = {
            resident: j.resident ?? 0,
            open: j.open ?? 0,
            indexRows: j.indexRows ?? 0,
            records: j.records ?? 0,
            indexed: j.indexed ?? 0,
            ms: j.ms ?? 0,
          };
        }
        if (j.msg?.startsWith("MACP runtime listening on")) {
          clearTimeout(timer);
          resolve({ url: `http://${j.address}`, ms: performance.now() - t0, cpuMs: cpuMsOf(child.pid as number) });
        }
        if ((j.level ?? 0) >= 50) process.stderr.write(`runtime: ${line}\n`);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`runtime exited with code ${code} before listening: ${stderr.slice(-2000)}`));
    });
  });
  const { url, ms, cpuMs } = await listening;
  const pid = child.pid as number;
  return {
    pid,
    url,
    listeningMs: ms,
    listeningCpuMs: cpuMs,
    get load() {
      return load;
    },
    quickCheck,
    rss: () => rssOf(pid),
    stop: () =>
      new Promise<void>((resolve, reject) => {
        if (child.exitCode !== null) return resolve();
        const force = setTimeout(() => child.kill("SIGKILL"), 60_000);
        child.once("exit", (code, signal) => {
          clearTimeout(force);
          if (code === 0) resolve();
          else reject(new Error(`runtime stopped with code ${code} signal ${signal}: ${stderr.slice(-2000)}`));
        });
        child.kill("SIGTERM");
      }),
  };
}
