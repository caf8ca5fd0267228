// The race the v0.1 authors acknowledged ("two agents can accept the same
// handoff at once"), fixed: 8 processes running the baton CLI accept the same
// handoff at the same moment, 50 times over. Each time exactly one wins (exit
// 0, and the file names it), the 7 others exit 2 with a plain message, and no
// lock or temporary file is left behind.
//
// The processes are long-lived CLI processes (tests/support/files-cli-worker.mjs):
// each loads lib/cli/main.ts exactly as bin/baton.mjs does and runs the CLI's
// main() per round, all starting at the same wall-clock millisecond. (The
// binary's own exit codes are covered in files-cli.test.ts.)
import { fork, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HandoffDirectory } from "@/lib/handoff-files";
import { tempDir } from "./harness";

const ROOT = path.resolve(__dirname, "..", "..");
const WORKER = path.join(ROOT, "tests", "support", "files-cli-worker.mjs");
const PROCESSES = 8;
const ROUNDS = 50;

interface Result {
  id: number;
  code: number;
  stdout: string;
  stderr: string;
}

let dir: string;
const workers: ChildProcess[] = [];
const pending = new Map<number, (r: Result) => void>();
let nextId = 0;

function startWorker(): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const w = fork(WORKER, [], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit", "ipc"] });
    w.once("error", reject);
    w.on("message", (m: { ready?: boolean } & Partial<Result>) => {
      if (m.ready) return resolve(w);
      const done = pending.get(m.id as number);
      pending.delete(m.id as number);
      done?.(m as Result);
    });
  });
}

function runIn(w: ChildProcess, argv: string[], startAt: number): Promise<Result> {
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    w.send({ id, argv, startAt, env: { HANDOFF_DIR: dir } });
  });
}

function checkRound(results: { code: number; stderr: string }[], taskId: string, agents: string[]): void {
  const winners = results.map((r, i) => (r.code === 0 ? i : -1)).filter((i) => i >= 0);
  expect(winners, JSON.stringify(results)).toHaveLength(1);
  const losers = results.filter((r) => r.code !== 0);
  expect(losers.map((r) => r.code)).toEqual(Array(PROCESSES - 1).fill(2));
  for (const l of losers)
    expect(l.stderr).toMatch(
      /^error: (cannot accept .*: it is already accepted by agent:\/\/w\d \(from accepted .*\)|.* changed since it was read: it is accepted \(agent:\/\/w\d\) now, not offered)\n$/,
    );
  const file = JSON.parse(fs.readFileSync(path.join(dir, `${taskId}.json`), "utf8"));
  expect(file).toMatchObject({ status: "accepted", to_agent: agents[winners[0] as number] });
}

beforeAll(async () => {
  dir = tempDir("baton-race-");
  workers.push(...(await Promise.all(Array.from({ length: PROCESSES }, startWorker))));
}, 120_000);
afterAll(() => {
  for (const w of workers) w.send("exit");
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("8 processes accept the same handoff at the same moment", () => {
  it(`exactly one wins, ${ROUNDS} times out of ${ROUNDS}; the others exit 2`, async () => {
    const hd = new HandoffDirectory(dir);
    const agents = Array.from({ length: PROCESSES }, (_, i) => `agent://w${i}`);
    const started = Date.now();
    let contended = 0; // losers that had read "offered" before the winner wrote: a real race
    for (let round = 0; round < ROUNDS; round++) {
      const { snapshot } = await hd.offer({ description: `round ${round}`, from: "agent://planner" });
      const id = snapshot.record.task_id;
      const startAt = Date.now() + 30;
      const results = await Promise.all(
        workers.map((w, i) => runIn(w, ["files", "accept", id.slice(0, 13), "--agent", agents[i] as string], startAt)),
      );
      checkRound(results, id, agents);
      contended += results.filter((r) => r.stderr.includes("changed since it was read")).length;
    }
    // Nothing but the handoff files themselves is left.
    expect(fs.readdirSync(dir).filter((n) => !n.endsWith(".json"))).toEqual([]);
    expect(fs.readdirSync(dir)).toHaveLength(ROUNDS);
    console.log(
      `race: ${ROUNDS} rounds × ${PROCESSES} processes in ${Date.now() - started} ms; ${contended} losers had read the offer before the winner wrote`,
    );
  }, 180_000);
});
