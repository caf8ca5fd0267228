// A damaged WAL on the real runtime: agents send over gRPC to a runtime
// process, which is SIGKILLed, and copies of its data folder are damaged. The
// runtime must refuse to start instead of silently dropping acknowledged
// envelopes (started in this process here, which is what `npm run runtime`
// runs), and `npm run runtime:recover` must report, then recover, with every
// acknowledged envelope either back or listed as lost.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRuntime as startRuntimeInProcess, type RunningRuntime } from "@/lib/runtime";
import { inspectWalFile } from "@/lib/runtime/store/wal";
import { agent, clientFor, collectEnvelopes, newSessionId, tempDir } from "./harness";

const FILE = "baton-runtime.sqlite";
const root = tempDir("baton-wal-damage-");
const pristine = path.join(root, "pristine");
const acked = new Map<string, string[]>();
const sessions: string[] = [];

function runtimeEnv(dataDir: string): Record<string, string> {
  return {
    MACP_BIND_ADDR: "127.0.0.1:0",
    MACP_ALLOW_INSECURE: "1",
    MACP_MEMORY_ONLY: "0",
    MACP_DATA_DIR: dataDir,
    MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
    MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
    MACP_LOG_LEVEL: "info",
  };
}

/** Starts `npm run runtime` on a data folder as its own process (to kill -9 it); resolves when it listens. */
function spawnRuntime(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(process.cwd(), "lib/runtime/main.ts")], {
    env: { ...process.env, ...runtimeEnv(dataDir) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`runtime did not start: ${err}`)), 20_000);
    child.stderr?.on("data", (d) => (err += String(d)));
    child.stdout?.on("data", (d) => {
      out += String(d);
      const m = /MACP runtime listening on (http:\/\/[^"\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]! });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`runtime exited with ${code}`), { code, stderr: err, stdout: out }));
    });
  });
}

function recoverCli(dataDir: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", path.join(process.cwd(), "lib/runtime/recover.ts"), "--data-dir", dataDir, ...args],
    {
      encoding: "utf8",
      env: { ...process.env, MACP_LOG_LEVEL: "silent" },
    },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function copy(name: string): string {
  const dir = path.join(root, name);
  fs.cpSync(pristine, dir, { recursive: true });
  return dir;
}

function walFrameOffset(dir: string, frame: number): number {
  const ps = fs.readFileSync(path.join(dir, `${FILE}-wal`)).readUInt32BE(8);
  return 32 + (frame - 1) * (ps + 24);
}

function patch(file: string, offset: number, bytes: (old: Buffer) => Buffer): void {
  const fd = fs.openSync(file, "r+");
  try {
    const old = Buffer.alloc(32);
    fs.readSync(fd, old, 0, 32, offset);
    const next = bytes(old);
    fs.writeSync(fd, next, 0, next.length, offset);
  } finally {
    fs.closeSync(fd);
  }
}

beforeAll(async () => {
  const rt = await spawnRuntime(pristine);
  for (let i = 0; i < 12; i++) {
    const sid = newSessionId();
    sessions.push(sid);
    acked.set(sid, []);
    const o = agent(rt, "owner", sid);
    expect((await o.start(["owner", "target"])).ok).toBe(true);
    expect((await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "target" })).ok).toBe(true);
  }
  // Concurrent senders (group commits of several envelopes), then kill -9 in the middle of it.
  let stopSending = false;
  const loops = sessions.map(async (sid) => {
    const o = agent(rt, "owner", sid);
    for (let i = 0; !stopSending; i++) {
      try {
        const ack = await o.send(
          "HandoffContext",
          { handoffId: "h1", contentType: "text/plain", context: new TextEncoder().encode(`note ${i}`) },
          { messageId: `ctx-${i}` },
        );
        if (ack.ok) acked.get(sid)!.push(`ctx-${i}`);
      } catch {
        return;
      }
    }
  });
  // Short enough that the log stays in one generation (SQLite checkpoints and restarts it at 1,000 pages).
  await new Promise((r) => setTimeout(r, 600));
  rt.child.kill("SIGKILL");
  stopSending = true;
  await Promise.all(loops);
  // Frame 5 is in the current WAL generation and later transactions are committed after it (the log
  // restarts after each checkpoint, so a kill right after one would leave too few frames: not the case here).
  const wal = inspectWalFile(path.join(pristine, `${FILE}-wal`));
  expect(wal?.committedTransactions).toBeGreaterThan(5);
  expect(wal?.committedFrames).toBeGreaterThan(20);
}, 60_000);

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

/** Start the runtime in this process on a data folder; rejects as a start would. */
function startOn(dataDir: string, logger = pino({ level: "silent" })): Promise<RunningRuntime> {
  return startRuntimeInProcess({ env: runtimeEnv(dataDir), logger });
}

async function refusal(dataDir: string): Promise<Error> {
  const err = await startOn(dataDir).then(
    async (rt) => {
      await rt.close();
      return null;
    },
    (e: unknown) => e as Error,
  );
  if (!err) throw new Error("the runtime started");
  return err;
}

