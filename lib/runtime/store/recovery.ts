// Explicit recovery of a data folder whose write-ahead log is damaged (the
// runtime refuses to start on one: wal-check.ts). Run by an operator through
// `npm run runtime:recover` (lib/runtime/recover.ts); never automatic.
//
// What it does, all on scratch copies inside the data folder:
//   1. "as SQLite would": the database with the log cut after the last
//      commit SQLite itself accepts (everything before the damage);
//   2. "forced": the database with a rebuilt log (wal.ts rebuildWal) in
//      which every verified committed transaction after the damage counts,
//      the damaged frames included;
//   3. a fresh store (current schema, written through the Store API) filled
//      with log records in position order, each taken from the forced copy
//      if its row checksum verifies, else from the "as SQLite would" copy.
//      A record that neither copy has intact is lost, and so is every later
//      record of its session (a session's history must stay gap-free to be
//      replayed). Rows the forced copy cannot even read (a damaged b-tree
//      page) are skipped over and reported as unreadable position ranges.
//   4. the fresh store is checked by the caller (the CLI rebuilds the
//      runtime's whole state from it, as a start would).
// Without --apply that is all: the report says what would be kept and lost,
// exactly, and the scratch folder is removed. With --apply the damaged
// database and log are first copied to `damaged-<time>/` in the data folder
// (with the report and the full list of lost records), then the fresh store
// replaces them. The swap is guarded by a marker file so that an interrupted
// swap is finished by running the command again and never half-applied.
//
// This file runs those steps; the scratch copies, the backup and the guarded
// swap are recovery-files.ts, step 3 recovery-refill.ts (reading a copy:
// recovery-source.ts), and the report's shape recovery-report.ts.
import fs from "node:fs";
import path from "node:path";
import { asError, noopLogger, type StoreLogger } from "./common";
import { backupOriginals, install, makeCopy, readMarker, stamp, writeMarker, type Marker } from "./recovery-files";
import { LostLedger, refillStore } from "./recovery-refill";
import { emptyReport, type RecoveryReport } from "./recovery-report";
import { Copy } from "./recovery-source";
import { SQLITE_FILE_NAME } from "./sqlite";
import { analyzeWalFile } from "./wal";
import { describeWalDamage } from "./wal-check";

export type { LostRecord, LostSession, RecoveryReport } from "./recovery-report";
export type { UnreadableRange } from "./recovery-source";

export interface RecoverOptions {
  dir: string;
  apply: boolean;
  /** Checks the recovered store in `dir` before it is installed; returns a one-line description. Throws to abort. */
  verify?: (dir: string) => Promise<string>;
  logger?: StoreLogger;
  now?: () => Date;
}

/**
 * Plan (apply: false) or carry out (apply: true) the recovery of the data
 * folder `dir`. Never modifies anything when there is no damage.
 */
export async function recoverStore(options: RecoverOptions): Promise<RecoveryReport> {
  const logger = options.logger ?? noopLogger;
  const now = options.now ?? (() => new Date());
  const dir = path.resolve(options.dir);
  const file = path.join(dir, SQLITE_FILE_NAME);

  const marker = readMarker(dir);
  if (marker) {
    if (!options.apply) {
      const report = emptyReport(dir, file, null);
      report.status = "planned";
      report.damage = `an earlier --apply was interrupted while it replaced the damaged files (backup: ${marker.backupDir})`;
      report.backupDir = marker.backupDir;
      return report;
    }
    install(dir, marker);
    logger.warn({ dir, backupDir: marker.backupDir }, "runtime store recovery: finished an interrupted recovery");
    const report = emptyReport(dir, file, null);
    report.status = "finished";
    report.backupDir = marker.backupDir;
    return report;
  }

  if (!fs.existsSync(file) && !fs.existsSync(`${file}-wal`)) {
    throw new Error(`no runtime database in ${dir} (expected ${SQLITE_FILE_NAME}); check --data-dir / MACP_DATA_DIR`);
  }
  const analysis = analyzeWalFile(`${file}-wal`, file);
  const report = emptyReport(dir, file, analysis?.inspection ?? null);
  const damage = analysis?.inspection.damage;
  if (!analysis || !damage) return report;
  report.damage = describeWalDamage(analysis.inspection);

  const when = now();
  let backupDir: string | null = null;
  if (options.apply) {
    backupDir = path.join(dir, `damaged-${stamp(when)}`);
    backupOriginals(file, backupDir);
    report.backupDir = backupDir;
    report.lostRecordsFile = path.join(backupDir, "lost-records.jsonl");
  }

  const scratch = fs.mkdtempSync(path.join(dir, ".recovery-"));
  let installed = false;
  try {
    const asSqlite = new Copy("as SQLite would recover it", makeCopy(file, path.join(scratch, "as-sqlite"), analysis, "as-sqlite"));
    const forced = new Copy("with every verified transaction", makeCopy(file, path.join(scratch, "forced"), analysis, "forced"));
    const outDir = path.join(scratch, "recovered");
    const lost = new LostLedger(report.lostRecordsFile);
    try {
      if (asSqlite.openError) {
        throw new Error(`the database cannot be opened even as SQLite would recover it: ${asSqlite.openError}`);
      }
      report.sqliteWouldKeep = asSqlite.summary();
      if (forced.openError) {
        report.lost.afterDamageUnreadable = `the transactions after the damage cannot be read: ${forced.openError}`;
      }

      await refillStore(outDir, { asSqlite, forced }, report, lost, damage.lostTransactions, logger);
    } finally {
      lost.close();
      asSqlite.close();
      forced.close();
    }
    report.lost.records += lost.records;
    if (lost.records === 0) report.lostRecordsFile = null;
    report.lost.sessions = [...lost.sessions.values()].sort((a, b) => a.fromPosition - b.fromPosition);
    report.lost.sample = lost.sample;

    for (const extra of ["-wal", "-shm", "-journal"]) {
      if (fs.existsSync(path.join(outDir, `${SQLITE_FILE_NAME}${extra}`))) {
        throw new Error(`the recovered database did not close cleanly (${SQLITE_FILE_NAME}${extra} left behind)`);
      }
    }
    if (options.verify) {
      try {
        report.verified = await options.verify(outDir);
      } catch (e) {
        throw new Error(
          `the recovered database failed its check, so nothing was replaced (the damaged files are untouched): ${asError(e).message}`,
          { cause: e },
        );
      }
    }

    if (!options.apply || !backupDir) {
      report.status = "planned";
      return report;
    }
    fs.writeFileSync(path.join(backupDir, "recovery-report.json"), `${JSON.stringify(report, null, 2)}\n`, { mode: 0o600 });
    const m: Marker = {
      database: file,
      backupDir,
      replacement: path.join(outDir, SQLITE_FILE_NAME),
      scratch,
      startedAt: when.toISOString(),
    };
    writeMarker(dir, m);
    installed = true;
    install(dir, m);
    report.status = "applied";
    logger.warn(
      { dir, backupDir, recovered: report.recovered.records, rescued: report.rescued, lost: report.lost.records },
      "runtime store recovery: replaced the damaged database",
    );
    return report;
  } finally {
    if (!installed) fs.rmSync(scratch, { recursive: true, force: true });
  }
}
