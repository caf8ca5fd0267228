// The users file: who may sign in to the console, with which role, acting as
// which MACP participant. Server-side only. This module is the file itself
// (where it lives, reading, atomic writes, the lock between processes, and
// the bootstrap admin); the record types and validation are in
// users-file-schema.ts and re-exported here.
//
// Location: BATON_USERS_FILE, default ./data/users.json (the /data/ folder is
// git-ignored).
//
// Writes are atomic (temporary file + rename, mode 0600) and serialized
// between processes (the console and `npm run users`) by a lock file.
import { batonDataDir } from "@/lib/data-dir";
import { constants as fsConstants } from "node:fs";
import { link, mkdir, open, readFile, stat, unlink } from "node:fs/promises";
import path from "node:path";
import type { Env } from "./env";
import { syncDir } from "@/lib/base/sync-dir";
import { writePrivateFileAtomic, writePrivateTemp } from "./private-file";
import { DEFAULT_SCRYPT, generatePassword, hashPassword, type ScryptParams } from "./password";
import { UsersFileError, defaultParticipantId, show, usernameProblem, validateUsersFile, type UsersFile } from "./users-file-schema";

export {
  USERS_FILE_VERSION,
  UsersFileError,
  defaultParticipantId,
  normalizeUsername,
  usernameProblem,
  validateUsersFile,
  type UserRecord,
  type UsersFile,
} from "./users-file-schema";

export const DEFAULT_USERS_FILE = "./data/users.json";

/** The users file path from the environment, resolved against the working directory. */
export function usersFilePath(env: Env = process.env): string {
  const configured = env.BATON_USERS_FILE?.trim();
  return configured !== undefined && configured !== "" ? path.resolve(configured) : path.join(batonDataDir(env), "users.json");
}

/** Read and validate the users file; null when it does not exist. */
export async function readUsersFile(file: string): Promise<UsersFile | null> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new UsersFileError(file, [`cannot be read: ${(e as Error).message}`]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new UsersFileError(file, [`is not valid JSON: ${(e as Error).message}`]);
  }
  return validateUsersFile(raw, file);
}

/** A warning when the users file can be read by other accounts on this machine. */
export async function usersFilePermissionWarning(file: string): Promise<string | null> {
  if (process.platform === "win32") return null;
  try {
    const st = await stat(file);
    if ((st.mode & 0o077) !== 0) {
      return `${file} is readable by other users (mode ${(st.mode & 0o777).toString(8)}); run: chmod 600 ${file}`;
    }
  } catch {
    // Missing file: nothing to warn about.
  }
  return null;
}

function serialize(data: UsersFile): string {
  return `${JSON.stringify(data, null, 2)}\n`;
}

/** Validate and write the whole file atomically (temp file + rename, mode 0600). */
export async function writeUsersFile(file: string, data: UsersFile): Promise<void> {
  const valid = validateUsersFile(JSON.parse(JSON.stringify(data)) as unknown, file);
  await writePrivateFileAtomic(file, serialize(valid));
}

/**
 * Create the file only if it does not exist yet, atomically (hard link of a
 * complete temp file). Returns false when another process created it first.
 */
export async function createUsersFileExclusive(file: string, data: UsersFile): Promise<boolean> {
  const valid = validateUsersFile(JSON.parse(JSON.stringify(data)) as unknown, file);
  const tmp = await writePrivateTemp(file, serialize(valid));
  try {
    await link(tmp, file);
    await syncDir(path.dirname(file));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

const LOCK_STALE_MS = 15_000;
const LOCK_WAIT_MS = 10_000;

/** Run `fn` holding `<file>.lock`, so the console and the CLI never interleave read-modify-write cycles. */
export async function withUsersFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fh = await open(lock, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL, 0o600);
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const st = await stat(lock).catch(() => null);
      if (st && Date.now() - st.mtimeMs > LOCK_STALE_MS) {
        await unlink(lock).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline) {
        throw new UsersFileError(file, [
          `is locked by another process (${lock}); if no other Baton command is running, delete the lock file`,
        ]);
      }
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 30));
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(lock).catch(() => undefined);
  }
}

/**
 * Read-modify-write under the lock. A missing file starts as an empty list.
 * `fn` may mutate and return the file, or throw to abort without writing.
 */
export async function updateUsersFile<T>(file: string, fn: (data: UsersFile) => T | Promise<T>): Promise<T> {
  return withUsersFileLock(file, async () => {
    const data = (await readUsersFile(file)) ?? { version: 1, users: [] };
    const result = await fn(data);
    await writeUsersFile(file, data);
    return result;
  });
}

// ---------------------------------------------------------------- bootstrap

export interface BootstrapResult {
  /** True when this call created the users file with a fresh admin. */
  created: boolean;
  /** The bootstrap admin's username, or the first enabled admin's when the file existed ("" if none). */
  username: string;
  /** The one-time password; only when `created`. Show it once, never log it elsewhere. */
  password?: string;
}

export interface BootstrapOptions {
  username?: string;
  scrypt?: ScryptParams;
}

/**
 * On a fresh install (no users file) create an `admin` user with a random
 * one-time password that must be changed at first sign-in. Safe to call on
 * every start: an existing file is only read (and validated).
 */
export async function ensureBootstrapAdmin(file: string, options: BootstrapOptions = {}): Promise<BootstrapResult> {
  const existing = await readUsersFile(file);
  if (existing) return { created: false, username: firstAdmin(existing) };
  const username = options.username ?? "admin";
  const bad = usernameProblem(username);
  if (bad) throw new Error(`bootstrap username ${show(username)} ${bad}`);
  const password = generatePassword();
  const data: UsersFile = {
    version: 1,
    users: [
      {
        username,
        displayName: "Administrator",
        role: "admin",
        participantId: defaultParticipantId(username),
        passwordHash: await hashPassword(password, options.scrypt ?? DEFAULT_SCRYPT),
        mustChangePassword: true,
      },
    ],
  };
  if (await createUsersFileExclusive(file, data)) return { created: true, username, password };
  // Another process won the race; use its file.
  const theirs = await readUsersFile(file);
  return { created: false, username: theirs ? firstAdmin(theirs) : "" };
}

function firstAdmin(data: UsersFile): string {
  return data.users.find((u) => u.role === "admin" && u.disabled !== true)?.username ?? "";
}

/**
 * What the console prints once after creating the bootstrap admin (to its
 * terminal, not to the structured log), or a hint when no admin exists.
 */
export function bootstrapMessage(result: BootstrapResult, origin: string, file: string): string | null {
  if (result.created && result.password !== undefined) {
    return [
      "Baton created the first account, because there was no users file yet.",
      `  Sign in at:  ${origin.replace(/\/$/, "")}/login`,
      `  Username:    ${result.username}`,
      `  Password:    ${result.password}   (one-time: you will be asked to choose a new one)`,
      "This password is shown only now. If you lose it, delete the users file and restart,",
      `or set a new one with: npm run users -- passwd ${result.username}`,
      `Users file: ${file}`,
    ].join("\n");
  }
  if (!result.created && result.username === "") {
    return `No enabled admin in ${file}. Add one with: npm run users -- add <username> --role admin`;
  }
  return null;
}