describe("runtime start on a damaged WAL", () => {
  it("a torn last frame starts, with a warning that an unacknowledged tail was discarded", async () => {
    const dir = copy("torn");
    const wal = path.join(dir, `${FILE}-wal`);
    fs.truncateSync(wal, fs.statSync(wal).size - 100);
    const lines: Array<{ level: number; msg: string }> = [];
    const logger = pino(
      { level: "info" },
      { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) },
    );
    const rt = await startOn(dir, logger);
    try {
      const warning = lines.find((l) => /discarded an incomplete \(never acknowledged\) tail/.test(l.msg));
      expect(warning?.level).toBe(40);
      expect((await clientFor(rt, "owner").getSession({ sessionId: sessions[0]! })).metadata?.sessionId).toBe(sessions[0]);
    } finally {
      await rt.close();
    }
  });

  it("a zeroed WAL header with committed frames refuses to start", async () => {
    const dir = copy("zeroed");
    patch(path.join(dir, `${FILE}-wal`), 0, () => Buffer.alloc(32));
    const err = await refusal(dir);
    expect(err.name).toBe("WalDamageError");
    expect(err.message).toContain("refusing to start because the write-ahead log is damaged");
    expect(err.message).toContain("The write-ahead log's header is invalid (its magic number is 0x00000000)");
  });

  it("one flipped bit in frame 5 refuses to start; runtime:recover reports, then recovers every acknowledged envelope it can and lists the rest", async () => {
    const dir = copy("flipped");
    const wal = path.join(dir, `${FILE}-wal`);
    patch(wal, walFrameOffset(dir, 5) + 24 + 1000, (old) => Buffer.from([old[0]! ^ 0x04]));
    const walBefore = fs.readFileSync(wal);

    const err = await refusal(dir);
    expect(err.name).toBe("WalDamageError");
    expect(err.message).toMatch(/refusing to start because the write-ahead log is damaged\. Frame 5 of [\d,]+/);
    expect(err.message).toContain(`npm run runtime:recover -- --data-dir ${dir}`);
    expect(fs.readFileSync(wal).equals(walBefore)).toBe(true);

    const plan = recoverCli(dir);
    expect(plan.stderr).toBe("");
    expect(plan.status, plan.stdout).toBe(2);
    expect(plan.stdout).toMatch(/Found:\n {2}Frame 5 of [\d,]+ in the write-ahead log/);
    expect(plan.stdout).toMatch(/SQLite alone would keep [\d,]+ log records/);
    expect(plan.stdout).toMatch(/A recovery \(--apply\) would keep:\n {2}[\d,]+ log records in 12 sessions/);
    expect(plan.stdout).toMatch(/Checked: the runtime state rebuilds from it \(12 sessions, 12 open\)/);
    expect(plan.stdout).toContain("Nothing was changed.");
    expect(fs.readFileSync(wal).equals(walBefore)).toBe(true);

    const applied = recoverCli(dir, "--apply");
    expect(applied.status, applied.stdout + applied.stderr).toBe(0);
    expect(applied.stdout).toContain("The damaged database and log were copied to");
    const backup = fs.readdirSync(dir).find((n) => n.startsWith("damaged-"))!;
    expect(fs.readFileSync(path.join(dir, backup, `${FILE}-wal`)).equals(walBefore)).toBe(true);
    const report = JSON.parse(fs.readFileSync(path.join(dir, backup, "recovery-report.json"), "utf8")) as {
      rescued: number;
      sqliteWouldKeep: { records: number };
      recovered: { records: number };
    };
    expect(report.rescued).toBeGreaterThan(0);
    expect(report.recovered.records).toBeGreaterThan(report.sqliteWouldKeep.records);
    const lostFile = path.join(dir, backup, "lost-records.jsonl");
    const lost = fs.existsSync(lostFile)
      ? fs
          .readFileSync(lostFile, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as { sessionId: string; seq: number })
      : [];

    const rt = await startOn(dir);
    try {
      const c = clientFor(rt, "owner");
      let missing = 0;
      for (const sid of sessions) {
        const meta = (await c.getSession({ sessionId: sid })).metadata!;
        const count = 1 + meta.participantActivity.reduce((n, a) => n + a.messageCount, 0);
        const ids = new Set((await collectEnvelopes(c, sid, count)).map((e) => e.messageId));
        const lostHere = lost.filter((l) => l.sessionId === sid).length;
        for (const id of acked.get(sid)!) if (!ids.has(id)) missing++;
        // Whatever is missing from a session is exactly its listed lost tail (acknowledged or not).
        expect(ids.size + lostHere).toBeGreaterThanOrEqual(2 + acked.get(sid)!.length);
      }
      expect(missing).toBeLessThanOrEqual(lost.length);
      // The recovered sessions go on working.
      expect((await agent(rt, "target", sessions[0]!).send("HandoffAccept", { handoffId: "h1" })).ok).toBe(true);
    } finally {
      await rt.close();
    }
  });
});
