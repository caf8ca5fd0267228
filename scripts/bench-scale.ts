// `npm run bench:scale`: what history costs. Seeds a fresh store through gRPC
// with 10,000 and then 100,000 sessions (at least five envelopes each, handoff
// and task mixed, 1% left open, some 1 MB contexts, plus one resolved session
// holding 300 × 1 MB of contexts), and after each size runs every section:
// the runtime (restart time and memory, never-reading subscribers) and the
// console (cold start with a backfill of the catalog, warm start, search,
// never-reading browser streams) and the web pages in Chromium (first rows of
// a warm list page, a search for one session, opening its page), each a module (scripts/bench/scale-*.ts
// implementing ScaleSection) listed in SECTIONS. --sections=console runs only
// the named ones.
//
// A benchmark, not a test: it prints a table per section and a final JSON
// blob, and exits 0 unless something broke. Targets are ratios against the
// first size measured in the same run, plus absolute memory bounds. Nothing is
// cached between runs unless asked: by default the store is created empty in a
// temporary folder and deleted at the end (--keep keeps it); --data=DIR seeds
// into DIR and keeps it, and a later run with the same --data reuses what is
// already seeded there (it records what it seeded in DIR/bench-scale.json) and
// only seeds the difference up to each size.
//
// Layout: this process orchestrates; the runtime runs as `npm run runtime`
// does (scale-runtime-process.ts), the seeder (scale-seed.ts) and the
// subscribers (scale-subscribers.ts) in their own processes, so each RSS is
// only its own.
//
// Options (all optional):
//   --sizes=10000,100000   history sizes, ascending (sessions, the large one included)
//   --concurrency=192      sessions seeded at once
//   --open-every=100       one session in N is left open (1%)
//   --big-every=500        one session in N carries a context of --big-bytes
//   --big-bytes=1000000    (just under the 1 MiB payload limit with its envelope)
//   --big-contexts=300     contexts of --big-bytes in the large session (300 MB)
//   --keep                 keep the data folder and print its path
//   --sections=console     run only these sections (runtime, console, web); --sections=none seeds only
//   --data=/tmp/scale100k  seed into this folder and keep it; if it already holds a seeded
//                          store (bench-scale.json), reuse it: sizes up to what it holds are
//                          measured at what it holds (no seeding), larger ones seed the rest.
//                          The seeding options must match the first run's.
import { fork, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  fmt,
  fmtInt,
  mib,
  type ScaleContext,
  type ScaleSection,
  type SeedCommand,
  type SeedReply,
  type SeedResult,
} from "./bench/scale-common";
import { startRuntimeProcess, type RuntimeProcess } from "./bench/scale-runtime-process";
import { consoleSection } from "./bench/scale-console";
import { runtimeSection } from "./bench/scale-runtime";
import { webSection } from "./bench/scale-web";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const started = performance.now();

const argv = new Map(
  process.argv.slice(2).map((a) => {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(a);
    if (!m) throw new Error(`unrecognised argument ${a}`);
    return [m[1]!, m[2] ?? "true"] as const;
  }),
);
const num = (k: string, d: number) => (argv.has(k) ? Number(argv.get(k)) : d);
const opts = {
  sizes: argv.has("sizes") ? argv.get("sizes")!.split(",").map(Number) : [10_000, 100_000],
  concurrency: num("concurrency", 192),
  openEvery: num("open-every", 100),
  bigEvery: num("big-every", 500),
  bigBytes: num("big-bytes", 1_000_000),
  bigContexts: num("big-contexts", 300),
  keep: argv.has("keep") || argv.has("data"),
  data: argv.get("data") ?? null,
};

/** What a kept data folder holds, so a later --data run can reuse it. */
interface SeededManifest {
  tag: string;
  seeded: number;
  open: number;
  bigSessionId: string;
  options: { openEvery: number; bigEvery: number; bigBytes: number; bigContexts: number };
}
const MANIFEST = "bench-scale.json";

const ALL_SECTIONS: ScaleSection<unknown>[] = [
  runtimeSection,
  consoleSection as ScaleSection<unknown>,
  webSection as ScaleSection<unknown>,
];
const only = argv.get("sections")?.split(",");
const SECTIONS = only ? ALL_SECTIONS.filter((s) => only.includes(s.name)) : ALL_SECTIONS;

const out: string[] = [];
const say = (line: string) => {
  out.push(line);
  process.stderr.write(`${line}\n`);
};

class Seeder {
  private nextId = 1;
  private constructor(private readonly child: ChildProcess) {}

