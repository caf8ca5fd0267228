// `npm run fuzz`: the runtime input fuzzer (tests/fuzz/runtime-fuzzer.ts) at
// length, against a runtime started here (in this process, memory-only unless
// --durable). Prints the seed first; a failure prints the line that replays it.
//
//   npm run fuzz                                  100,000 cases, random seed
//   npm run fuzz -- --seed 123 --cases 1000000    a fixed seed, a million cases
//   npm run fuzz -- --replay <chunkSeed>:<path>   replay one failing case
//   options: --lanes N (8), --durable (SQLite in a temp folder), --timeout-ms N (10000)
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import pino from "pino";
import { startRuntime } from "@/lib/runtime";
import { fuzzRuntime, randomSeed } from "@/tests/fuzz/runtime-fuzzer";

const USAGE = "usage: npm run fuzz -- [--seed N] [--cases N] [--lanes N] [--durable] [--timeout-ms N] [--replay CHUNKSEED:PATH]";
const MAX_PAYLOAD = 4096;

function parse(argv: string[]) {
  const o = {
    seed: randomSeed(),
    cases: 100_000,
    lanes: 8,
    durable: false,
    timeoutMs: 10_000,
    replay: undefined as { chunkSeed: number; path: string } | undefined,
  };
  const num = (v: string | undefined, name: string) => {
    const n = Number(v);
    if (v === undefined || !Number.isSafeInteger(n)) throw new Error(`${name} needs an integer\n${USAGE}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--seed") o.seed = num(argv[++i], a);
    else if (a === "--cases") o.cases = num(argv[++i], a);
    else if (a === "--lanes") o.lanes = Math.max(1, num(argv[++i], a));
    else if (a === "--timeout-ms") o.timeoutMs = num(argv[++i], a);
    else if (a === "--durable") o.durable = true;
    else if (a === "--replay") {
      const m = /^(-?\d+):(.*)$/.exec(argv[++i] ?? "");
      if (!m) throw new Error(`--replay needs CHUNKSEED:PATH as printed by a failure\n${USAGE}`);
      o.replay = { chunkSeed: Number(m[1]), path: m[2]! };
    } else throw new Error(`unknown argument ${a}\n${USAGE}`);
  }
  return o;
}

async function main(): Promise<number> {
  const o = parse(process.argv.slice(2));
  v8.setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const heap = () => (gc(), process.memoryUsage().heapUsed);
  const dataDir = o.durable ? fs.mkdtempSync(path.join(os.tmpdir(), "baton-fuzz-")) : null;
  const rt = await startRuntime({
    env: {
      MACP_BIND_ADDR: "127.0.0.1:0",
      MACP_ALLOW_INSECURE: "1",
      MACP_MEMORY_ONLY: dataDir ? "0" : "1",
      MACP_DATA_DIR: dataDir ?? undefined,
      MACP_MAX_PAYLOAD_BYTES: String(MAX_PAYLOAD),
      MACP_EXPIRY_SWEEP_MS: "50",
      MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
      MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
    },
    logger: pino({ level: "silent" }),
  });
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(
    o.replay
      ? `replaying chunk ${o.replay.chunkSeed}`
      : `seed ${o.seed}: ${o.cases.toLocaleString("en-US")} cases in ${o.lanes} lanes against ${rt.url}${dataDir ? ` (durable, ${dataDir})` : ""}`,
  );
  const before = heap();
  try {
    const r = await fuzzRuntime({
      url: rt.url,
      maxPayloadBytes: MAX_PAYLOAD,
      maxReceiveBytes: MAX_PAYLOAD * 4 + 65_536,
      seed: o.seed,
      cases: o.cases,
      lanes: o.lanes,
      timeoutMs: o.timeoutMs,
      replay: o.replay,
      log: say,
    });
    const after = heap();
    const s = r.stats;
    say("");
    say(
      `cases ${s.cases.toLocaleString("en-US")} in ${s.runs.toLocaleString("en-US")} runs, ${(r.durationMs / 1000).toFixed(1)} s (${Math.round(s.cases / (r.durationMs / 1000))}/s)`,
    );
    say(`verdicts: ${JSON.stringify(s.verdicts)}`);
    say(`accepted: ${JSON.stringify(s.acceptedTypes)}`);
    say(`rejections: ${JSON.stringify(s.rejectCodes)}`);
    say("most common rejection reasons:");
    for (const [reason, n] of Object.entries(s.rejectReasons)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25))
      say(`  ${String(n).padStart(7)}  ${reason}`);
    say(`raw wire: ${JSON.stringify(s.raw)}`);
    say(
      `heap: ${(before / 1048576).toFixed(1)} MiB before, ${(after / 1048576).toFixed(1)} MiB after; accepted payloads ${(s.acceptedPayloadBytes / 1048576).toFixed(2)} MiB; runtime resident sessions ${rt.kernel.stats().resident}, subscribers ${rt.kernel.stats().sessionSubscribers}`,
    );
    if (r.failure) {
      say("");
      say(`FAILED (${o.replay ? "replay" : `seed ${o.seed}`}): ${r.failure.message}`);
      say(`replay: ${r.failure.replay}`);
      return 1;
    }
    say(`seed ${o.seed}: no invariant violated`);
    return 0;
  } finally {
    await rt.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  },
);
