// bench:runtime's options (scripts/bench-runtime.ts) and its time plan.
//
// Options (all optional):
//   --duration=MS     measured time per point           (default 5000)
//   --warmup=MS       warm-up before each point          (default 1000)
//   --levels=1,16,64  concurrent callers for the Send points
//   --subs=100,1000   passive subscribers for the fan-out points
//   --rate=N          accepted envelopes per second during fan-out (default 20)
//   --subs-per-conn=N subscribers per HTTP/2 connection (default 125)
//   --subscriber-client=raw|connect  fan-out subscribers as lean node:http2
//                     gRPC readers (default) or as connect-node clients
//   --context-bytes=N HandoffContextPayload.context size (default 64)
//   --only=sends|fanout
//   --memory-row      add a MACP_MEMORY_ONLY=1 runtime row (diagnostic)
//   --no-connect-runtime  skip the "runtime (durable) on connect-node" row
//                     (the same runtime with MACP_GRPC_SERVER=connect)
//   --no-fanout-ceilings  skip the no-op fan-out brokers (largest level only)
//   --cpu-prof=KIND   write a V8 CPU profile of that server kind (e.g.
//                     runtime-durable) to $TMPDIR/baton-bench-runtime-profiles/; read
//                     it with scripts/bench/profile-summary.ts
//   --quiet-cores=X   before each point, wait until other processes use less
//                     than X cores (default 0.3), at most
//   --quiet-wait-per-point=MS (default 10000)
//   --retries=N       re-run a point disturbed by other processes up to N times
//                     (default 2) and keep the least disturbed run
//   --budget=MS       total time the bench aims for (default 170000): waits and
//                     repeats only spend what the remaining points leave over

const started = performance.now();

const argv = new Map(
  process.argv.slice(2).map((a) => {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`unrecognised argument ${a}`);
    return [m[1]!, m[2] ?? "true"] as const;
  }),
);
const num = (k: string, d: number) => (argv.has(k) ? Number(argv.get(k)) : d);
const list = (k: string, d: number[]) => (argv.has(k) ? argv.get(k)!.split(",").map(Number) : d);
export const opts = {
  durationMs: num("duration", 5_000),
  warmupMs: num("warmup", 1_000),
  levels: list("levels", [1, 16, 64]),
  subscribers: list("subs", [100, 1_000]),
  ratePerSecond: num("rate", 20),
  subscribersPerConnection: num("subs-per-conn", 125),
  subscriberClient: (argv.get("subscriber-client") === "connect" ? "connect" : "raw") as "raw" | "connect",
  contextBytes: num("context-bytes", 64),
  only: argv.get("only") ?? "all",
  memoryRow: argv.has("memory-row"),
  connectRuntime: !argv.has("no-connect-runtime"),
  fanoutCeilings: !argv.has("no-fanout-ceilings"),
  cpuProf: argv.get("cpu-prof") ?? null,
  /** Background load (cores) under which a point starts without waiting. */
  quietCores: num("quiet-cores", 0.3),
  quietWaitPerPointMs: num("quiet-wait-per-point", 10_000),
  /** Extra runs of a point disturbed by other processes, within the budget. */
  retries: num("retries", 2),
  /** No repeat run starts if it would end after this much total bench time. */
  budgetMs: num("budget", 170_000),
};

/**
 * Time plan. `plannedMs` is what the points not yet run will take; whatever
 * the budget leaves beyond that (the slack) may go to waiting for a quiet
 * machine and to repeating disturbed points, so the bench ends in time.
 */
export const timePlan = {
  plannedMs: 0,
  slackMs: (): number => opts.budgetMs - (performance.now() - started) - timePlan.plannedMs,
  /** Seconds since the bench started. */
  elapsedS: (): number => (performance.now() - started) / 1000,
};
