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
import fs from "node:fs";
import path from "node:path";
import { asError, noopLogger, type StoreLogger } from "./common";
import { openSqliteStore, SQLITE_FILE_NAME } from "./sqlite";
import type { LogRecord, PolicyRecord } from "./types";
import { Copy, decodeRow, describeRow, mergeByPosition, type UnreadableRange } from "./recovery-source";
export type { UnreadableRange } from "./recovery-source";
import { analyzeWalFile, fileSource, rebuildWal, type WalAnalysis, type WalInspection } from "./wal";
import { describeWalDamage, RECOVERY_MARKER_FILE } from "./wal-check";

/** Records per append call while refilling, and the byte budget of one batch. */
const BATCH_RECORDS = 500;
const BATCH_BYTES = 8 * 1024 * 1024;
/** Lost records kept in memory for the report (all of them go to the file). */
const LOST_SAMPLE = 25;

export interface LostRecord {
  /** Position in the damaged database. */
  position: number;
  sessionId: string;
  kind: string;
  seq: number;
  reason: string;
}

export interface LostSession {
  sessionId: string;
  /** Records of this session that are lost (the first one and all later ones). */
  records: number;
  /** Seq of the first lost envelope (0 if the first lost record is an annotation). */
  fromSeq: number;
  fromPosition: number;
  reason: string;
}

export interface RecoveryReport {
  dataDir: string;
  database: string;
  /** no-damage: nothing to do; planned: dry run; applied: replaced; finished: completed an interrupted --apply. */
  status: "no-damage" | "planned" | "applied" | "finished";
  wal: WalInspection | null;
  /** The damage in words (empty when there is none). */
  damage: string;
  /** What SQLite's own recovery would have kept. */
  sqliteWouldKeep: { records: number; lastPosition: number };
  /** What the recovered store holds. */
  recovered: { records: number; lastPosition: number; sessions: number; policies: number };
  /** Records committed after the damage that SQLite alone would have dropped and that are recovered. */
  rescued: number;
  lost: {
    records: number;
    sessions: LostSession[];
    /** The first lost records, in position order. */
    sample: LostRecord[];
    unreadable: UnreadableRange[];
    /** Positions that no copy could provide a row for (sessions unknown); counted in `records`. */
    missing: Array<{ from: number; to: number }>;
    /** The forced copy could not be opened at all: what followed the damage is lost, count unknown. */
    afterDamageUnreadable: string | null;
    /** Policies whose latest version could not be recovered. */
    policies: string[];
  };
  /** The caller's verification of the recovered store (e.g. "rebuilt 12 sessions"). */
  verified: string;
  /** Where the damaged originals were copied (apply only). */
  backupDir: string | null;
  /** Full list of lost records, one JSON object per line (apply only). */
  lostRecordsFile: string | null;
}

export interface RecoverOptions {
  dir: string;
  apply: boolean;
  /** Checks the recovered store in `dir` before it is installed; returns a one-line description. Throws to abort. */
  verify?: (dir: string) => Promise<string>;
  logger?: StoreLogger;
  now?: () => Date;
}

interface Marker {
  database: string;
  backupDir: string;
  /** The recovered database, inside `scratch`. */
  replacement: string;
  scratch: string;
  startedAt: string;
}

