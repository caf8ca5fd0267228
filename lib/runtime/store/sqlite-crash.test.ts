// Crash recovery on a real SQLite file: a child process killed in the middle
// of a burst of commits, then the end of its WAL torn; exactly the
// acknowledged records come back.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { dir, env, freshDirPerTest, openStore, recordingLogger } from "./__fixtures__/sqlite-test-kit";
import { SQLITE_FILE_NAME } from "./sqlite";
import { inspectWalFile } from "./wal";

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, "../../..");

freshDirPerTest();

describe("sqlite store: crash recovery", () => {
  interface ChildResult {
    acked: Array<{ position: number; sessionId: string; seq: number }>;
    finalBurst: [number, number] | null;
    signal: NodeJS.Signals | null;
    stderr: string;
  }

  function runCrashWriter(bursts: number, perBurst: number): Promise<ChildResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", path.join(here, "__fixtures__", "crash-writer.ts"), dir, String(bursts), String(perBurst)],
        { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("error", reject);
      child.on("close", (_code, signal) => {
        const result: ChildResult = { acked: [], finalBurst: null, signal, stderr };
        for (const line of stdout.split("\n")) {
          const [word, a, b, c] = line.split(" ");
          if (word === "ack") result.acked.push({ position: Number(a), sessionId: String(b), seq: Number(c) });
          if (word === "kill") result.finalBurst = [Number(a), Number(b)];
        }
        resolve(result);
      });
    });
  }

  it("recovers exactly the acknowledged records after SIGKILL and a torn final WAL frame", async () => {
    const bursts = 8;
    const perBurst = 64;
    const child = await runCrashWriter(bursts, perBurst);
    expect(child.stderr).toBe("");
    expect(child.signal).toBe("SIGKILL");
    expect(child.acked).toHaveLength(bursts * perBurst);
    expect(child.acked.map((a) => a.position)).toEqual(Array.from({ length: bursts * perBurst }, (_, i) => i + 1));
    expect(child.finalBurst).toEqual([bursts * perBurst + 1, (bursts + 1) * perBurst]);

    // The WAL holds every transaction the child committed, the last one
    // (the final burst, never acknowledged) included, all intact.
    const file = path.join(dir, SQLITE_FILE_NAME);
    const walPath = `${file}-wal`;
    const intact = inspectWalFile(walPath);
    if (!intact) throw new Error("the child left no WAL");
    const frameBytes = intact.pageSize + 24;
    expect(intact).toMatchObject({ headerValid: true, ignoredFrames: 0, tornTailBytes: 0 });
    // schema migration + one group commit per burst + the final burst
    expect(intact.committedTransactions).toBe(bursts + 2);
    expect(intact.bytes).toBe(32 + intact.committedFrames * frameBytes);

    // Keep an untouched copy, then tear the last frame (the final burst's
    // commit frame) as a crash in the middle of writing it would.
    const copyDir = `${dir}-intact`;
    fs.cpSync(dir, copyDir, { recursive: true });
    const cut = 100;
    fs.truncateSync(walPath, intact.bytes - cut);

    const logger = recordingLogger();
    const s = openStore(logger);
    expect(s.openReport.walBytesBefore).toBe(intact.bytes - cut);
    expect(s.openReport.checkedOk).toBe(true);
    expect(s.openReport.wal).toMatchObject({
      headerValid: true,
      committedTransactions: bursts + 1,
      tornTailBytes: frameBytes - cut,
    });
    const finalFrames = intact.committedFrames - (s.openReport.wal?.committedFrames ?? 0);
    expect(finalFrames).toBeGreaterThan(1); // the final burst spans several frames...
    expect(s.openReport.wal?.ignoredFrames).toBe(finalFrames - 1); // ...all dropped with its torn commit frame
    expect(s.openReport.recoveredRecords).toBe(bursts * perBurst);
    const info = logger.lines.find((l) => l.level === "warn");
    expect(info?.msg).toMatch(/did not shut down cleanly.*discarded an incomplete/);
    expect(info?.obj).toMatchObject({ records: bursts * perBurst, tornTailBytes: frameBytes - cut });

    // Every acknowledged record is there, at its position, and nothing else.
    const all = s.loadAll();
    expect(all.map((r) => ({ position: r.position, sessionId: r.sessionId, seq: r.seq }))).toEqual(child.acked);
    expect(all.every((r) => r.envelope.length >= 40 && r.envelope.length < 240)).toBe(true);

    // The store continues each session right after its last acknowledged seq.
    const lastA = Math.max(...child.acked.filter((a) => a.sessionId === "session-0").map((a) => a.seq));
    await expect(s.append([env("session-0", lastA + 2)])).rejects.toThrow(/expects seq/);
    await s.append([env("session-0", lastA + 1)]);
    expect(s.readSession("session-0", lastA).map((r) => r.position)).toEqual([bursts * perBurst + 1]);

    // Control: without the tear, the final burst is recovered whole.
    const c = openStore(undefined, copyDir);
    expect(c.openReport.recoveredRecords).toBe((bursts + 1) * perBurst);
    expect(c.openReport.wal).toMatchObject({ committedTransactions: bursts + 2, ignoredFrames: 0, tornTailBytes: 0 });
    const recovered = c.loadAll();
    expect(recovered.slice(bursts * perBurst).every((r) => r.envelope.length === 600)).toBe(true);
    await c.close();
    fs.rmSync(copyDir, { recursive: true, force: true });
  });
});
