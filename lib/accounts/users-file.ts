// The users file: who may sign in to the console, with which role, acting as
// which MACP participant. Server-side only.
//
// Location: BATON_USERS_FILE, default ./data/users.json (the /data/ folder is
// git-ignored). Format (version 1):
//
//   {
//     "version": 1,
//     "users": [
//       {
//         "username": "alice",                 // required; a-z 0-9 . _ -, 1–64 chars, lowercase
//         "displayName": "Alice Ng",           // required; 1–100 chars
//         "role": "operator",                  // required; viewer | operator | approver | admin
//         "participantId": "human:alice",      // required; MACP sender id, unique; no spaces
//         "passwordHash": "scrypt$32768$8$1$<salt>$<hash>", // scrypt only; optional for OIDC-only users
//         "runtimeToken": "…",                 // optional; bearer token the gateway uses to act as this participant
//         "disabled": false,                   // optional; disabled users cannot sign in
//         "mustChangePassword": false,         // optional; set for the bootstrap admin's one-time password
//         "oidcSubject": "00u1ab…",            // optional; links an OpenID Connect `sub`, unique
//         "email": "alice@example.com"         // optional; links a verified OIDC email, unique
//       }
//     ]
//   }
//
// Writes are atomic (temporary file + rename, mode 0600) and serialized
// between processes (the console and `npm run users`) by a lock file.
import { batonDataDir } from "@/lib/data-dir";
import { constants as fsConstants } from "node:fs";
import { link, mkdir, open, readFile, stat, unlink } from "node:fs/promises";
import path from "node:path";
import type { Env } from "./env";
import { isValidParticipantId } from "@/lib/authz/decide";
import { ROLES, isRole, type Role } from "@/lib/authz/roles";
import { syncDir, writePrivateFileAtomic, writePrivateTemp } from "./private-file";
import { DEFAULT_SCRYPT, generatePassword, hashPassword, parsePasswordHash, type ScryptParams } from "./password";

export const DEFAULT_USERS_FILE = "./data/users.json";
export const USERS_FILE_VERSION = 1;

export interface UserRecord {
  username: string;
  displayName: string;
  role: Role;
  participantId: string;
  passwordHash?: string;
  runtimeToken?: string;
  disabled?: boolean;
  mustChangePassword?: boolean;
  oidcSubject?: string;
  email?: string;
}

export interface UsersFile {
  version: 1;
  users: UserRecord[];
}

