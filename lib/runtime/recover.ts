// `npm run runtime:recover`: explicit recovery of a runtime data folder whose
// write-ahead log is damaged (the runtime refuses to start on one and names
// this command). Without --apply it only reports; see store/recovery.ts.
import path from "node:path";
import pino from "pino";
import { loadConfig } from "./config";
import { Kernel } from "./kernel";
import { openSqliteStore } from "./store";
import { recoverStore, type RecoveryReport } from "./store/recovery";
import { recoveryCommand } from "./store/wal-check";

const USAGE = `Usage: npm run runtime:recover -- [--data-dir DIR] [--apply] [--json]

Checks the runtime database in DIR (default: $MACP_DATA_DIR, else $BATON_DATA_DIR/runtime, i.e. ./data/runtime) for a
damaged write-ahead log and says what a recovery would keep and lose.
Stop the runtime (and the console embedding it) first.

  --apply     copy the damaged database and log to DIR/damaged-<time>/, then replace
              them with the recovered database (also finishes an interrupted --apply)
  --json      print the report as JSON
  --data-dir  the runtime's data folder

Exit status: 0 nothing to do or recovered, 2 damage found (report only, nothing
changed), 1 error, 64 usage error.`;

interface Args {
  dataDir: string | null;
  apply: boolean;
  json: boolean;
}

function parseArgs(argv: string[]): Args | string {
  const args: Args = { dataDir: null, apply: false, json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--apply") args.apply = true;
    else if (a === "--json") args.json = true;
    else if (a === "--data-dir" || a.startsWith("--data-dir=")) {
      const v = a.includes("=") ? a.slice(a.indexOf("=") + 1) : argv[++i];
      if (!v) return "--data-dir needs a folder";
      args.dataDir = v;
    } else if (a === "--help" || a === "-h") return "";
    else return `unknown argument: ${a}`;
  }
  return args;
}

/** Rebuild the runtime's whole state from the recovered store, as a start would. */
async function verifyByRebuilding(dir: string): Promise<string> {
  const store = openSqliteStore({ dir });
  try {
    const config = loadConfig({ MACP_DATA_DIR: dir, MACP_MEMORY_ONLY: "0", MACP_ALLOW_INSECURE: "1" });
    const kernel = await Kernel.open({ store, config, logger: pino({ level: "silent" }) });
    const stats = kernel.stats();
    await kernel.close();
    // Count the sessions the rebuilt index holds, a page at a time.
    let sessions = 0;
    for (let after = 0; ;) {
      const page = store.listSessions({ afterPosition: after, limit: 1_000 });
      sessions += page.length;
      const last = page.at(-1);
      if (!last || page.length < 1_000) break;
      after = last.firstPosition;
    }
    return `the runtime state rebuilds from it (${sessions} sessions, ${stats.open} open)`;
  } finally {
    await store.close();
  }
}

const fmt = (v: number) => v.toLocaleString("en-US");

