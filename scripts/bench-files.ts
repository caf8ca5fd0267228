// `npm run bench:files`: v0.1 file-based handoffs under load, next to plain
// file-system references measured in the same run. A benchmark, not a test:
// it asserts nothing, prints a table and a final JSON blob.
//
//   1. A directory of --files (default 100,000) handoff files: the watcher's
//      first scan with the default limit (10,000 tracked) and with every file
//      tracked, heap after each (memory follows what is tracked, not the
//      directory); a prefix search; next to a bare readdir + stat of the same files.
//   Latency: a new file until the watcher reports it, with fs.watch and polling.
//   2. A file rewritten in a tight loop for --hot-ms (default 2000): writes,
//      reads made by the watcher, history rows kept, heap growth.
//   3. Compare-and-swap accepts: sequential, and 8 contenders per handoff
//      (in-process), next to a bare write-temp + rename.
//
// Run with `node --expose-gc --import tsx scripts/bench-files.ts` (the npm
// script does) so heap figures are measured after a full collection.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { HandoffDirectory, HandoffWatcher, SqliteHistoryStore } from "@/lib/handoff-files";

const arg = (name: string, dflt: number) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : dflt;
};
const FILES = arg("files", 100_000);
const HOT_MS = arg("hot-ms", 2_000);
const CAS_N = arg("cas", 500);