  static async start(): Promise<Seeder> {
    const child = fork(path.join(ROOT, "scripts", "bench", "scale-seed.ts"), [], {
      cwd: ROOT,
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      env: { ...process.env, NODE_ENV: "production" },
    });
    await new Promise<void>((resolve, reject) => {
      child.once("message", (m: SeedReply) => (m.type === "ready" ? resolve() : reject(new Error("unexpected reply"))));
      child.once("exit", (code) => reject(new Error(`seeder exited with ${code}`)));
    });
    return new Seeder(child);
  }

  run(
    cmd: Omit<Extract<SeedCommand, { type: "seed" }>, "id"> | Omit<Extract<SeedCommand, { type: "big-session" }>, "id">,
  ): Promise<SeedReply> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onMessage = (m: SeedReply) => {
        if (!("id" in m) || m.id !== id) return;
        this.child.off("message", onMessage);
        if (m.type === "failed") reject(new Error(`seeding failed: ${m.error}`));
        else resolve(m);
      };
      this.child.on("message", onMessage);
      this.child.send({ ...cmd, id });
    });
  }

  close(): void {
    this.child.send({ type: "exit", id: 0 });
  }
}

function dirBytes(dir: string): number {
  return fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
}

async function main(): Promise<void> {
  const dataDir = opts.data ? path.resolve(opts.data) : fs.mkdtempSync(path.join(os.tmpdir(), "baton-bench-scale-"));
  fs.mkdirSync(dataDir, { recursive: true });
  const manifestPath = path.join(dataDir, MANIFEST);
  const reused: SeededManifest | null = fs.existsSync(manifestPath)
    ? (JSON.parse(fs.readFileSync(manifestPath, "utf8")) as SeededManifest)
    : null;
  if (reused) {
    const o = reused.options;
    if (
      o.openEvery !== opts.openEvery ||
      o.bigEvery !== opts.bigEvery ||
      o.bigBytes !== opts.bigBytes ||
      o.bigContexts !== opts.bigContexts
    ) {
      throw new Error(`${manifestPath} was seeded with other options (${JSON.stringify(o)}); use another --data folder`);
    }
  } else if (fs.readdirSync(dataDir).length > 0) {
    throw new Error(`--data=${dataDir} is not empty and holds no ${MANIFEST}: refusing to seed into it`);
  }
  const runtimeEnv: Record<string, string> = {
    MACP_BIND_ADDR: "127.0.0.1:0",
    MACP_ALLOW_INSECURE: "1",
    MACP_DATA_DIR: dataDir,
    // Seeding sends far more than an agent would: the runtime's rate limits are off.
    MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
    MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
  };
  const startRuntime = (extra: Record<string, string> = {}): Promise<RuntimeProcess> => startRuntimeProcess({ ...runtimeEnv, ...extra });
  const tag = reused?.tag ?? Math.random().toString(36).slice(2, 8);
  const cpu = os.cpus();
  say(`bench:scale, ${new Date().toISOString()}: ${cpu.length} × ${cpu[0]?.model ?? "?"}, Node ${process.version}, store in ${dataDir}`);
  say(
    `sizes ${opts.sizes.join(", ")}; 1 in ${opts.openEvery} left open; 1 in ${opts.bigEvery} with a ${fmtInt(opts.bigBytes)}-byte context; one session with ${opts.bigContexts} × ${fmtInt(opts.bigBytes)} bytes`,
  );

  const seeder = await Seeder.start();
  const seeding: {
    sessions: number;
    open: number;
    envelopes: number;
    payloadBytes: number;
    ms: number;
    storeBytes: number;
    seedingRuntimeRssBytes: number;
  }[] = [];
  const perSection = new Map<string, { sessions: number; open: number; result: unknown }[]>(SECTIONS.map((s) => [s.name, []]));
  let seeded = reused?.seeded ?? 0;
  let open = reused?.open ?? 0;
  let bigSessionId = reused?.bigSessionId ?? "";
  if (reused) say(`reusing ${fmtInt(seeded)} sessions (${fmtInt(open)} open) seeded in ${dataDir}`);
  try {
    for (const size of opts.sizes) {
      say("");
      if (size > seeded) {
        say(`== ${fmtInt(size)} sessions: seeding ${fmtInt(size - seeded)} more through gRPC`);
        const rt = await startRuntime();
        const t0 = performance.now();
        const batch: SeedResult = { sessions: 0, open: 0, envelopes: 0, bytes: 0, ms: 0 };
        const add = (r: SeedResult) => {
          batch.sessions += r.sessions;
          batch.open += r.open;
          batch.envelopes += r.envelopes;
          batch.bytes += r.bytes;
        };
        if (!bigSessionId) {
          const r = await seeder.run({ type: "big-session", url: rt.url, tag, contexts: opts.bigContexts, bytes: opts.bigBytes });
          if (r.type !== "big-seeded") throw new Error("unexpected reply");
          bigSessionId = r.sessionId;
          add(r.result);
        }
        const r = await seeder.run({
          type: "seed",
          url: rt.url,
          from: seeded,
          count: size - seeded - batch.sessions,
          concurrency: opts.concurrency,
          openEvery: opts.openEvery,
          bigEvery: opts.bigEvery,
          bigBytes: opts.bigBytes,
          tag,
        });
        if (r.type !== "seeded") throw new Error("unexpected reply");
        add(r.result);
        batch.ms = performance.now() - t0;
        const seedingRss = rt.rss();
        await rt.stop();
        seeded += batch.sessions;
        open += batch.open;
        const storeBytes = dirBytes(dataDir);
        seeding.push({
          sessions: seeded,
          open,
          envelopes: batch.envelopes,
          payloadBytes: batch.bytes,
          ms: Math.round(batch.ms),
          storeBytes,
          seedingRuntimeRssBytes: seedingRss,
        });
        say(
          `  seeded ${fmtInt(batch.sessions)} sessions, ${fmtInt(batch.envelopes)} envelopes (${mib(batch.bytes)} of payloads) in ${fmt(batch.ms / 1000, 1)} s ` +
            `(${fmtInt(batch.envelopes / (batch.ms / 1000))} envelopes/s); store ${mib(storeBytes)}; runtime RSS at the end of seeding ${mib(seedingRss)}`,
        );
        if (opts.keep) {
          const m: SeededManifest = {
            tag,
            seeded,
            open,
            bigSessionId,
            options: { openEvery: opts.openEvery, bigEvery: opts.bigEvery, bigBytes: opts.bigBytes, bigContexts: opts.bigContexts },
          };
          fs.writeFileSync(manifestPath, JSON.stringify(m));
        }
      } else {
        say(`== ${fmtInt(seeded)} sessions already seeded in ${dataDir} (asked for ${fmtInt(size)}): no seeding`);
      }
      const ctx: ScaleContext = {
        sessions: seeded,
        open,
        dataDir,
        runtimeEnv,
        startRuntime,
        bigSessionId,
        bigSessionBytes: opts.bigContexts * opts.bigBytes,
        readerIdentity: "agent://owner-0",
        say,
      };
      for (const section of SECTIONS) {
        say(`-- ${section.name} at ${fmtInt(seeded)} sessions (${fmtInt(open)} open)`);
        perSection.get(section.name)!.push({ sessions: seeded, open, result: await section.measure(ctx) });
      }
    }
  } finally {
    seeder.close();
    if (opts.keep) say(`data folder kept: ${dataDir}`);
    else fs.rmSync(dataDir, { recursive: true, force: true });
  }

  const reports: Record<string, unknown> = {};
  say("");
  say("Seeding (through gRPC Send, pipelined; the runtime's rate limits off):");
  for (const s of seeding) {
    say(
      `  up to ${fmtInt(s.sessions)} sessions (${fmtInt(s.open)} open): ${fmtInt(s.envelopes)} envelopes in ${fmt(s.ms / 1000, 1)} s; ` +
        `store ${mib(s.storeBytes)}; runtime RSS at the end of seeding ${mib(s.seedingRuntimeRssBytes)}`,
    );
  }
  for (const section of SECTIONS) {
    say("");
    reports[section.name] = section.report(perSection.get(section.name) as { sessions: number; open: number; result: never }[], say);
  }
  const totalS = (performance.now() - started) / 1000;
  say("");
  say(`total bench time: ${fmt(totalS, 1)} s`);
  console.log(out.join("\n"));
  console.log("");
  console.log(
    JSON.stringify(
      {
        bench: "bench:scale",
        at: new Date().toISOString(),
        machine: { cpus: cpu.length, model: cpu[0]?.model ?? "", node: process.version, totalMemBytes: os.totalmem() },
        options: opts,
        seeding,
        sections: reports,
        totalSeconds: Number(totalS.toFixed(1)),
      },
      (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? null : v),
    ),
  );
}

main().catch((e) => {
  console.error("bench:scale failed:", e);
  process.exit(1);
});