function fsyncPath(p: string): void {
  const fd = fs.openSync(p, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function copyDurably(from: string, to: string): void {
  fs.copyFileSync(from, to, fs.constants.COPYFILE_EXCL);
  fsyncPath(to);
}

function stamp(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
}

/** Tracks what is lost: counts per session, a sample, and (on apply) the full list in a file. */
class LostLedger {
  records = 0;
  readonly sessions = new Map<string, LostSession>();
  readonly sample: LostRecord[] = [];
  private fd: number | null = null;

  /** `file`: where to list every lost record (created on the first one), or null. */
  constructor(private readonly file: string | null) {}

  add(lost: LostRecord): void {
    this.records++;
    if (this.sample.length < LOST_SAMPLE) this.sample.push(lost);
    const s = this.sessions.get(lost.sessionId);
    if (s) s.records++;
    else {
      this.sessions.set(lost.sessionId, {
        sessionId: lost.sessionId,
        records: 1,
        fromSeq: lost.kind === "envelope" ? lost.seq : 0,
        fromPosition: lost.position,
        reason: lost.reason,
      });
    }
    if (this.file === null) return;
    this.fd ??= fs.openSync(this.file, "wx", 0o600);
    fs.writeSync(this.fd, `${JSON.stringify(lost)}\n`);
  }

  close(): void {
    if (this.fd !== null) {
      fs.fsyncSync(this.fd);
      fs.closeSync(this.fd);
    }
  }
}

/** Per-session continuity: a session's records are kept only while its history has no hole. */
class Continuity {
  private readonly last = new Map<string, number>();
  private readonly broken = new Set<string>();

  /** A record of this session was lost: keep none of its later ones. */
  breakSession(sessionId: string): void {
    this.broken.add(sessionId);
  }

  /** null when the record can be kept, else why it cannot. */
  check(r: LogRecord): string | null {
    if (this.broken.has(r.sessionId)) return "an earlier record of its session is lost";
    const last = this.last.get(r.sessionId);
    if (r.kind === "envelope") {
      const expected = (last ?? 0) + 1;
      if (r.seq !== expected) {
        this.broken.add(r.sessionId);
        return `its session's envelopes before seq ${r.seq} are missing (expected seq ${expected})`;
      }
      this.last.set(r.sessionId, r.seq);
      return null;
    }
    if (last === undefined || r.seq !== 0) {
      this.broken.add(r.sessionId);
      return last === undefined ? "its session's start is missing" : `annotation with seq ${r.seq}`;
    }
    return null;
  }

  get sessions(): number {
    return this.last.size;
  }
}

function readMarker(dir: string): Marker | null {
  const p = path.join(dir, RECOVERY_MARKER_FILE);
  if (!fs.existsSync(p)) return null;
  const raw: unknown = JSON.parse(fs.readFileSync(p, "utf8"));
  const m = raw as Partial<Marker> | null;
  if (
    !m ||
    typeof m.database !== "string" ||
    typeof m.backupDir !== "string" ||
    typeof m.replacement !== "string" ||
    typeof m.scratch !== "string"
  ) {
    throw new Error(`${p} is not a recovery marker this version understands; inspect it and the backup folder by hand`);
  }
  return {
    database: m.database,
    backupDir: m.backupDir,
    replacement: m.replacement,
    scratch: m.scratch,
    startedAt: String(m.startedAt ?? ""),
  };
}

/** The swap: the recovered database replaces the damaged one and the damaged log goes. Idempotent. */
function install(dir: string, marker: Marker): void {
  const file = marker.database;
  const wal = `${file}-wal`;
  if (fs.existsSync(marker.replacement)) {
    for (const extra of ["-wal", "-shm", "-journal"]) fs.rmSync(`${file}${extra}`, { force: true });
    fs.renameSync(marker.replacement, file);
    fsyncPath(dir);
  } else if (fs.existsSync(wal)) {
    throw new Error(
      `cannot finish the interrupted recovery: the recovered database ${marker.replacement} is gone but the damaged ` +
        `log ${wal} is still there. The damaged originals are in ${marker.backupDir}.`,
    );
  }
  fs.rmSync(path.join(dir, RECOVERY_MARKER_FILE));
  fsyncPath(dir);
  fs.rmSync(marker.scratch, { recursive: true, force: true });
}

function emptyReport(dir: string, file: string, wal: WalInspection | null): RecoveryReport {
  return {
    dataDir: dir,
    database: file,
    status: "no-damage",
    wal,
    damage: "",
    sqliteWouldKeep: { records: 0, lastPosition: 0 },
    recovered: { records: 0, lastPosition: 0, sessions: 0, policies: 0 },
    rescued: 0,
    lost: { records: 0, sessions: [], sample: [], unreadable: [], missing: [], afterDamageUnreadable: null, policies: [] },
    verified: "",
    backupDir: null,
    lostRecordsFile: null,
  };
}

/** Copy the database and a cut or rebuilt log into `into`. */
function makeCopy(file: string, into: string, analysis: WalAnalysis, kind: "as-sqlite" | "forced"): string {
  fs.mkdirSync(into, { mode: 0o700 });
  const copy = path.join(into, SQLITE_FILE_NAME);
  if (fs.existsSync(file)) fs.copyFileSync(file, copy);
  else fs.writeFileSync(copy, new Uint8Array(0));
  const wal = analysis.inspection;
  const walFd = fs.openSync(`${file}-wal`, "r");
  try {
    const out = fs.openSync(`${copy}-wal`, "w", 0o600);
    try {
      if (kind === "forced") {
        rebuildWal(fileSource(walFd), analysis, (chunk) => void fs.writeSync(out, chunk));
      } else if (wal.headerValid) {
        // Exactly what SQLite's recovery keeps: header + frames up to the last valid commit.
        const keep = 32 + wal.committedFrames * (24 + wal.pageSize);
        const src = fileSource(walFd);
        for (let at = 0; at < keep; at += 1 << 20) fs.writeSync(out, src.read(at, Math.min(1 << 20, keep - at)));
      }
    } finally {
      fs.closeSync(out);
    }
  } finally {
    fs.closeSync(walFd);
  }
  return copy;
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
    fs.mkdirSync(backupDir, { mode: 0o700 });
    for (const suffix of ["", "-wal", "-shm", "-journal"]) {
      if (fs.existsSync(`${file}${suffix}`)) copyDurably(`${file}${suffix}`, path.join(backupDir, `${SQLITE_FILE_NAME}${suffix}`));
    }
    fsyncPath(backupDir);
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

      const out = openSqliteStore({ dir: outDir, logger });
      const continuity = new Continuity();
      let batch: LogRecord[] = [];
      let batchBytes = 0;
      let kept = 0;
      let lastKept = 0;
      let lastSeen = 0;
      const missing = (from: number, to: number) => {
        report.lost.missing.push({ from, to });
        missingCount += to - from + 1;
      };
      let missingCount = 0;
      const flush = async () => {
        if (batch.length === 0) return;
        const b = batch;
        batch = [];
        batchBytes = 0;
        await out.append(b);
      };
      try {
        const gaps = (gap: UnreadableRange) => void report.lost.unreadable.push(gap);
        for (const { position, rows } of mergeByPosition(
          forced.rows(gaps),
          asSqlite.rows(() => undefined),
        )) {
          // Positions are rowids handed out as max + 1 and never deleted: a hole is a row no copy could read.
          if (position > lastSeen + 1) missing(lastSeen + 1, position - 1);
          lastSeen = position;
          let record: LogRecord | null = null;
          let error = "";
          for (const row of rows) {
            const d = decodeRow(row);
            if ("record" in d) {
              record = d.record;
              break;
            }
            error ||= d.error;
          }
          const why = record ? continuity.check(record) : error;
          if (!record || why) {
            const shown = record ?? describeRow(rows[0]!);
            continuity.breakSession(shown.sessionId);
            lost.add({ position, sessionId: shown.sessionId, kind: shown.kind, seq: shown.seq, reason: why ?? error });
            continue;
          }
          batch.push(record);
          batchBytes += record.envelope.length + (record.boundPolicy?.length ?? 0);
          kept++;
          lastKept = position;
          if (position > report.sqliteWouldKeep.lastPosition) report.rescued++;
          if (batch.length >= BATCH_RECORDS || batchBytes >= BATCH_BYTES) await flush();
        }
        await flush();
        const forcedLast = forced.lastPosition();
        const claimed = Math.max(forcedLast ?? 0, asSqlite.lastPosition() ?? 0);
        if (claimed > lastSeen) missing(lastSeen + 1, claimed);
        const trailingGap = report.lost.unreadable.some((g) => g.beforePosition === null);
        if (!forced.openError && (forcedLast === null || (trailingGap && forcedLast <= lastSeen))) {
          report.lost.afterDamageUnreadable =
            `the log of the copy with every transaction cannot be read past position ${lastSeen}, so records committed ` +
            `after it by the ${damage.lostTransactions} ${damage.lostTransactions === 1 ? "transaction" : "transactions"} after the damage are lost (how many is unknown)`;
        }

        // Policies: the forced copy's registry when it reads, else the one before the damage.
        const badForced = new Set<string>();
        const badBefore = new Set<string>();
        const before = asSqlite.policies(badBefore) ?? new Map<string, PolicyRecord>();
        const after = forced.policies(badForced);
        const target = new Map(after ?? before);
        if (!after && !forced.openError) report.lost.policies.push("(the policy registry after the damage cannot be read)");
        for (const id of badForced) {
          const old = before.get(id);
          if (old) target.set(id, old);
          report.lost.policies.push(old ? `${id} (its version from before the damage is kept)` : id);
        }
        for (const id of badBefore) if (!target.has(id) && !after) report.lost.policies.push(id);
        for (const p of target.values()) await out.putPolicy(p);
        report.recovered = { records: kept, lastPosition: lastKept, sessions: continuity.sessions, policies: target.size };
        report.lost.records = missingCount;
      } finally {
        await out.close();
      }
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
    const markerPath = path.join(dir, RECOVERY_MARKER_FILE);
    fs.writeFileSync(markerPath, `${JSON.stringify(m, null, 2)}\n`, { mode: 0o600 });
    fsyncPath(markerPath);
    fsyncPath(dir);
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
