// The files of a recovery: scratch copies of the damaged database (with the
// log cut where SQLite stops, or rebuilt with every verified transaction),
// the durable backup of the originals, and the swap that installs the
// recovered database, guarded by a marker file so that an interrupted swap is
// finished by running the command again and never half-applied.
import fs from "node:fs";
import path from "node:path";
import { SQLITE_FILE_NAME } from "./sqlite";
import { fileSource, rebuildWal, type WalAnalysis } from "./wal";
import { RECOVERY_MARKER_FILE } from "./wal-check";

export interface Marker {
  database: string;
  backupDir: string;
  /** The recovered database, inside `scratch`. */
  replacement: string;
  scratch: string;
  startedAt: string;
}

export function fsyncPath(p: string): void {
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

export function stamp(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
}

/** Copy the database and its log (and journal, if any) to `backupDir`, durably. */
export function backupOriginals(file: string, backupDir: string): void {
  fs.mkdirSync(backupDir, { mode: 0o700 });
  for (const suffix of ["", "-wal", "-shm", "-journal"]) {
    if (fs.existsSync(`${file}${suffix}`)) copyDurably(`${file}${suffix}`, path.join(backupDir, `${SQLITE_FILE_NAME}${suffix}`));
  }
  fsyncPath(backupDir);
}

/** Copy the database and a cut or rebuilt log into `into`. */
export function makeCopy(file: string, into: string, analysis: WalAnalysis, kind: "as-sqlite" | "forced"): string {
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

/** The marker of an interrupted --apply, or null when there is none. */
export function readMarker(dir: string): Marker | null {
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

/** Write the marker durably: from here on an interrupted swap is finished by running the command again. */
export function writeMarker(dir: string, marker: Marker): void {
  const markerPath = path.join(dir, RECOVERY_MARKER_FILE);
  fs.writeFileSync(markerPath, `${JSON.stringify(marker, null, 2)}\n`, { mode: 0o600 });
  fsyncPath(markerPath);
  fsyncPath(dir);
}

/** The swap: the recovered database replaces the damaged one and the damaged log goes. Idempotent. */
export function install(dir: string, marker: Marker): void {
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
