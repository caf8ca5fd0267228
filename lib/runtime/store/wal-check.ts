// The open-time decision about a WAL left by a previous process (see wal.ts
// for how it is analysed): start, start with a warning, or refuse.
//
//   - no WAL, or every frame committed: start (info);
//   - a torn or unfinished last transaction, stale frames of an earlier
//     generation, an invalid header whose frames are already in the
//     database: start; SQLite drops only what was never acknowledged (warn);
//   - committed transactions after the point where SQLite's replay stops
//     (a damaged frame followed by valid commits, or an invalid header in
//     front of committed frames): refuse with WalDamageError, before SQLite
//     touches the files, and point at the recovery command
//     (`npm run runtime:recover`, lib/runtime/recover.ts).
//
// A recovery that was interrupted between replacing the database and
// removing the damaged log leaves a marker file; the runtime refuses to open
// until the recovery command has finished it.
import fs from "node:fs";
import path from "node:path";
import type { StoreLogger } from "./common";
import { StoreCorruptionError } from "./types";
import { inspectWalFile, type WalInspection } from "./wal";

/** Written by the recovery command while it swaps files; present only if it was interrupted. */
export const RECOVERY_MARKER_FILE = "RECOVERY-IN-PROGRESS.json";

/** The command an operator runs for the data folder `dir`. */
export function recoveryCommand(dir: string, apply = false): string {
  const quoted = /^[\w./@:+-]+$/.test(dir) ? dir : `'${dir.replaceAll("'", "'\\''")}'`;
  return `npm run runtime:recover -- --data-dir ${quoted}${apply ? " --apply" : ""}`;
}

/** The write-ahead log holds committed transactions that SQLite's recovery would drop. */
export class WalDamageError extends StoreCorruptionError {
  constructor(
    message: string,
    readonly inspection: WalInspection | null,
  ) {
    super(message);
    this.name = "WalDamageError";
  }
}

function n(v: number): string {
  return v.toLocaleString("en-US");
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${n(count)} ${count === 1 ? one : many}`;
}

/** One paragraph: what is damaged and what SQLite alone would drop. */
export function describeWalDamage(wal: WalInspection): string {
  const d = wal.damage;
  if (!d) return "the write-ahead log is intact";
  const lost = `${plural(d.lostTransactions, "committed transaction")} (${plural(d.lostFrames, "frame")})`;
  if (d.kind === "header") {
    return (
      `The write-ahead log's header is invalid (${d.reason}), so SQLite would ignore ` +
      `the whole file, yet it holds ${lost} whose pages are not in the database file.`
    );
  }
  const kept =
    wal.committedTransactions === 0
      ? "would keep nothing from the log"
      : `would keep only the ${plural(wal.committedTransactions, "transaction")} before it`;
  return (
    `Frame ${n(d.frame)} of ${n(d.totalFrames)} in the write-ahead log (byte ${n(d.offset)}) is damaged: ${d.reason}. ` +
    `${lost[0]!.toUpperCase()}${lost.slice(1)} ${d.lostTransactions === 1 ? "follows" : "follow"} it, up to frame ` +
    `${n(d.lastCommitFrame)}; SQLite's own recovery ${kept} and silently drop the rest.`
  );
}

function refuse(file: string, wal: WalInspection): WalDamageError {
  const dir = path.dirname(file);
  return new WalDamageError(
    `runtime store ${file}: refusing to start because the write-ahead log is damaged. ${describeWalDamage(wal)} ` +
      "Those transactions were acknowledged to agents, and starting would lose them for good. Nothing on disk " +
      `has been changed. To see what can be recovered and exactly what would be lost, run \`${recoveryCommand(dir)}\`; ` +
      "to recover, run it again with --apply (it copies the damaged files aside first). Do not delete the -wal file.",
    wal,
  );
}

/**
 * Inspect `<file>-wal` before SQLite opens `file`, and throw WalDamageError
 * if starting would silently drop committed transactions. Returns the
 * inspection (null when there is no WAL).
 */
export function checkWalBeforeOpen(file: string): WalInspection | null {
  const dir = path.dirname(file);
  if (fs.existsSync(path.join(dir, RECOVERY_MARKER_FILE))) {
    throw new WalDamageError(
      `runtime store ${file}: a recovery of this data folder was interrupted while it replaced the damaged files ` +
        `(${path.join(dir, RECOVERY_MARKER_FILE)} is present). Run \`${recoveryCommand(dir, true)}\` to finish it; ` +
        "the damaged originals are in the backup folder named in that file.",
      null,
    );
  }
  const wal = inspectWalFile(`${file}-wal`, file);
  if (wal?.damage) throw refuse(file, wal);
  return wal;
}

/** Log what SQLite is about to do with a WAL that passed checkWalBeforeOpen. */
export function logWalRecovery(
  logger: StoreLogger,
  file: string,
  wal: WalInspection,
  after: { records: number; lastPosition: number },
): void {
  const fields = {
    path: file,
    walBytes: wal.bytes,
    replayedTransactions: wal.committedTransactions,
    replayedFrames: wal.committedFrames,
    ignoredFrames: wal.ignoredFrames,
    uncommittedFrames: wal.uncommittedFrames,
    staleFrames: wal.staleFrames,
    tornTailBytes: wal.tornTailBytes,
    records: after.records,
    lastPosition: after.lastPosition,
  };
  if (wal.alreadyInDatabase) {
    logger.warn(
      { ...fields, alreadyInDatabase: true },
      "runtime store: the write-ahead log was being restarted when the previous run stopped (its header or first " +
        "frames are not the ones its committed frames belong to); those frames are all already in the database " +
        "file, so nothing is lost",
    );
  } else if (!wal.headerValid) {
    logger.warn(
      { ...fields, alreadyInDatabase: false },
      "runtime store: the write-ahead log's header is invalid (cut short by the crash) and it holds no " +
        "verifiable committed transaction; SQLite ignores it",
    );
  } else if (wal.uncommittedFrames > 0 || wal.tornTailBytes > 0) {
    logger.warn(
      fields,
      "runtime store: previous run did not shut down cleanly; recovered committed transactions from the WAL " +
        "and discarded an incomplete (never acknowledged) tail: the last transaction, which the crash interrupted " +
        "before its commit was on disk",
    );
  } else if (wal.staleFrames > 0) {
    logger.info(
      fields,
      "runtime store: previous run did not shut down cleanly; recovered committed transactions from the WAL " +
        "(frames left over from an earlier WAL generation are ignored, as SQLite does)",
    );
  } else {
    logger.info(fields, "runtime store: previous run did not shut down cleanly; recovered committed transactions from the WAL");
  }
}
