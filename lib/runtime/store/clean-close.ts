// Whether the database file can be trusted without `PRAGMA quick_check`.
//
// quick_check reads every page of the file, so its cost grows with the whole
// history (`npm run bench:scale` measures it; see the README), while a
// restart should cost only what the open sessions need. It is what catches a
// file damaged while the runtime was not running, and a file nobody touched
// since the last verified run needs no second check. So:
//
// - At a clean close (every write committed, the WAL checkpointed and
//   removed, no storage error seen, and the file itself trusted when it was
//   opened), the store writes `<db>.clean` next to the database: the file's
//   device, inode, size, modification and change times as they are after the
//   close.
// - At open, that record is read and deleted before anything else happens
//   (a crash later leaves no record behind). The check is skipped only if a
//   record exists, no -wal file exists, and every field still matches. Any
//   write to the file by anyone since the close changes its mtime/ctime (Linux
//   gives a write after a stat a distinct timestamp), a copy or restore
//   changes the inode, so those all get the full check; so do the first open,
//   an open after a crash, and every open with MACP_STORE_INTEGRITY_CHECK=always.
//
// Rows are verified on every read regardless (per-row CRC-32, seq continuity),
// and SQLite checks each b-tree page it reads.
import fs from "node:fs";

export const CLEAN_CLOSE_SUFFIX = ".clean";

interface FileIdentity {
  version: 1;
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
}

function identityOf(file: string): FileIdentity {
  const st = fs.statSync(file, { bigint: true });
  return {
    version: 1,
    dev: String(st.dev),
    ino: String(st.ino),
    size: String(st.size),
    mtimeNs: String(st.mtimeNs),
    ctimeNs: String(st.ctimeNs),
  };
}

export type TrustVerdict = { trusted: true; reason: string } | { trusted: false; reason: string };

/**
 * Read and remove the clean-close record of `file`, and say whether the file
 * is exactly as that clean close left it. Never throws for a missing or
 * unreadable record (that just means "check").
 */
export function consumeCleanClose(file: string): TrustVerdict {
  const recordPath = file + CLEAN_CLOSE_SUFFIX;
  let raw: string;
  try {
    raw = fs.readFileSync(recordPath, "utf8");
  } catch {
    return { trusted: false, reason: "no record of a verified clean shutdown" };
  }
  fs.rmSync(recordPath, { force: true });
  let saved: unknown;
  try {
    saved = JSON.parse(raw);
  } catch {
    return { trusted: false, reason: "the clean-shutdown record is unreadable" };
  }
  if (fs.existsSync(`${file}-wal`)) return { trusted: false, reason: "a write-ahead log is present (unclean shutdown)" };
  let now: FileIdentity;
  try {
    now = identityOf(file);
  } catch {
    return { trusted: false, reason: "the database file cannot be examined" };
  }
  const s = saved as Partial<FileIdentity> | null;
  for (const k of ["version", "dev", "ino", "size", "mtimeNs", "ctimeNs"] as const) {
    if (s?.[k] !== now[k]) return { trusted: false, reason: `the file changed since the last clean shutdown (${k})` };
  }
  return { trusted: true, reason: "unchanged since the last verified clean shutdown" };
}

/** Record the file's identity after a clean close (written atomically, mode 0600). */
export function recordCleanClose(file: string): void {
  const recordPath = file + CLEAN_CLOSE_SUFFIX;
  const tmp = `${recordPath}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(identityOf(file)) + "\n", { mode: 0o600 });
  fs.renameSync(tmp, recordPath);
}

/** Forget any record (the file can no longer be vouched for). */
export function forgetCleanClose(file: string): void {
  fs.rmSync(file + CLEAN_CLOSE_SUFFIX, { force: true });
}
