// bench:web's options (scripts/bench-web.ts), its budgets and its progress log.
//
// Options: --runs=5 --live=40 --spacing=100 --events=1000 --big-events=20000 (0: skip) --sessions=50
//          --settle=500 (ms after load + content before LCP is read)
//          --role=operator (the console user the browser signs in as)
//          --quiet-cores=0.5 --quiet-wait=15000 (before each phase, wait up
//          to that long for other processes to leave the CPUs mostly idle)

const benchStart = performance.now();

const argv = new Map(
  process.argv.slice(2).map((a) => {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`unrecognised argument ${a}`);
    return [m[1]!, m[2] ?? "true"] as const;
  }),
);
const num = (k: string, d: number): number => {
  const v = argv.has(k) ? Number(argv.get(k)) : d;
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${k} must be a non-negative number`);
  return v;
};
export const opts = {
  runs: Math.max(1, Math.round(num("runs", 5))),
  live: Math.max(1, Math.round(num("live", 40))),
  spacingMs: num("spacing", 100),
  events: Math.max(10, Math.round(num("events", 1000))),
  bigEvents: Math.round(num("big-events", 20_000)),
  sessions: Math.max(1, Math.round(num("sessions", 50))),
  settleMs: num("settle", 500),
  /** Busy cores (all processes) under which a phase starts without waiting. */
  quietCores: num("quiet-cores", 0.5),
  /** Longest wait for quiet before each phase. */
  quietWaitMs: num("quiet-wait", 15_000),
  /** Console role of the signed-in bench user. */
  role: argv.get("role") ?? "operator",
};

// Issue 14's budgets: JS before `load` counted as sent, on every page.
export const BUDGET = {
  jsSentKiB: 160,
  referenceRunPageKiB: 260,
  lcpMs: 550,
  firstByteMs: 80,
  liveAfterLoadMs: 500,
  ackToDomP95Ms: 100,
};

export const log = (msg: string): void => {
  process.stderr.write(`[bench:web ${((performance.now() - benchStart) / 1000).toFixed(1)}s] ${msg}\n`);
};
