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
// keeps logins in memory only. The format (what is written and how a file is
// checked when read) is in login-file-format.ts; the file is mode 0600,
// written atomically (temporary file in the same folder, fsync, rename, fsync
// folder). An unreadable or corrupt file never stops the console: it is moved
// aside (`<file>.corrupt-<time>`) with a warning and the console starts with
// no sessions; malformed records are dropped one by one.
import { batonDataDir } from "@/lib/data-dir";
import { readFile, rename } from "node:fs/promises";
import path from "node:path";
import type { Env } from "./env";
import { writePrivateFileAtomic } from "./private-file";
import { CorruptLoginsFile, parseFile, secretFingerprint, serialize, type ParsedFile } from "./login-file-format";
import type { LoginChange, LoginStore } from "./logins";

export const LOGINS_FILE_NAME = "console-sessions.json";
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
