// Shared by the console catalog integration tests: a runtime in its own
// process (as `npm run runtime` runs it), sessions seeded through gRPC, and a
// log capture for the console's progress lines.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { DEFAULT_CONFIGURATION_VERSION, DEFAULT_POLICY_ID, HANDOFF_MODE, MODE_VERSION } from "@/lib/macp/constants";
import { buildEnvelope } from "@/lib/macp/payloads";
import { clientFor, newSessionId, type RuntimeClient } from "./harness";

export const OWNER = "agent://owner";
export const TARGET = "agent://target";
export const OBSERVER = "ops:observer";
export const OPEN_EVERY = 100;

export interface RuntimeProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** The runtime as `npm run runtime` runs it, in its own process. */
export async function spawnRuntime(dataDir: string, extraEnv: Record<string, string> = {}): Promise<RuntimeProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(process.cwd(), "lib", "runtime", "main.ts")], {
    cwd: process.cwd(),
    env: {
      ...process.env,
      MACP_BIND_ADDR: "127.0.0.1:0",
      MACP_ALLOW_INSECURE: "1",
      MACP_DATA_DIR: dataDir,
      MACP_DEV_OBSERVERS: OBSERVER,
      MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
      MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
      MACP_LOG_LEVEL: "info",
      ...extraEnv,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let buf = "";
    child.stdout?.on("data", (d: Buffer) => {
      buf += d.toString();
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          const j = JSON.parse(line) as { msg?: string; address?: string };
          if (j.msg?.startsWith("MACP runtime listening on")) resolve(`http://${j.address}`);
        } catch {
          // not JSON
        }
      }
    });
    child.once("exit", (code) => reject(new Error(`runtime exited with ${code}: ${stderr.slice(-2000)}`)));
  });
  child.stdout?.resume();
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** Session i: a handoff with a searchable intent; one in OPEN_EVERY is left open after its offer. */
export async function seed(rt: { url: string }, count: number, intentPad = 0): Promise<{ ids: string[]; open: Set<string> }> {
  const owner: RuntimeClient = clientFor(rt, OWNER);
  const target: RuntimeClient = clientFor(rt, TARGET);
  const ids: string[] = [];
  const open = new Set<string>();
  const send = async (c: RuntimeClient, sessionId: string, messageType: string, payload: Record<string, unknown>) => {
    const res = await c.send({ envelope: buildEnvelope({ mode: HANDOFF_MODE, messageType, sessionId, payload }) });
    if (!res.ack?.ok) throw new Error(`${messageType} refused: ${res.ack?.error?.code} ${res.ack?.error?.message}`);
  };
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const sid = newSessionId();
      ids[i] = sid;
      await send(owner, sid, "SessionStart", {
        intent: `rotate pager ${String(i).padStart(5, "0")}${intentPad > 0 ? ` ${"x".repeat(intentPad)}` : ""}`,
        participants: [OWNER, TARGET],
        modeVersion: MODE_VERSION,
        configurationVersion: DEFAULT_CONFIGURATION_VERSION,
        policyVersion: "",
        ttlMs: 3_600_000n,
      });
      await send(owner, sid, "HandoffOffer", {
        handoffId: "h1",
        targetParticipant: TARGET,
        scope: i % 2 ? "night shift" : "day shift",
        reason: "r",
      });
      if (i % OPEN_EVERY === 0) {
        open.add(sid);
        continue;
      }
      await send(target, sid, "HandoffAccept", { handoffId: "h1", acceptedBy: TARGET, reason: "ok" });
      await send(owner, sid, "Commitment", {
        commitmentId: `c-${sid}`,
        action: "handoff.accepted",
        authorityScope: "pager",
        reason: "done",
        modeVersion: MODE_VERSION,
        configurationVersion: DEFAULT_CONFIGURATION_VERSION,
        policyVersion: DEFAULT_POLICY_ID,
        outcomePositive: true,
      });
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return { ids, open };
}

/** Log lines of a console (pino JSON), for its progress reports. */
export function capturingLogger(lines: string[]) {
  return pino(
    { level: "info" },
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    }),
  );
}

/** seed() in a child process: the caller's event loop may be as slow as it likes meanwhile. */
export function seedInProcess(rt: { url: string }, count: number, intentPad = 0): Promise<{ ids: string[]; open: Set<string> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        path.join(process.cwd(), "tests", "integration", "__fixtures__", "seed-process.ts"),
        rt.url,
        String(count),
        String(intentPad),
      ],
      {
        cwd: process.cwd(),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    let err = "";
    child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`seeder exited with ${code}: ${err.slice(-2000)}`));
      const parsed = JSON.parse(out) as { ids: string[]; open: string[] };
      resolve({ ids: parsed.ids, open: new Set(parsed.open) });
    });
  });
}
