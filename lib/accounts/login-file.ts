// Console sign-ins ("logins") on disk, so a restart of the console (an
// upgrade at 3 a.m.) does not sign everyone out. Server-side only. The
// variable, the file name and the format's "sessions" key keep the names
// they had when a login was called a session, so existing files load.
//
// The LoginStore stays the source of truth in memory; this file observes it
// and writes the whole set:
// - logins created or ended (sign-in, sign-out, expiry, password change,
//   disabled users, limits) and updated principals: at most one write per
//   250 ms (coalesced);
// - idle-timer refreshes alone (every request): at most one write per 30 s.
//   After a crash (no flush) a login's last activity on disk can be up to
//   that much older than it really was, so on restart it may be idle-expired
//   up to 30 s early — never late. A clean shutdown flushes.
//
// Location: BATON_LOGINS_FILE (or its older name BATON_SESSIONS_FILE), default
// `console-sessions.json` next to the session secret file
// (./data/console-sessions.json); BATON_LOGINS_FILE=off
// keeps logins in memory only. Format (version 1), mode 0600, written
// atomically (temporary file in the same folder, fsync, rename, fsync folder):
//
//   {
//     "version": 1,
//     "secretFingerprint": "<HMAC of a constant under the session secret>",
//     "savedAt": 1714532400000,
//     "sessions": {
//       "<SHA-256 of the session id, base64url>": {
//         "principal": { "username", "displayName", "role", "participantId",
//                        "authMethod", "oidcSubject"?, "ephemeral" },
//         "csrfToken": "…", "createdAt": …, "lastSeenAt": …, "expiresAt": …,
//         "ip"?: "…", "userAgent"?: "…", "credentialTag"?: "…"
//       }
//     }
//   }
//
// Raw session ids are never written: a cookie is looked up by hashing the id
// it carries (after its HMAC verified). A file written under another session
// secret is ignored (those cookies no longer verify anyway). An unreadable or
// corrupt file never stops the console: it is moved aside
// (`<file>.corrupt-<time>`) with a warning and the console starts with no
// sessions; malformed records are dropped one by one.
import { batonDataDir } from "@/lib/data-dir";
import { createHmac } from "node:crypto";
import { readFile, rename } from "node:fs/promises";
import path from "node:path";
import { isRole } from "@/lib/authz/roles";
import type { Env } from "./env";
import { writePrivateFileAtomic } from "./private-file";
import { MAX_IP_CHARS, MAX_USER_AGENT_CHARS, type Principal, type LoginChange, type LoginStore, type StoredLogin } from "./logins";

export const LOGINS_FILE_NAME = "console-sessions.json";
export const LOGINS_FILE_VERSION = 1;
/** Created or ended sessions are written at most this often. */
export const DEFAULT_WRITE_DELAY_MS = 250;
/** Idle-timer refreshes alone are written at most this often. */
export const DEFAULT_TOUCH_DELAY_MS = 30_000;

/**
 * The logins file from the environment, or null when persistence is off
 * (BATON_LOGINS_FILE=off). BATON_SESSIONS_FILE, its older name, is still
 * read when BATON_LOGINS_FILE is unset or empty. Default:
 * console-sessions.json in the folder of the session secret file
 * (BATON_SESSION_SECRET_FILE, default ./data/).
 */
export function loginsFilePath(env: Env = process.env): string | null {
  const preferred = env.BATON_LOGINS_FILE?.trim();
  const configured = preferred !== undefined && preferred !== "" ? preferred : env.BATON_SESSIONS_FILE?.trim();
  if (configured !== undefined && configured !== "") {
    return configured.toLowerCase() === "off" ? null : path.resolve(configured);
  }
  const secretFile = env.BATON_SESSION_SECRET_FILE?.trim();
  const base = secretFile !== undefined && secretFile !== "" ? secretFile : path.join(batonDataDir(env), "session-secret");
  return path.resolve(path.dirname(base), LOGINS_FILE_NAME);
}

/** Which secret the sessions were written under, without revealing it. */
export function secretFingerprint(secret: Buffer): string {
  return createHmac("sha256", secret).update("baton console sessions file v1").digest("base64url").slice(0, 22);
}

// -------------------------------------------------------------- validation

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

const B64URL_43 = /^[A-Za-z0-9_-]{43}$/;
const B64URL_22 = /^[A-Za-z0-9_-]{22}$/;
const MAX_TEXT = 1024;

