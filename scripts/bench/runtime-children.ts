// bench:runtime's child processes: each server under test
// (runtime-server.ts) and the load generator (runtime-load.ts) run as
// `node --import tsx` children, driven over IPC with a timeout on every reply.
import { fork, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { LoadCommand, LoadReply, ResourceSample, ServerCommand, ServerKind, ServerReply } from "./runtime-common";
import { opts } from "./runtime-options";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const PROFILE_DIR = path.join(os.tmpdir(), "baton-bench-runtime-profiles");

let nextId = 1;

/** A new id for a command to a child. */
export const jobId = (): number => nextId++;

function spawnChild(script: string, args: string[], profile: boolean): ChildProcess {
  const execArgv = ["--import", "tsx"];
  if (profile) {
    const dir = PROFILE_DIR;
    fs.mkdirSync(dir, { recursive: true });
    execArgv.push("--cpu-prof", `--cpu-prof-dir=${dir}`);
  }
  return fork(path.join(ROOT, "scripts", "bench", script), args, {
    cwd: ROOT,
    execArgv,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: { ...process.env, NODE_ENV: "production" },
  });
}

function once<T>(child: ChildProcess, match: (m: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const onMessage = (m: T) => {
      if (!match(m)) return;
      cleanup();
      resolve(m);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`${what}: child exited with code ${code}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
    };
    child.on("message", onMessage);
    child.on("exit", onExit);
  });
}

export class ServerChild {
  private constructor(
    readonly kind: ServerKind,
    readonly child: ChildProcess,
    readonly url: string,
    readonly describe: string,
  ) {}

  static async start(kind: ServerKind): Promise<ServerChild> {
    const child = spawnChild("runtime-server.ts", [kind], opts.cpuProf === kind);
    const m = await once<ServerReply>(child, (r) => r.type === "ready" || r.type === "failed", 30_000, `${kind} server start`);
    if (m.type === "failed") throw new Error(`${kind} server failed to start: ${m.error}`);
    if (m.type !== "ready") throw new Error("unexpected reply");
    return new ServerChild(kind, child, m.url, m.describe);
  }

  private async call(cmd: ServerCommand, want: ServerReply["type"]): Promise<ServerReply> {
    const p = once<ServerReply>(this.child, (r) => r.type === want && "id" in r && r.id === cmd.id, 30_000, `${this.kind} ${cmd.type}`);
    this.child.send(cmd);
    return p;
  }

  async sampleStart(): Promise<number> {
    const r = await this.call({ type: "sample-start", id: jobId() }, "sample-started");
    return r.type === "sample-started" ? r.rssBytes : 0;
  }

  async sampleStop(): Promise<ResourceSample> {
    const r = await this.call({ type: "sample-stop", id: jobId() }, "sampled");
    if (r.type !== "sampled") throw new Error("unexpected reply");
    return r.sample;
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((r) => (this.child.exitCode !== null ? r() : this.child.once("exit", () => r())));
    try {
      await this.call({ type: "close", id: jobId() }, "closed");
    } catch {
      this.child.kill("SIGKILL");
    }
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
  }
}

export class LoadChild {
  private constructor(readonly child: ChildProcess) {}

  static async start(): Promise<LoadChild> {
    const child = spawnChild("runtime-load.ts", [], false);
    await once<LoadReply>(child, (r) => r.type === "ready", 30_000, "load generator start");
    return new LoadChild(child);
  }

  async run<R extends LoadReply>(job: Exclude<LoadCommand, { type: "exit" }>, timeoutMs: number): Promise<R> {
    const p = once<LoadReply>(this.child, (r) => "id" in r && r.id === job.id, timeoutMs, `load job ${job.type}`);
    this.child.send(job);
    const r = await p;
    if (r.type === "failed") throw new Error(`load job ${job.type} failed: ${r.error}`);
    return r as R;
  }

  async close(): Promise<void> {
    const exited = new Promise<void>((r) => (this.child.exitCode !== null ? r() : this.child.once("exit", () => r())));
    this.child.send({ type: "exit", id: jobId() });
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000))]);
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
  }
}
