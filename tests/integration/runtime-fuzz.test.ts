// The runtime input fuzzer (tests/fuzz/runtime-fuzzer.ts) in its bounded form:
// at least 10,000 seeded cases against the real runtime over gRPC. The seed
// is printed; BATON_FUZZ_SEED=<seed> reruns the same cases, and a failure
// prints the `npm run fuzz -- --replay …` line that replays just it.
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningRuntime } from "@/lib/runtime";
import { fuzzRuntime, randomSeed } from "../fuzz/runtime-fuzzer";
import { clientFor, startTestRuntime, waitFor } from "./harness";

const MAX_PAYLOAD = 4096;
let rt: RunningRuntime;
beforeAll(async () => {
  rt = await startTestRuntime({ MACP_MAX_PAYLOAD_BYTES: String(MAX_PAYLOAD), MACP_EXPIRY_SWEEP_MS: "50" });
});
afterAll(async () => {
  await rt?.close();
});

v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe("runtime input fuzzer", () => {
  it("10,000+ random and mutated envelopes and malformed frames: every answer well-formed, every verdict the protocol's", async () => {
    const seed = process.env.BATON_FUZZ_SEED ? Number(process.env.BATON_FUZZ_SEED) : randomSeed();
    console.info(`runtime fuzz seed ${seed} (rerun with BATON_FUZZ_SEED=${seed}, or npm run fuzz -- --seed ${seed})`);
    const before = heapAfterGc();
    const result = await fuzzRuntime({
      url: rt.url,
      maxPayloadBytes: MAX_PAYLOAD,
      maxReceiveBytes: MAX_PAYLOAD * 4 + 65_536,
      seed,
      cases: 10_000,
      historyEvery: 4,
      lanes: 4,
    });
    if (result.failure) throw new Error(`seed ${seed}: ${result.failure.message}\nreplay: ${result.failure.replay}`);
    const { stats } = result;
    const { rejectReasons: _reasons, ...summary } = stats;
    console.info(`runtime fuzz: ${JSON.stringify({ ...summary, seconds: result.durationMs / 1000 })}`);
    expect(stats.cases).toBeGreaterThanOrEqual(10_000);
    // The campaign reaches deep protocol states, not just rejections.
    expect(stats.verdicts.accept).toBeGreaterThan(stats.cases / 20);
    expect(stats.verdicts.duplicate).toBeGreaterThan(0);
    expect(stats.rejectCodes.FORBIDDEN).toBeGreaterThan(0);
    expect(stats.rejectCodes.SESSION_NOT_OPEN).toBeGreaterThan(0);
    expect(stats.acceptedTypes.Commitment).toBeGreaterThan(0);
    expect(stats.acceptedTypes.HandoffAccept).toBeGreaterThan(0);
    expect(stats.acceptedTypes.TaskComplete).toBeGreaterThan(0);
    expect(stats.rejectCodes.PAYLOAD_TOO_LARGE).toBeGreaterThan(0);
    expect(stats.raw["status 3"]).toBeGreaterThan(0);

    // Still serving, nothing left subscribed, and memory grew with what was accepted only.
    expect((await clientFor(rt, "fz-a").initialize({ supportedProtocolVersions: ["1.0"] })).selectedProtocolVersion).toBe("1.0");
    await waitFor(() => rt.kernel.stats().sessionSubscribers === 0, 5_000, "history streams released");
    const grown = heapAfterGc() - before;
    expect(grown).toBeLessThan(16 * 1024 * 1024 + 4 * stats.acceptedPayloadBytes + 4096 * stats.runs);
  }, 120_000);
});
