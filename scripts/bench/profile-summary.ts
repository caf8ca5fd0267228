// Summarise a V8 .cpuprofile (from `npm run bench:runtime -- --cpu-prof=KIND`):
// self time by function and by package/area, so "where does the time go" can
// be answered without a GUI.
//
//   npx tsx scripts/bench/profile-summary.ts $TMPDIR/baton-bench-runtime-profiles/CPU.*.cpuprofile [--top=40]
import fs from "node:fs";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function area(url: string, fn: string): string {
  if (fn === "(garbage collector)") return "GC";
  if (fn === "(idle)") return "idle";
  if (fn === "(program)") return "(program: native/runtime)";
  if (url === "") return "native/builtin";
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith("node:")) return url.replace(/^node:internal\/([^/]+).*/, "node:$1").replace(/^node:([^/]+).*/, "node:$1");
  const m = /\/(lib\/[^?]+|scripts\/[^?]+)/.exec(url);
  return m ? m[1]! : url;
}

const args = process.argv.slice(2);
const top = Number(args.find((a) => a.startsWith("--top="))?.slice(6) ?? 40);
for (const file of args.filter((a) => !a.startsWith("--"))) {
  const p = JSON.parse(fs.readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  const total = (p.endTime - p.startTime) / 1000;
  const fnTime = new Map<string, number>();
  const areaTime = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const f = n.callFrame;
    const a = area(f.url, f.functionName);
    const key = `${f.functionName || "(anonymous)"}  ${a}:${f.lineNumber + 1}`;
    fnTime.set(key, (fnTime.get(key) ?? 0) + us / 1000);
    areaTime.set(a, (areaTime.get(a) ?? 0) + us / 1000);
  }
  const busy = total - (areaTime.get("idle") ?? 0);
  console.log(`\n${file}: ${total.toFixed(0)} ms profiled, ${busy.toFixed(0)} ms not idle`);
  console.log("\nby area (self time, % of non-idle):");
  for (const [a, ms] of [...areaTime].sort((x, y) => y[1] - x[1]).slice(0, 25)) {
    if (a === "idle") continue;
    console.log(`  ${((ms / busy) * 100).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(7)} ms  ${a}`);
  }
  console.log(`\ntop ${top} functions (self time):`);
  for (const [k, ms] of [...fnTime].sort((x, y) => y[1] - x[1]).slice(0, top)) {
    if (k.startsWith("(idle)")) continue;
    console.log(`  ${((ms / busy) * 100).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(7)} ms  ${k}`);
  }
}