function text(r: RecoveryReport, apply: boolean): string {
  const lines: string[] = [`Baton runtime store: ${r.database}`, ""];
  if (r.status === "no-damage") {
    const w = r.wal;
    lines.push(
      w
        ? `The write-ahead log (${fmt(w.bytes)} bytes) is not damaged: a start replays its ${fmt(w.committedTransactions)} committed ` +
            "transactions and loses nothing acknowledged. Nothing to do."
        : "There is no write-ahead log (the runtime shut down cleanly). Nothing to do.",
    );
    return lines.join("\n");
  }
  if (r.status === "finished") {
    lines.push(`Finished the interrupted recovery. The damaged originals are in ${r.backupDir}.`, "The runtime can be started again.");
    return lines.join("\n");
  }
  if (!r.wal) {
    lines.push(`Found: ${r.damage}.`, "", `Run again with --apply to finish it.`);
    return lines.join("\n");
  }
  lines.push("Found:", `  ${r.damage}`, "");
  lines.push(
    `SQLite alone would keep ${fmt(r.sqliteWouldKeep.records)} log records (up to position ${fmt(r.sqliteWouldKeep.lastPosition)}).`,
    "",
    r.status === "applied" ? "Recovered:" : "A recovery (--apply) would keep:",
    `  ${fmt(r.recovered.records)} log records in ${fmt(r.recovered.sessions)} sessions, ${fmt(r.recovered.policies)} registered policies;`,
    `  ${fmt(r.rescued)} of those records were committed after the damage.`,
  );
  if (r.verified) lines.push(`  Checked: ${r.verified}.`);
  lines.push("");
  const lost = r.lost;
  if (lost.records === 0 && !lost.afterDamageUnreadable && lost.policies.length === 0) {
    lines.push(r.status === "applied" ? "Lost: nothing." : "It would lose nothing.");
  } else {
    lines.push(r.status === "applied" ? "Lost:" : "It would lose:");
    if (lost.afterDamageUnreadable) lines.push(`  everything committed after the damage: ${lost.afterDamageUnreadable}`);
    if (lost.records > 0) lines.push(`  ${fmt(lost.records)} log records:`);
    if (lost.sessions.length > 0) {
      for (const s of lost.sessions.slice(0, 20)) {
        const from = s.fromSeq > 0 ? `from seq ${s.fromSeq}` : `from position ${s.fromPosition}`;
        lines.push(`    ${s.sessionId}: ${fmt(s.records)} records ${from} on (${s.reason})`);
      }
      if (lost.sessions.length > 20) lines.push(`    … and ${fmt(lost.sessions.length - 20)} more sessions`);
    }
    for (const m of lost.missing) {
      const span = m.from === m.to ? `position ${fmt(m.from)}` : `positions ${fmt(m.from)}–${fmt(m.to)}`;
      lines.push(
        `  ${span}: ${fmt(m.to - m.from + 1)} records that no copy could read (sessions unknown; their sessions lose what follows)`,
      );
    }
    for (const g of lost.unreadable) {
      const to = g.beforePosition === null ? "the end of the log" : `position ${fmt(g.beforePosition)}`;
      lines.push(
        `  (the copy with every transaction cannot read its log after position ${fmt(g.afterPosition)} up to ${to}: ${g.error}; rows the pre-damage copy has there are kept)`,
      );
    }
    for (const p of lost.policies) lines.push(`  policy ${p}`);
  }
  lines.push("");
  if (r.status === "applied") {
    lines.push(
      `The damaged database and log were copied to ${r.backupDir}`,
      `(with recovery-report.json${r.lost.records > 0 ? " and lost-records.jsonl, every lost record" : ""}).`,
      "The runtime can be started again.",
    );
  } else {
    lines.push(
      "Nothing was changed. To recover, run:",
      `  ${recoveryCommand(r.dataDir, true)}`,
      "It first copies the damaged database and log to a damaged-<time>/ folder in the data folder.",
    );
    if (apply) lines.push("(--apply did not run: see above.)");
  }
  return lines.join("\n");
}

async function main(): Promise<number> {
  const parsed = parseArgs(process.argv.slice(2));
  if (typeof parsed === "string") {
    process.stderr.write(parsed ? `${parsed}\n\n${USAGE}\n` : `${USAGE}\n`);
    return parsed ? 64 : 0;
  }
  const dir = parsed.dataDir ? path.resolve(parsed.dataDir) : loadConfig(process.env).dataDir;
  const report = await recoverStore({ dir, apply: parsed.apply, verify: verifyByRebuilding });
  process.stdout.write(parsed.json ? `${JSON.stringify(report, null, 2)}\n` : `${text(report, parsed.apply)}\n`);
  return report.status === "planned" ? 2 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`runtime store recovery failed: ${(e as Error).message}\n`);
    process.exit(1);
  },
);
