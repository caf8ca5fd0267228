// The lock a plain v0.1 tool can share: an exclusive-create lock file next to
// the handoff (`<task_id>.json.lock`, created with O_CREAT|O_EXCL, which is
// atomic on local filesystems and on NFSv3+). Whoever creates it holds it and
// removes it when done. Baton writes a small JSON body (pid, host, a random
// token, time) so others can tell who holds it; plain tools may leave it empty.
//
// Stale-lock recovery. A lock is stale when its holder is a dead process on
// this machine (same host name and pid namespace, pid gone), or when it is
// older than `staleMs` (its mtime). Breaking it is race-free between
// breakers: the breaker renames the lock to a unique side name (one rename
// wins), then checks that what it moved is the very file it judged stale
// (same device and inode). If it moved a fresh lock instead (another breaker
// was faster and someone took the lock again), it links that file back under
// the lock name (link fails if a lock exists, so it never clobbers one) and
// removes its side name. A holder re-checks that the lock file is still its
// own inode before it commits, and refuses if not.

import { randomBytes } from "node:crypto";
import { constants as C, readlinkSync } from "node:fs";
import { link, lstat, open, readFile, rename, unlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { HandoffError } from "./errors";

export interface LockOptions {
  /** A lock older than this (by mtime) is stale. Baton holds its lock for milliseconds. */
  staleMs: number;
  /** How long to wait for a busy lock before giving up with `lock-busy`. */
  waitMs: number;
  signal?: AbortSignal;
  /** Clock, for tests. */
  now?: () => number;
}

export const LOCK_SUFFIX = ".lock";

/** Where the lock of `file` lives. */
export function lockPathFor(file: string): string {
  return `${file}${LOCK_SUFFIX}`;
}

interface LockBody {
  pid?: number;
  host?: string;
  pidns?: string;
  token?: string;
  created_at?: string;
  by?: string;
}

let cachedPidNs: string | undefined | null = null;
/** The pid namespace of this process (Linux), so pids are only compared within one. */
function pidNamespace(): string | undefined {
  if (cachedPidNs !== null) return cachedPidNs;
  try {
    cachedPidNs = readlinkSync("/proc/self/ns/pid");
  } catch {
    cachedPidNs = undefined;
  }
  return cachedPidNs;
}

/**
 * What identifies one lock file. Device and inode are not enough (a freed
 * inode is reused at once by the next file created), so the body is compared
 * too: Baton's carries a random token. (The change time cannot be used: moving
 * a lock aside and linking it back changes it.) Two empty locks of plain tools
 * that get the same inode are indistinguishable; see README.md.
 */
export interface LockIdentity {
  dev: bigint;
  ino: bigint;
  body: string;
}

function sameLock(a: LockIdentity, b: LockIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.body === b.body;
}

/** The identity of the lock file at `p` (and its age and parsed body), or undefined when there is none. */
async function identify(p: string): Promise<(LockIdentity & { mtimeMs: number; parsed: LockBody }) | undefined> {
  let st;
  try {
    st = await lstat(p, { bigint: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  let body = "";
  if (st.isFile() && st.size > 0n && st.size <= 4096n) {
    try {
      body = await readFile(p, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
  }
  let parsed: LockBody = {};
  try {
    const v: unknown = body ? JSON.parse(body) : undefined;
    if (v && typeof v === "object") parsed = v as LockBody;
  } catch {
    // A plain tool's lock without a JSON body: judged by age only.
  }
  return { dev: st.dev, ino: st.ino, body, mtimeMs: Number(st.mtimeMs), parsed };
}

export class HeldLock {
  private released = false;
  constructor(
    readonly path: string,
    private readonly id: LockIdentity,
    readonly token: string,
  ) {}

  /** Whether the lock file is still the one this holder created. */
  async stillHeld(): Promise<boolean> {
    if (this.released) return false;
    const now = await identify(this.path).catch(() => undefined);
    return now !== undefined && sameLock(now, this.id);
  }

  /** Throw `lock-lost` unless the lock is still held. */
  async verify(): Promise<void> {
    if (!(await this.stillHeld())) {
      throw new HandoffError("lock-lost", `the lock ${this.path} was taken over while Baton held it (judged stale); nothing was written`);
    }
  }

  /** Remove the lock if it is still ours (a lock that was taken over is left to its new holder). */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await removeIfSame(this.path, this.id);
  }
}

/**
 * Remove `lockPath` only if it is the lock `expected`: move it aside under a
 * unique name (one rename wins), compare, and link a different file back
 * (link never replaces an existing lock). Returns whether `expected` was removed.
 */
export async function removeIfSame(lockPath: string, expected: LockIdentity): Promise<boolean> {
  // Hidden and short, next to the lock (rename stays within the directory).
  const aside = path.join(path.dirname(lockPath), `.baton-${randomBytes(6).toString("hex")}.breaking`);
  try {
    await rename(lockPath, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw e;
  }
  let same = false;
  try {
    const moved = await identify(aside);
    same = moved !== undefined && sameLock(moved, expected);
    if (!same) {
      try {
        await link(aside, lockPath);
      } catch (e) {
        // EEXIST: a newer lock is in place already; the holder of the one we
        // moved will find at its check that it no longer holds the lock.
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
    }
  } finally {
    await unlink(aside).catch(() => undefined);
  }
  return same;
}

function holderIsDead(body: LockBody): boolean {
  if (typeof body.pid !== "number" || body.host !== os.hostname()) return false;
  const ns = pidNamespace();
  if (ns === undefined || body.pidns !== ns) return false;
  if (body.pid === process.pid) return false;
  try {
    process.kill(body.pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}

function describeHolder(body: LockBody): string {
  if (typeof body.pid === "number") return `${body.by ?? "a process"} (pid ${body.pid}${body.host ? ` on ${body.host}` : ""})`;
  return "another writer";
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** Take the lock of `file` (waiting up to `waitMs`), breaking stale locks. */
export async function acquireLock(file: string, opts: LockOptions): Promise<HeldLock> {
  const lockPath = lockPathFor(file);
  const now = opts.now ?? Date.now;
  const deadline = now() + opts.waitMs;
  const token = randomBytes(12).toString("hex");
  const ns = pidNamespace();
  const body = `${JSON.stringify({ by: "baton", pid: process.pid, host: os.hostname(), ...(ns ? { pidns: ns } : {}), token, created_at: new Date(now()).toISOString() })}\n`;
  let delay = 1;
  for (;;) {
    try {
      const fh = await open(lockPath, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o644);
      let st;
      try {
        await fh.writeFile(body, "utf8");
        st = await fh.stat({ bigint: true });
      } finally {
        await fh.close();
      }
      return new HeldLock(lockPath, { dev: st.dev, ino: st.ino, body }, token);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    const held = await identify(lockPath);
    if (held === undefined) continue; // released just now
    const age = now() - held.mtimeMs;
    if (age > opts.staleMs || holderIsDead(held.parsed)) {
      await removeIfSame(lockPath, held);
      continue;
    }
    if (now() >= deadline) {
      throw new HandoffError(
        "lock-busy",
        `${describeHolder(held.parsed)} holds the lock ${lockPath} (for ${Math.max(0, Math.round(age))} ms); try again`,
        {
          lock: lockPath,
        },
      );
    }
    // Jittered backoff: 1, 2, 4 … 32 ms.
    await sleep(delay + Math.random() * delay, opts.signal);
    delay = Math.min(delay * 2, 32);
  }
}