export class UsersFileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: readonly string[],
  ) {
    super(
      problems.length === 1
        ? `${file}: ${problems[0]}`
        : `${file} has ${problems.length} problems:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
    );
    this.name = "UsersFileError";
  }
}

/** The users file path from the environment, resolved against the working directory. */
export function usersFilePath(env: Env = process.env): string {
  const configured = env.BATON_USERS_FILE?.trim();
  return configured !== undefined && configured !== "" ? path.resolve(configured) : path.join(batonDataDir(env), "users.json");
}

const USERNAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** Lowercase and trim a typed username (sign-in form, CLI). */
export function normalizeUsername(raw: string): string {
  return raw.trim().toLowerCase();
}

export function usernameProblem(username: string): string | null {
  if (!USERNAME.test(username)) {
    return "must be 1–64 characters: lowercase letters, digits, '.', '_' or '-', starting with a letter or digit";
  }
  return null;
}

/** The default participant id for a username. */
export function defaultParticipantId(username: string): string {
  return `human:${username}`;
}

const USER_KEYS: ReadonlySet<string> = new Set([
  "username",
  "displayName",
  "role",
  "participantId",
  "passwordHash",
  "runtimeToken",
  "disabled",
  "mustChangePassword",
  "oidcSubject",
  "email",
]);
const TOP_KEYS: ReadonlySet<string> = new Set(["version", "users", "$schema", "$comment"]);
const CONTROL = /[\u0000-\u001f\u007f]/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const show = (v: unknown): string => {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

/**
 * Validate parsed JSON as a users file. Collects every problem (with the
 * field's path) and throws one UsersFileError naming `file`.
 */
export function validateUsersFile(raw: unknown, file: string): UsersFile {
  const problems: string[] = [];
  if (!isObj(raw)) throw new UsersFileError(file, ['the top level must be an object like {"version": 1, "users": []}']);
  for (const key of Object.keys(raw)) if (!TOP_KEYS.has(key)) problems.push(`${key}: unknown field`);
  if (raw.version !== USERS_FILE_VERSION) problems.push(`version: must be 1 (got ${show(raw.version)})`);
  if (!Array.isArray(raw.users)) {
    problems.push("users: must be a list");
    throw new UsersFileError(file, problems);
  }
  const users: UserRecord[] = [];
  const seen = {
    username: new Map<string, number>(),
    participantId: new Map<string, number>(),
    oidcSubject: new Map<string, number>(),
    email: new Map<string, number>(),
  };
  raw.users.forEach((entry: unknown, i: number) => {
    const at = (field: string) => `users[${i}].${field}`;
    if (!isObj(entry)) {
      problems.push(`users[${i}]: must be an object`);
      return;
    }
    const before = problems.length;
    for (const key of Object.keys(entry)) if (!USER_KEYS.has(key)) problems.push(`${at(key)}: unknown field`);
    const str = (field: string, required: boolean): string | undefined => {
      const v = entry[field];
      if (v === undefined || v === null) {
        if (required) problems.push(`${at(field)}: required`);
        return undefined;
      }
      if (typeof v !== "string") {
        problems.push(`${at(field)}: must be a string (got ${show(v)})`);
        return undefined;
      }
      return v;
    };
    const bool = (field: string): boolean | undefined => {
      const v = entry[field];
      if (v === undefined || v === null) return undefined;
      if (typeof v !== "boolean") {
        problems.push(`${at(field)}: must be true or false (got ${show(v)})`);
        return undefined;
      }
      return v;
    };

    const username = str("username", true);
    if (username !== undefined) {
      const p = usernameProblem(username);
      if (p) problems.push(`${at("username")}: ${p} (got ${show(username)})`);
    }
    const displayName = str("displayName", true);
    if (displayName !== undefined && (displayName.trim() === "" || displayName.length > 100 || CONTROL.test(displayName))) {
      problems.push(`${at("displayName")}: must be 1–100 characters without control characters`);
    }
    const role = entry.role;
    if (role === undefined) problems.push(`${at("role")}: required`);
    else if (!isRole(role)) problems.push(`${at("role")}: must be one of ${ROLES.join(", ")} (got ${show(role)})`);
    const participantId = str("participantId", true);
    if (participantId !== undefined && !isValidParticipantId(participantId)) {
      problems.push(
        `${at("participantId")}: must be 1–512 characters without spaces or control characters, and not "_runtime" (got ${show(participantId)})`,
      );
    }
    const passwordHash = str("passwordHash", false);
    if (passwordHash !== undefined) {
      const parsed = parsePasswordHash(passwordHash);
      // Never echo the hash itself.
      if ("error" in parsed) problems.push(`${at("passwordHash")}: not a valid scrypt hash: ${parsed.error}`);
    }
    const runtimeToken = str("runtimeToken", false);
    if (runtimeToken !== undefined && (runtimeToken === "" || runtimeToken.length > 4096 || /[\s\u0000-\u001f\u007f]/.test(runtimeToken))) {
      problems.push(`${at("runtimeToken")}: must be 1–4096 characters without spaces or control characters`);
    }
    const disabled = bool("disabled");
    const mustChangePassword = bool("mustChangePassword");
    const oidcSubject = str("oidcSubject", false);
    if (oidcSubject !== undefined && (oidcSubject === "" || oidcSubject.length > 255 || CONTROL.test(oidcSubject))) {
      problems.push(`${at("oidcSubject")}: must be 1–255 characters without control characters`);
    }
    const email = str("email", false);
    if (email !== undefined && (email.length > 254 || !EMAIL.test(email))) {
      problems.push(`${at("email")}: must be an email address (got ${show(email)})`);
    }
    if (passwordHash === undefined && oidcSubject === undefined && email === undefined && entry.passwordHash === undefined) {
      problems.push(`users[${i}]: needs a passwordHash, an oidcSubject or an email, or nobody can sign in as ${show(username)}`);
    }

    const unique = (kind: keyof typeof seen, value: string | undefined, field: string) => {
      if (value === undefined) return;
      const key = kind === "email" ? value.toLowerCase() : value;
      const other = seen[kind].get(key);
      if (other !== undefined) problems.push(`${at(field)}: ${show(value)} is already used by users[${other}]`);
      else seen[kind].set(key, i);
    };
    unique("username", username, "username");
    unique("participantId", participantId, "participantId");
    unique("oidcSubject", oidcSubject, "oidcSubject");
    unique("email", email, "email");

    if (problems.length > before) return;
    const user: UserRecord = {
      username: username as string,
      displayName: displayName as string,
      role: role as Role,
      participantId: participantId as string,
    };
    if (passwordHash !== undefined) user.passwordHash = passwordHash;
    if (runtimeToken !== undefined) user.runtimeToken = runtimeToken;
    if (disabled !== undefined) user.disabled = disabled;
    if (mustChangePassword !== undefined) user.mustChangePassword = mustChangePassword;
    if (oidcSubject !== undefined) user.oidcSubject = oidcSubject;
    if (email !== undefined) user.email = email;
    users.push(user);
  });
  if (problems.length > 0) throw new UsersFileError(file, problems);
  return { version: 1, users };
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
