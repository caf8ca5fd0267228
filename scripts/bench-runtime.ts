// `npm run bench:runtime`: throughput and latency of the embedded MACP runtime
// over real gRPC, next to no-op gRPC servers measured in the same run on the
// same machine. A benchmark, not a test: it asserts nothing and exits 0 unless
// something broke; it prints a table and a final JSON blob.
//
// Layout: this process only orchestrates. Every server runs in its own child
// (scripts/bench/runtime-server.ts) and the load generator in another
// (scripts/bench/runtime-load.ts), both as `node --import tsx`, so on a 2-core machine
// server and client each get a core and the client's CPU never comes out of
// the server's budget. The options are listed in scripts/bench/runtime-options.ts;
// the phases are in runtime-phases.ts and the report in runtime-report.ts.
import { LoadChild, PROFILE_DIR } from "./bench/runtime-children";
import { machine } from "./bench/runtime-machine";
import { opts, timePlan } from "./bench/runtime-options";
import { fanoutPhase, plan, SERVER_START_MS, sendsPhase, type FanoutPoint, type SendsPoint } from "./bench/runtime-phases";
import { report } from "./bench/runtime-report";

async function main() {
  timePlan.plannedMs = plan();
  const m = machine();
  const out: string[] = [];
  const say = (s = "") => {
    out.push(s);
  };
  process.stderr.write(`bench:runtime on ${m.cores} × ${m.cpuModel}, Node ${m.node} — progress:\n`);

  let sends: { points: SendsPoint[]; describe: Record<string, string> } | null = null;
  let fanout: FanoutPoint[] | null = null;
  if (opts.only !== "fanout") {
    const load = await LoadChild.start();
    timePlan.plannedMs -= SERVER_START_MS;
    try {
      sends = await sendsPhase(load);
    } finally {
      await load.close();
    }
  }
  if (opts.only !== "sends") fanout = await fanoutPhase();

  const { lines, ratios } = report(m, sends, fanout);
  out.push(...lines);

  const totalS = timePlan.elapsedS();
  if (opts.cpuProf) {
    say("");
    say(`CPU profile of ${opts.cpuProf}: ${PROFILE_DIR}/ (npx tsx scripts/bench/profile-summary.ts <file>)`);
  }
  say("");
  say(`total bench time: ${totalS.toFixed(1)} s`);
  console.log(out.join("\n"));
  console.log("");
  console.log(
    JSON.stringify(
      {
        bench: "bench:runtime",
        at: new Date().toISOString(),
        machine: m,
        options: opts,
        sends: sends?.points ?? null,
        ratios,
        fanout,
        totalSeconds: Number(totalS.toFixed(1)),
      },
      (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? null : v),
    ),
  );
}

main().catch((e) => {
  console.error("bench:runtime failed:", e);
  process.exit(1);
});
