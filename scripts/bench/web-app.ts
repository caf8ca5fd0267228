// `npm run bench:web`: start and stop the app the way the README does
// (`npm start`, which builds the production bundle when needed), on free
// loopback ports with a fresh data directory. Benchmark code only.

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export interface BenchUser {
  username: string;
  password: string;
  role: string;
}

export interface RunningApp {
  baseUrl: string;
  /** The person the browser signs in as (the console requires sign-in for reads by default). */
  user: BenchUser;
  grpcAddress: string;
  dataDir: string;
  /** Milliseconds spent in `next build` (0 when the existing build was current). */
  buildMs: number;
  built: boolean;
  /** Milliseconds from spawn until the console answered (build included). */
  readyMs: number;
  stop(): Promise<void>;
  /** The last lines the app printed (for error reports). */
  logTail(): string;
}

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * `npm start` in its own process group (so stop() reaches npm, start.mjs,
 * next build and the tsx server alike). Resolves once GET / answers 200.
 */
export async function startApp(opts: {
  root: string;
  env?: Record<string, string>;
  /** Longest wait for `next build` + start. */
  timeoutMs?: number;
  onLine?: (line: string) => void;
  /** Role of the bench's console user (created in a temp users file). */
  role?: string;
}): Promise<RunningApp> {
  const port = await freePort();
  let grpcPort = await freePort();
  while (grpcPort === port) grpcPort = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-bench-web-"));
  const grpcAddress = `127.0.0.1:${grpcPort}`;
  const baseUrl = `http://127.0.0.1:${port}`;

  // Accounts live in the temp directory too: a users file with one person
  // (added with `npm run users`, the README's way) and a session secret.
  const user: BenchUser = { username: "bench-web", password: crypto.randomBytes(18).toString("base64url"), role: opts.role ?? "operator" };
  const accountsEnv = {
    BATON_USERS_FILE: path.join(dataDir, "users.json"),
    BATON_SESSION_SECRET_FILE: path.join(dataDir, "session-secret"),
  };
  const added = spawnSync(
    "npm",
    ["run", "--silent", "users", "--", "add", user.username, "--role", user.role, "--name", "Bench viewer", "--password-stdin"],
    {
      cwd: opts.root,
      input: `${user.password}\n`,
      env: { ...process.env, ...accountsEnv },
      encoding: "utf8",
    },
  );
  if (added.status !== 0) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`npm run users -- add failed (${added.status}): ${added.stderr || added.stdout}`);
  }

  const t0 = performance.now();
  let buildStart: number | undefined;
  const lines: string[] = [];
  const child: ChildProcess = spawn("npm", ["start"], {
    cwd: opts.root,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      PORT: String(port),
      MACP_BIND_ADDR: grpcAddress,
      MACP_DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      MACP_LOG_LEVEL: "warn",
      ...accountsEnv,
      ...opts.env,
    },
  });
  const onData = (buf: Buffer): void => {
    for (const line of buf.toString("utf8").split(/\r?\n/)) {
      if (line.trim() === "") continue;
      lines.push(line);
      if (lines.length > 200) lines.shift();
      if (/building the console/.test(line)) buildStart = performance.now();
      opts.onLine?.(line);
    }
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitPromise = new Promise<void>((resolve) => {
    child.on("exit", (code, signal) => {
      exited = { code, signal };
      resolve();
    });
  });

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (exited || child.pid === undefined) return;
    const group = -child.pid;
    try {
      process.kill(group, "SIGTERM");
    } catch {
      /* already gone */
    }
    const timedOut = await Promise.race([exitPromise.then(() => false), sleep(10_000).then(() => true)]);
    if (timedOut) {
      try {
        process.kill(group, "SIGKILL");
      } catch {
        /* already gone */
      }
      await Promise.race([exitPromise, sleep(2_000)]);
    }
    // Children of the group that outlived npm (e.g. the tsx server).
    try {
      process.kill(group, 0);
      await sleep(1_500);
      process.kill(group, "SIGKILL");
    } catch {
      /* group is empty */
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + (opts.timeoutMs ?? 900_000);
  try {
    for (;;) {
      if (exited) throw new Error(`npm start exited early (${exited.code ?? exited.signal})\n${lines.slice(-30).join("\n")}`);
      if (Date.now() > deadline) throw new Error(`the console did not answer on ${baseUrl} in time\n${lines.slice(-30).join("\n")}`);
      try {
        const res = await fetch(`${baseUrl}/`, { signal: AbortSignal.timeout(5_000) });
        await res.arrayBuffer();
        if (res.status === 200) break;
      } catch {
        /* not listening yet */
      }
      await sleep(200);
    }
  } catch (e) {
    await stop();
    throw e;
  }
  const readyMs = performance.now() - t0;
  const built = buildStart !== undefined;
  // From the "building" line to the server answering: the build plus a
  // plain server start (an upper bound on the build alone).
  const buildMs = built ? performance.now() - (buildStart ?? t0) : 0;
  return { baseUrl, user, grpcAddress, dataDir, buildMs, built, readyMs, stop, logTail: () => lines.slice(-40).join("\n") };
}

export interface SessionCookie {
  name: string;
  value: string;
}

/**
 * Sign in over the console's own /auth/login (JSON, same-origin header) and
 * return the session cookie, so each fresh browser context can start signed
 * in without going through the form (and without warming any cache).
 */
export async function signIn(app: Pick<RunningApp, "baseUrl" | "user">): Promise<SessionCookie[]> {
  const res = await fetch(`${app.baseUrl}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: app.baseUrl },
    body: JSON.stringify({ username: app.user.username, password: app.user.password }),
    redirect: "manual",
  });
  const body = await res.text();
  if (!res.ok) throw new Error(`sign-in as ${app.user.username} failed: ${res.status} ${body.slice(0, 200)}`);
  const cookies = res.headers.getSetCookie().map((c) => {
    const [pair] = c.split(";");
    const eq = pair!.indexOf("=");
    return { name: pair!.slice(0, eq).trim(), value: pair!.slice(eq + 1).trim() };
  });
  if (cookies.length === 0) throw new Error("sign-in answered without a session cookie");
  return cookies.filter((c) => c.value !== "");
}
