// Configuration of v0.1 file-based handoffs, read from the environment and
// validated at the edge (a bad value is an error that names the variable).
//
//   BATON_HANDOFF_DIRS       directories the console watches (none by default)
//   HANDOFF_DIR              the CLI's directory (v0.1's own variable; default .handoffs)
//   BATON_DATA_DIR           the console's data folder (default ./data); the history store lives there
//   BATON_HANDOFF_MAX_BYTES  largest handoff file read or written (default 1 MiB)
//   BATON_HANDOFF_MAX_FILES  handoff files tracked per directory (default 10,000)
//   BATON_HANDOFF_WATCH      auto | watch | poll (default auto: poll on network filesystems)
//   BATON_HANDOFF_POLL_MS    polling interval (default 500 ms)
//   BATON_HANDOFF_LOCK_STALE_MS  age after which a lock file is stale (default 10 s)

import { batonDataDir } from "@/lib/data-dir";
import path from "node:path";
import { DIRECTORY_DEFAULTS } from "./directory";
import { HandoffError } from "./errors";

export type Env = Readonly<Record<string, string | undefined>>;
export type WatchMode = "auto" | "watch" | "poll";

/** v0.1's default directory, relative to where the command runs. */
export const DEFAULT_HANDOFF_DIR = ".handoffs";
export const HISTORY_FILE_NAME = "handoff-files.sqlite";

export interface HandoffSettings {
  maxBytes: number;
  maxFiles: number;
  lockStaleMs: number;
  watchMode: WatchMode;
  pollMs: number;
}

/**
 * The directories in BATON_HANDOFF_DIRS, absolute, without duplicates.
 * Separated by commas or the platform's path delimiter (":" on Linux and
 * macOS, ";" on Windows). Empty or unset: none.
 */
export function handoffDirsFromEnv(env: Env, cwd = process.cwd()): string[] {
  const raw = env.BATON_HANDOFF_DIRS ?? "";
  const parts = raw
    .split(new RegExp(`[,${path.delimiter === ";" ? ";" : ":"}\\n]`))
    .map((p) => p.trim())
    .filter((p) => p !== "");
  return [...new Set(parts.map((p) => path.resolve(cwd, p)))];
}

/** The CLI's directory: --dir, else HANDOFF_DIR, else .handoffs (relative to cwd). */
export function cliHandoffDir(flag: string | undefined, env: Env, cwd = process.cwd()): string {
  const chosen = flag?.trim() || env.HANDOFF_DIR?.trim() || DEFAULT_HANDOFF_DIR;
  return path.resolve(cwd, chosen);
}

/** The console's data folder: BATON_DATA_DIR, default ./data. */
export function dataDirFromEnv(env: Env, cwd = process.cwd()): string {
  return batonDataDir(env, cwd);
}

/** Where the history store (and the bridge's state) lives by default. */
export function historyFileFromEnv(env: Env, cwd = process.cwd()): string {
  return path.join(dataDirFromEnv(env, cwd), HISTORY_FILE_NAME);
}

function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new HandoffError("bad-input", `${name} must be a whole number, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new HandoffError("bad-input", `${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

export function handoffSettingsFromEnv(env: Env): HandoffSettings {
  const mode = (env.BATON_HANDOFF_WATCH?.trim() || "auto").toLowerCase();
  if (mode !== "auto" && mode !== "watch" && mode !== "poll") {
    throw new HandoffError("bad-input", `BATON_HANDOFF_WATCH must be auto, watch or poll, got "${env.BATON_HANDOFF_WATCH}"`);
  }
  return {
    maxBytes: intVar(env, "BATON_HANDOFF_MAX_BYTES", DIRECTORY_DEFAULTS.maxBytes, 1024, 64 * 1024 * 1024),
    maxFiles: intVar(env, "BATON_HANDOFF_MAX_FILES", DIRECTORY_DEFAULTS.maxFiles, 1, 1_000_000),
    lockStaleMs: intVar(env, "BATON_HANDOFF_LOCK_STALE_MS", DIRECTORY_DEFAULTS.lockStaleMs, 100, 24 * 3_600_000),
    watchMode: mode,
    pollMs: intVar(env, "BATON_HANDOFF_POLL_MS", 500, 50, 60_000),
  };
}