const PRINCIPAL_KEYS: ReadonlySet<string> = new Set([
  "username",
  "displayName",
  "role",
  "participantId",
  "authMethod",
  "oidcSubject",
  "ephemeral",
]);
const RECORD_KEYS: ReadonlySet<string> = new Set([
  "principal",
  "csrfToken",
  "createdAt",
  "lastSeenAt",
  "expiresAt",
  "ip",
  "userAgent",
  "credentialTag",
]);

function text(v: unknown, max = MAX_TEXT): v is string {
  return typeof v === "string" && v !== "" && v.length <= max;
}

function time(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function unknownKey(o: Obj, allowed: ReadonlySet<string>): string | undefined {
  return Object.keys(o).find((k) => !allowed.has(k));
}

function parsePrincipal(v: unknown): Principal | string {
  if (!isObj(v)) return "principal: must be an object";
  const extra = unknownKey(v, PRINCIPAL_KEYS);
  if (extra !== undefined) return `principal: unknown field ${JSON.stringify(extra)}`;
  const { username, displayName, role, participantId, authMethod, oidcSubject, ephemeral } = v;
  if (!text(username)) return "principal.username: must be a non-empty string";
  if (!text(displayName)) return "principal.displayName: must be a non-empty string";
  if (!isRole(role)) return "principal.role: must be a role";
  if (!text(participantId)) return "principal.participantId: must be a non-empty string";
  if (authMethod !== "password" && authMethod !== "oidc") return 'principal.authMethod: must be "password" or "oidc"';
  if (oidcSubject !== undefined && !text(oidcSubject)) return "principal.oidcSubject: must be a non-empty string";
  if (typeof ephemeral !== "boolean") return "principal.ephemeral: must be true or false";
  if (ephemeral && (authMethod !== "oidc" || oidcSubject === undefined))
    return "principal: an ephemeral principal must be an OIDC sign-in with a subject";
  return { username, displayName, role, participantId, authMethod, ephemeral, ...(oidcSubject !== undefined ? { oidcSubject } : {}) };
}

/** One persisted session, or the reason it is malformed. */
export function parseStoredLogin(key: string, v: unknown): StoredLogin | string {
  if (!B64URL_43.test(key)) return "key: must be a SHA-256 in base64url";
  if (!isObj(v)) return "must be an object";
  const extra = unknownKey(v, RECORD_KEYS);
  if (extra !== undefined) return `unknown field ${JSON.stringify(extra)}`;
  const principal = parsePrincipal(v.principal);
  if (typeof principal === "string") return principal;
  const { csrfToken, createdAt, lastSeenAt, expiresAt, ip, userAgent, credentialTag } = v;
  if (typeof csrfToken !== "string" || !B64URL_43.test(csrfToken)) return "csrfToken: must be 32 bytes in base64url";
  if (!time(createdAt) || !time(lastSeenAt) || !time(expiresAt)) return "createdAt, lastSeenAt, expiresAt: must be Unix milliseconds";
  if (lastSeenAt < createdAt || expiresAt <= createdAt) return "timestamps out of order";
  if (ip !== undefined && (typeof ip !== "string" || ip.length > MAX_IP_CHARS)) return "ip: must be a short string";
  if (userAgent !== undefined && (typeof userAgent !== "string" || userAgent.length > MAX_USER_AGENT_CHARS))
    return "userAgent: must be a short string";
  if (credentialTag !== undefined && (typeof credentialTag !== "string" || !B64URL_22.test(credentialTag)))
    return "credentialTag: malformed";
  return {
    key,
    principal,
    csrfToken,
    createdAt,
    lastSeenAt,
    expiresAt,
    ...(ip !== undefined ? { ip } : {}),
    ...(userAgent !== undefined ? { userAgent } : {}),
    ...(credentialTag !== undefined ? { credentialTag } : {}),
  };
}

/** Thrown for a file that is not a sessions file at all (moved aside at load). */
class CorruptLoginsFile extends Error {}

interface ParsedFile {
  fingerprint: string;
  sessions: StoredLogin[];
  malformed: string[];
}

function parseFile(textContent: string): ParsedFile {
  let data: unknown;
  try {
    data = JSON.parse(textContent) as unknown;
  } catch (e) {
    throw new CorruptLoginsFile(`not JSON (${(e as Error).message})`);
  }
  if (!isObj(data)) throw new CorruptLoginsFile("not a JSON object");
  if (data.version !== LOGINS_FILE_VERSION)
    throw new CorruptLoginsFile(`unsupported version ${JSON.stringify(data.version)} (expected ${LOGINS_FILE_VERSION})`);
  if (typeof data.secretFingerprint !== "string") throw new CorruptLoginsFile("secretFingerprint: missing");
  if (!isObj(data.sessions)) throw new CorruptLoginsFile("sessions: must be an object");
  const sessions: StoredLogin[] = [];
  const malformed: string[] = [];
  for (const [key, value] of Object.entries(data.sessions)) {
    const parsed = parseStoredLogin(key, value);
    if (typeof parsed === "string") malformed.push(parsed);
    else sessions.push(parsed);
  }
  return { fingerprint: data.secretFingerprint, sessions, malformed };
}

function serialize(fingerprint: string, savedAt: number, sessions: readonly StoredLogin[]): string {
  const byKey: Record<string, Omit<StoredLogin, "key">> = {};
  for (const { key, ...rest } of sessions) byKey[key] = rest;
  return `${JSON.stringify({ version: LOGINS_FILE_VERSION, secretFingerprint: fingerprint, savedAt, sessions: byKey })}\n`;
}

// ------------------------------------------------------------------ disk

// ------------------------------------------------------------- the writer

export interface LoginFileLogger {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
}

/** Runs `fn` after `ms`; returns a function that cancels it. */
export type Scheduler = (fn: () => void, ms: number) => () => void;

const realScheduler: Scheduler = (fn, ms) => {
  const t = setTimeout(fn, ms);
  // A pending write never keeps the process alive: shutdown flushes.
  t.unref();
  return () => clearTimeout(t);
};

export interface LoginFileOptions {
  file: string;
  /** The session secret the cookies are signed with (only its fingerprint is stored). */
  secret: Buffer;
  logger?: LoginFileLogger;
  writeDelayMs?: number;
  touchDelayMs?: number;
  scheduler?: Scheduler;
  now?: () => number;
}

export interface LoginFileLoad {
  /** Sessions kept in the store (live, well-formed, same secret). */
  restored: number;
  /** Records dropped: malformed, expired, over the limits or from another secret. */
  dropped: number;
  /** Where an unreadable or corrupt file was moved, if it was. */
  movedTo?: string;
}

const silent: LoginFileLogger = { info: () => undefined, warn: () => undefined };

/**
 * Keeps a LoginStore in a file. `attach` loads the file into the store and
 * then writes the store's sessions on every change, coalesced; `flush` writes
 * what is pending now (for shutdown); `close` flushes and stops writing.
 */
export class LoginFile {
  readonly file: string;
  private readonly fingerprint: string;
  private readonly log: LoginFileLogger;
  private readonly writeDelayMs: number;
  private readonly touchDelayMs: number;
  private readonly scheduler: Scheduler;
  private readonly now: () => number;
  private store: LoginStore | null = null;
  /** Only writes after a successful load (never clobbers a file it could not read). */
  private writable = false;
  private closed = false;
  private pending: LoginChange | null = null;
  private cancelTimer: (() => void) | null = null;
  private timerDelay = Infinity;
  private writing: Promise<void> | null = null;
  private writeCount = 0;

  constructor(options: LoginFileOptions) {
    this.file = path.resolve(options.file);
    this.fingerprint = secretFingerprint(options.secret);
    this.log = options.logger ?? silent;
    this.writeDelayMs = options.writeDelayMs ?? DEFAULT_WRITE_DELAY_MS;
    this.touchDelayMs = options.touchDelayMs ?? DEFAULT_TOUCH_DELAY_MS;
    this.scheduler = options.scheduler ?? realScheduler;
    this.now = options.now ?? Date.now;
  }

  /** Completed writes so far. */
  get writes(): number {
    return this.writeCount;
  }

  /**
   * Load the file into `store` (dropping what the store's own rules reject)
   * and persist its changes from now on. Never throws for a bad file: it is
   * moved aside with a warning and the store starts empty. If it cannot even
   * be moved aside, sessions stay in memory only for this run.
   */
  async attach(store: LoginStore): Promise<LoginFileLoad> {
    if (this.store) throw new Error("LoginFile.attach: already attached");
    this.store = store;
    store.observe((change) => this.schedule(change));
    const result = await this.load(store);
    if (this.writable && this.pending !== null) this.arm(this.pending === "change" ? this.writeDelayMs : this.touchDelayMs);
    return result;
  }

  private async load(store: LoginStore): Promise<LoginFileLoad> {
    let content: string;
    try {
      content = await readFile(this.file, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") {
        this.writable = true;
        return { restored: 0, dropped: 0 };
      }
      if ((e as NodeJS.ErrnoException).code === "EISDIR") {
        this.log.warn(
          { file: this.file },
          "sessions file is a directory: sign-ins are kept in memory only (set BATON_LOGINS_FILE to a file path, or off)",
        );
        return { restored: 0, dropped: 0 };
      }
      return this.setAside(`cannot be read (${(e as Error).message})`);
    }
    let parsed: ParsedFile;
    try {
      parsed = parseFile(content);
    } catch (e) {
      if (e instanceof CorruptLoginsFile) return this.setAside(e.message);
      throw e;
    }
    this.writable = true;
    if (parsed.malformed.length > 0) {
      this.log.warn(
        { file: this.file, dropped: parsed.malformed.length, first: parsed.malformed[0] },
        "sessions file: dropped malformed sessions",
      );
    }
    if (parsed.fingerprint !== this.fingerprint) {
      // Signed with another secret: none of these cookies verifies any more.
      this.log.info(
        { file: this.file, dropped: parsed.sessions.length },
        "sessions file: written under another session secret; starting with no sessions",
      );
      if (parsed.sessions.length > 0 || parsed.malformed.length > 0) this.schedule("change");
      return { restored: 0, dropped: parsed.sessions.length + parsed.malformed.length };
    }
    const restored = store.restore(parsed.sessions);
    const dropped = parsed.sessions.length - restored + parsed.malformed.length;
    // Rewrite without what was dropped (soon, not at once).
    if (dropped > 0) this.schedule("change");
    this.log.info({ file: this.file, restored, dropped }, "console sign-ins restored");
    return { restored, dropped };
  }

  /** Move an unreadable or corrupt file aside; persistence stays on only if that worked. */
  private async setAside(problem: string): Promise<LoginFileLoad> {
    const stamp = new Date(this.now()).toISOString().replace(/[:.]/g, "-");
    const movedTo = `${this.file}.corrupt-${stamp}`;
    try {
      await rename(this.file, movedTo);
    } catch (e) {
      this.log.warn(
        { file: this.file, problem, err: (e as Error).message },
        "sessions file is unreadable and could not be moved aside: starting with no sessions, kept in memory only until it is fixed",
      );
      return { restored: 0, dropped: 0 };
    }
    this.writable = true;
    this.log.warn(
      { file: this.file, problem, movedTo },
      "sessions file is unreadable or corrupt: moved aside, starting with no sessions (everyone signs in again)",
    );
    return { restored: 0, dropped: 0, movedTo };
  }

  /** A change in the store: write soon ("change") or lazily ("touch"). */
  schedule(change: LoginChange): void {
    if (this.closed) return;
    if (this.pending !== "change") this.pending = change;
    if (!this.writable || this.writing) return; // armed once loaded / after the current write
    this.arm(this.pending === "change" ? this.writeDelayMs : this.touchDelayMs);
  }

  private arm(delay: number): void {
    if (this.cancelTimer && this.timerDelay <= delay) return;
    this.cancelTimer?.();
    this.timerDelay = delay;
    this.cancelTimer = this.scheduler(() => {
      this.cancelTimer = null;
      this.timerDelay = Infinity;
      void this.writeNow();
    }, delay);
  }

  private disarm(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.timerDelay = Infinity;
  }

  /** Write the store now if anything is pending; one write at a time. */
  private writeNow(): Promise<void> {
    if (this.writing) return this.writing;
    if (this.pending === null || !this.writable || !this.store) return Promise.resolve();
    this.disarm();
    const store = this.store;
    this.pending = null;
    this.writing = (async () => {
      try {
        await writePrivateFileAtomic(this.file, serialize(this.fingerprint, this.now(), store.snapshot()));
        this.writeCount++;
      } catch (e) {
        // Keep the sessions in memory and try again later.
        this.log.warn({ file: this.file, err: (e as Error).message }, "could not save console sign-ins; retrying");
        if (this.pending === null) this.pending = "touch";
        this.writing = null;
        if (!this.closed) this.arm(this.touchDelayMs);
        return;
      }
      this.writing = null;
      if (this.pending !== null && !this.closed) this.arm(this.pending === "change" ? this.writeDelayMs : this.touchDelayMs);
    })();
    return this.writing;
  }

  /** Write whatever is pending now (shutdown). Never rejects: failures are logged. */
  async flush(): Promise<void> {
    if (this.writing) await this.writing;
    if (this.pending !== null) await this.writeNow();
  }

  /** Flush, then stop writing and observing. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    this.disarm();
    this.store?.observe(null);
  }
}