const gc = (globalThis as { gc?: () => void }).gc;
function heapMiB(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 1_048_576;
}
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const rows: [string, string, string][] = [];
const out: Record<string, number> = {};
function row(name: string, value: string, reference = "") {
  rows.push([name, value, reference]);
  process.stderr.write(`  ${name}: ${value}${reference ? `  (${reference})` : ""}\n`);
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), "baton-bench-files-"));
try {
  // ---------------------------------------------------------------- 1. big directory
  const big = path.join(root, "big");
  fs.mkdirSync(big);
  process.stderr.write(`writing ${FILES} handoff files…\n`);
  const now = new Date().toISOString();
  for (let i = 0; i < FILES; i++) {
    const id = `h-${String(i).padStart(7, "0")}`;
    fs.writeFileSync(
      path.join(big, `${id}.json`),
      JSON.stringify({
        task_id: id,
        from_agent: "agent://bench",
        to_agent: "",
        status: "offered",
        description: `work item ${i}`,
        context: {},
        created_at: now,
        updated_at: now,
      }),
    );
  }
  let t = process.hrtime.bigint();
  let statted = 0;
  for (const name of fs.readdirSync(big)) {
    fs.statSync(path.join(big, name));
    statted++;
  }
  const refScan = ms(t);
  row("reference: readdir + stat of every file", `${refScan.toFixed(0)} ms for ${statted} files`);
  out.reference_scan_ms = refScan;

  const heap0 = heapMiB();
  for (const maxFiles of [10_000, FILES]) {
    const w = new HandoffWatcher({ dirs: [big], mode: "watch", maxFiles });
    let n = 0;
    w.subscribe(() => n++);
    t = process.hrtime.bigint();
    await w.start();
    const took = ms(t);
    const heap = heapMiB() - heap0;
    const st = w.status()[0];
    row(
      `watcher first scan, maxFiles ${maxFiles}`,
      `${took.toFixed(0)} ms, ${st?.tracked} tracked, ${st?.untracked} counted only, heap +${heap.toFixed(1)} MiB`,
      `${(took / refScan).toFixed(1)}× the bare scan`,
    );
    out[`watch_scan_ms_${maxFiles}`] = took;
    out[`watch_heap_mib_${maxFiles}`] = heap;
    w.stop();
  }
  const hd = new HandoffDirectory(big, { maxFiles: 10_000 });
  await hd.offer({ description: "the one to find", from: "agent://bench", taskId: "zz-unique-handoff" });
  t = process.hrtime.bigint();
  const found = await hd.resolve("zz-uni");
  row("prefix search over the whole directory", `${ms(t).toFixed(0)} ms (${found.name})`);
  out.resolve_ms = ms(t);
  t = process.hrtime.bigint();
  const listed = await hd.list();
  row("list (stops at maxFiles 10,000)", `${ms(t).toFixed(0)} ms, ${listed.handoffs.length} read, truncated ${listed.truncated}`);
  out.list_ms = ms(t);
  fs.rmSync(big, { recursive: true, force: true });

  // ---------------------------------------------------------------- latency
  for (const mode of ["watch", "poll"] as const) {
    const latDir = path.join(root, `latency-${mode}`);
    const lhd = new HandoffDirectory(latDir);
    const seen = new Map<string, number>();
    const lw = new HandoffWatcher({ dirs: [latDir], mode, pollMs: 500 });
    lw.subscribe((c) => seen.set(c.taskId, Date.now()));
    fs.mkdirSync(latDir);
    await lw.start();
    const lat: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = Date.now();
      const { snapshot: s } = await lhd.offer({ description: `l${i}`, from: "agent://bench" });
      while (!seen.has(s.record.task_id)) await new Promise((r) => setTimeout(r, 2));
      lat.push((seen.get(s.record.task_id) as number) - t0);
      await new Promise((r) => setTimeout(r, 37 * (i % 7)));
    }
    lw.stop();
    lat.sort((a, b) => a - b);
    const p50 = lat[Math.floor(lat.length / 2)] as number;
    const max = lat[lat.length - 1] as number;
    row(
      `new file → change reported (${mode}${mode === "poll" ? ", every 500 ms" : ""})`,
      `p50 ${p50} ms, max ${max} ms over ${lat.length} files`,
    );
    out[`latency_${mode}_p50_ms`] = p50;
    out[`latency_${mode}_max_ms`] = max;
  }

  // ---------------------------------------------------------------- 2. tight loop
  const hotDir = path.join(root, "hot");
  const store = new SqliteHistoryStore(path.join(root, "history.sqlite"), { maxSnapshotsPerHandoff: 1_000 });
  const hotHd = new HandoffDirectory(hotDir, { newId: () => "hot" });
  const { snapshot } = await hotHd.offer({ description: "hot", from: "agent://bench" });
  const w = new HandoffWatcher({ dirs: [hotDir], mode: "watch", history: store });
  let reads = 0;
  w.subscribe(() => reads++);
  await w.start();
  const heapHot0 = heapMiB();
  const end = Date.now() + HOT_MS;
  let writes = 0;
  while (Date.now() < end) {
    for (let i = 0; i < 50; i++) {
      const tmp = path.join(hotDir, ".hot.tmp");
      fs.writeFileSync(tmp, JSON.stringify({ ...snapshot.document, description: `rewrite ${++writes}` }));
      fs.renameSync(tmp, snapshot.path);
    }
    await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setTimeout(r, 200));
  const hotHeap = heapMiB() - heapHot0;
  const summary = store.find(hotDir, "hot.json");
  row(
    `one file rewritten in a loop for ${HOT_MS} ms`,
    `${writes} writes, ${reads} changes read, ${summary?.snapshots ?? 0} recorded (${(summary?.snapshots ?? 0) - (summary?.pruned ?? 0)} kept), heap ${hotHeap >= 0 ? "+" : ""}${hotHeap.toFixed(1)} MiB`,
    `${(writes / Math.max(1, reads)).toFixed(0)} writes per read`,
  );
  out.hot_writes = writes;
  out.hot_reads = reads;
  out.hot_heap_mib = hotHeap;
  w.stop();
  store.close();

  // ---------------------------------------------------------------- 3. compare-and-swap
  const casDir = path.join(root, "cas");
  const cas = new HandoffDirectory(casDir);
  const snaps = [];
  for (let i = 0; i < CAS_N; i++) snaps.push((await cas.offer({ description: `c${i}`, from: "agent://bench" })).snapshot);
  t = process.hrtime.bigint();
  for (const s of snaps) await cas.act(s, { kind: "accept", agent: "agent://w" });
  const casMs = ms(t) / CAS_N;
  t = process.hrtime.bigint();
  for (let i = 0; i < CAS_N; i++) {
    const tmp = path.join(casDir, `.ref-${i}.tmp`);
    const fh = fs.openSync(tmp, "w");
    fs.writeSync(fh, JSON.stringify(snaps[i]?.document));
    fs.fsyncSync(fh);
    fs.closeSync(fh);
    fs.renameSync(tmp, path.join(casDir, `ref-${i}.ref`));
  }
  const refMs = ms(t) / CAS_N;
  row(
    "accept (lock, re-read, write, fsync, rename)",
    `${casMs.toFixed(2)} ms each`,
    `${(casMs / refMs).toFixed(1)}× a bare write + fsync + rename (${refMs.toFixed(2)} ms)`,
  );
  out.cas_ms = casMs;
  out.reference_write_ms = refMs;

  const contested = [];
  for (let i = 0; i < 100; i++) contested.push((await cas.offer({ description: `r${i}`, from: "agent://bench" })).snapshot);
  t = process.hrtime.bigint();
  let wins = 0;
  let losses = 0;
  for (const s of contested) {
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, k) => cas.act(s.record.task_id, { kind: "accept", agent: `agent://w${k}` })),
    );
    wins += results.filter((r) => r.status === "fulfilled").length;
    losses += results.filter((r) => r.status === "rejected").length;
  }
  const raceMs = ms(t) / contested.length;
  row(
    "8 contenders per accept (in-process)",
    `${raceMs.toFixed(1)} ms per handoff, ${wins} wins, ${losses} refusals over ${contested.length} handoffs`,
  );
  out.race_ms = raceMs;
  out.race_wins = wins;

  const w1 = Math.max(...rows.map((r) => r[0].length));
  const w2 = Math.max(...rows.map((r) => r[1].length));
  process.stdout.write(`\n${"measurement".padEnd(w1)}  ${"result".padEnd(w2)}  reference\n`);
  for (const [a, b, c] of rows) process.stdout.write(`${a.padEnd(w1)}  ${b.padEnd(w2)}  ${c}\n`);
  process.stdout.write(
    `\n${JSON.stringify({ date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, files: FILES, ...out })}\n`,
  );
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
