// The refill at the heart of a recovery: a fresh store written through the
// Store API with the log records in position order, each taken from the
// forced copy if its row verifies, else from the "as SQLite would" copy; a
// session keeps its records only while its history has no hole. What is lost
// goes to a ledger (counts per session, a sample, and on --apply the full
// list in a file); the policy registry is recovered the same way.
import fs from "node:fs";
import type { StoreLogger } from "./common";
import { decodeRow, describeRow, mergeByPosition, type Copy, type UnreadableRange } from "./recovery-source";
import type { LostRecord, LostSession, RecoveryReport } from "./recovery-report";
import { openSqliteStore } from "./sqlite";
import type { LogRecord, PolicyRecord } from "./types";

/** Records per append call while refilling, and the byte budget of one batch. */
const BATCH_RECORDS = 500;
const BATCH_BYTES = 8 * 1024 * 1024;
/** Lost records kept in memory for the report (all of them go to the file). */
const LOST_SAMPLE = 25;

/** Tracks what is lost: counts per session, a sample, and (on apply) the full list in a file. */
export class LostLedger {
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

/**
 * Write the recovered store into `outDir` from the two copies, filling in
 * `report` (recovered, rescued, lost records, missing and unreadable
 * positions, policies) and `lost`. `lostTransactions`: the damage's count of
 * committed transactions after the break, for the report's wording.
 */
export async function refillStore(
  outDir: string,
  copies: { asSqlite: Copy; forced: Copy },
  report: RecoveryReport,
  lost: LostLedger,
  lostTransactions: number,
  logger: StoreLogger,
): Promise<void> {
  const { asSqlite, forced } = copies;
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
        `after it by the ${lostTransactions} ${lostTransactions === 1 ? "transaction" : "transactions"} after the damage are lost (how many is unknown)`;
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
}
