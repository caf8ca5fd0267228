// One v0.1 handoff directory: list, find by task-id prefix (both in
// directory-search.ts), offer, and change a handoff with an atomic
// compare-and-swap write (its file operations in file-ops.ts).
//
// A write (compareAndSwap) goes:
//   1. take the lock `<task_id>.json.lock` (lock.ts);
//   2. re-read the file and refuse (`conflict`) unless it is byte-for-byte
//      the snapshot the caller decided on;
//   3. write the new document to a temporary file in the same directory
//      (with the old file's permission bits) and fsync it;
//   4. check the lock is still ours (`lock-lost`) and the file is still the
//      same bytes (`foreign-writer`: a writer that ignores the lock changed
//      it while we held the lock; our write is dropped, theirs is kept);
//   5. rename the temporary file onto the handoff (atomic), fsync the directory;
//   6. read the file back: if it is no longer what we wrote, a writer that
//      ignores the lock replaced it right after; the result says so.
// Invalid files and symbolic links are never written, renamed or deleted.

import { link, lstat, mkdir, opendir, realpath, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { listHandoffs, resolveHandoff, type ListResult } from "./directory-search";
import { HandoffError } from "./errors";
import { syncDir } from "@/lib/base/sync-dir";
import { exists, hashOf, writeTemp } from "./file-ops";
import type { HandoffHistoryStore } from "./history";
import { acquireLock, LOCK_SUFFIX, type HeldLock } from "./lock";
import { checkDocument, serializeDocument, toDocument, type HandoffRecord, type HandoffStatus } from "./record";
import { hashBytes, isHandoffFileName, readSnapshot, type Snapshot, type ValidSnapshot } from "./snapshot";
import { applyAction, newOffer, type HandoffAction, type OfferInput } from "./state-machine";

export interface HandoffDirectoryOptions {
  /** Largest handoff file read or written, in bytes. Default 1 MiB. */
  maxBytes?: number;
  /** At most this many handoff files are read by one list or prefix search. Default 10,000. */
  maxFiles?: number;
  /** A lock older than this is stale and may be broken. Default 10 s. */
  lockStaleMs?: number;
  /** How long a write waits for a busy lock. Default 5 s. */
  lockWaitMs?: number;
  /** Clock (Unix ms), for tests. */
  now?: () => number;
  /** New task ids; default random UUID v4. */
  newId?: () => string;
  /**
   * Test seams: called inside a compare-and-swap while the lock is held,
   * after the temporary file is written (before the last checks) and right
   * after the rename. Tests use them to play a writer that ignores the lock.
   */
  hooks?: { beforeCommit?: (file: string) => Promise<void>; afterRename?: (file: string) => Promise<void> };
  /**
   * Baton's history of this directory. A file whose bytes were recorded as an
   * illegal step (e.g. completed → offered by another writer) is then refused
   * like an invalid file, though each snapshot on its own is valid.
   */
  history?: Pick<HandoffHistoryStore, "find">;
}

export const DIRECTORY_DEFAULTS = Object.freeze({
  maxBytes: 1024 * 1024,
  maxFiles: 10_000,
  lockStaleMs: 10_000,
  lockWaitMs: 5_000,
});

export interface WriteResult {
  /** What Baton wrote (read back). */
  snapshot: ValidSnapshot;
  /** The snapshot it replaced (absent for a new offer). */
  previous?: ValidSnapshot;
  /**
   * Set when a writer that ignores the lock replaced Baton's write right
   * after it (seen when reading it back): what the file holds now.
   */
  replacedBy?: Snapshot | null;
}

export class HandoffDirectory {
  readonly dir: string;
  readonly maxBytes: number;
  readonly maxFiles: number;
  private readonly lockStaleMs: number;
  private readonly lockWaitMs: number;
  private readonly now: () => number;
  private readonly newId: () => string;
  private readonly hooks: NonNullable<HandoffDirectoryOptions["hooks"]>;
  private readonly history?: Pick<HandoffHistoryStore, "find">;
  private real?: string;

  constructor(dir: string, options: HandoffDirectoryOptions = {}) {
    if (dir.trim() === "") throw new HandoffError("bad-input", "the handoff directory must not be empty");
    this.dir = path.resolve(dir);
    this.maxBytes = options.maxBytes ?? DIRECTORY_DEFAULTS.maxBytes;
    this.maxFiles = options.maxFiles ?? DIRECTORY_DEFAULTS.maxFiles;
    this.lockStaleMs = options.lockStaleMs ?? DIRECTORY_DEFAULTS.lockStaleMs;
    this.lockWaitMs = options.lockWaitMs ?? DIRECTORY_DEFAULTS.lockWaitMs;
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? (() => globalThis.crypto.randomUUID());
    this.hooks = options.hooks ?? {};
    if (options.history) this.history = options.history;
  }

  /** The reason Baton's history marks this exact snapshot invalid (an illegal step), if it does. */
  recordedProblem(s: Snapshot): string | undefined {
    const h = this.history?.find(this.dir, s.name);
    return h && h.present && !h.valid && h.hash === s.hash ? (h.problem ?? "recorded as invalid") : undefined;
  }

  /** The directory's real path; throws `not-found` when it does not exist. */
  async realDir(): Promise<string> {
    if (this.real !== undefined) return this.real;
    try {
      this.real = await realpath(this.dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT")
        throw new HandoffError("not-found", `the handoff directory ${this.dir} does not exist`);
      throw e;
    }
    return this.real;
  }

  /** Handoff file names in directory order (streamed; never the whole listing in memory). */
  async *names(): AsyncGenerator<string> {
    await this.realDir();
    const d = await opendir(this.dir, { bufferSize: 256 });
    for await (const entry of d) if (isHandoffFileName(entry.name)) yield entry.name;
  }

  /** Read one handoff file by name (`<task_id>.json`); undefined when missing. */
  async read(name: string): Promise<Snapshot | undefined> {
    if (!isHandoffFileName(name))
      throw new HandoffError("bad-input", `${JSON.stringify(name)} is not a handoff file name (<task_id>.json)`);
    return readSnapshot(this.dir, name, { maxBytes: this.maxBytes, realDir: await this.realDir() });
  }

  /** Every handoff (valid ones sorted by created_at), optionally only those with `status`. */
  list(opts: { status?: HandoffStatus } = {}): Promise<ListResult> {
    return listHandoffs(this, opts);
  }

  /**
   * The handoff whose task_id is `prefix` or starts with it. An exact match
   * wins; several prefix matches are `ambiguous`; none is `not-found`. The
   * result may be an invalid file (callers refuse to act on it).
   */
  resolve(prefix: string): Promise<Snapshot> {
    return resolveHandoff(this, prefix);
  }

  /** The valid handoff for `target` (a prefix or a snapshot), or the reason it cannot be acted on. */
  private async actionable(target: string | Snapshot): Promise<ValidSnapshot> {
    const s = typeof target === "string" ? await this.resolve(target) : target;
    if (!s.valid)
      throw new HandoffError("invalid", `${s.name} is not a valid v0.1 handoff, so Baton leaves it alone: ${s.reason}`, { name: s.name });
    const recorded = this.recordedProblem(s);
    if (recorded !== undefined)
      throw new HandoffError("invalid", `${s.name} is not a valid v0.1 handoff, so Baton leaves it alone: ${recorded}`, { name: s.name });
    if (s.viaSymlink)
      throw new HandoffError("read-only", `${s.name} is a symbolic link; Baton reads it but never writes through links`, { name: s.name });
    return s;
  }

  /** Create a new `offered` handoff. Never replaces an existing file (`exists`). */
  async offer(input: OfferInput): Promise<WriteResult> {
    const record = newOffer(input, this.now(), this.newId);
    const name = `${record.task_id}.json`;
    const text = this.validatedText(record);
    await mkdir(this.dir, { recursive: true });
    this.real = undefined;
    const file = path.join(this.dir, name);
    const tmp = await writeTemp(this.dir, text, undefined);
    try {
      try {
        await link(tmp, file); // atomic create-if-absent
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "EEXIST") throw new HandoffError("exists", `a handoff with task_id ${record.task_id} exists already`);
        if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw e;
        // No hard links on this filesystem: create-if-absent under the lock.
        await this.withLock(file, async () => {
          if (await exists(file)) throw new HandoffError("exists", `a handoff with task_id ${record.task_id} exists already`);
          await rename(tmp, file);
        });
      }
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
    await syncDir(this.dir);
    const written = await this.read(name);
    if (!written?.valid) throw new HandoffError("foreign-writer", `${name} was replaced right after Baton created it`);
    return { snapshot: written };
  }

  /**
   * Apply a state-machine action to the handoff `target` (a task-id prefix or
   * a snapshot read before). `expectHash` (e.g. the hash a person saw in the
   * console) refuses with `conflict` unless the file is still those bytes.
   */
  async act(
    target: string | Snapshot,
    action: HandoffAction,
    opts: { signal?: AbortSignal; expectHash?: string } = {},
  ): Promise<WriteResult> {
    const current = await this.actionable(target);
    if (opts.expectHash !== undefined && current.hash !== opts.expectHash) {
      throw new HandoffError(
        "conflict",
        `${current.record.task_id} changed since you saw it: it is ${current.record.status}${current.record.to_agent ? ` (${current.record.to_agent})` : ""} now`,
        { current },
      );
    }
    const next = applyAction(current.record, action, this.now());
    return this.compareAndSwap(current, next, opts);
  }

  /**
   * Replace the handoff `expected` with `next`, atomically, only if the file
   * is still exactly `expected` (see the file comment for the steps).
   */
  async compareAndSwap(expected: ValidSnapshot, next: HandoffRecord, opts: { signal?: AbortSignal } = {}): Promise<WriteResult> {
    const current = await this.actionable(expected);
    if (next.task_id !== current.record.task_id) throw new HandoffError("bad-input", "the task_id of a handoff cannot change");
    const text = this.validatedText(next, current);
    const file = current.path;
    return this.withLock(
      file,
      async (lock) => {
        const now = await this.read(current.name);
        if (!now) throw new HandoffError("conflict", `${current.name} was deleted since it was read`);
        if (now.hash !== current.hash) throw new HandoffError("conflict", changedSentence(current, now), { current: now });
        const st = await lstat(file).catch((e: NodeJS.ErrnoException) => {
          if (e.code === "ENOENT") throw new HandoffError("conflict", `${current.name} was deleted since it was read`);
          throw e;
        });
        const tmp = await writeTemp(this.dir, text, st.mode & 0o7777);
        try {
          await this.hooks.beforeCommit?.(file);
          await lock.verify();
          const hashNow = await hashOf(file, this.maxBytes);
          if (hashNow !== current.hash) {
            throw new HandoffError(
              "foreign-writer",
              `${current.name} changed while Baton held its lock: a writer that ignores ${path.basename(lock.path)} wrote it. Baton did not overwrite it; read it again`,
            );
          }
          await rename(tmp, file);
        } finally {
          await unlink(tmp).catch(() => undefined);
        }
        await this.hooks.afterRename?.(file);
        await syncDir(this.dir);
        const after = await this.read(current.name);
        const wrote = hashBytes(Buffer.from(text, "utf8"));
        if (after?.valid && after.hash === wrote) return { snapshot: after, previous: current };
        // Replaced right after our rename by a writer that ignores the lock.
        const reread = await readSnapshot(this.dir, current.name, { maxBytes: this.maxBytes, realDir: await this.realDir() });
        return { snapshot: syntheticSnapshot(current, text, wrote), previous: current, replacedBy: reread ?? null };
      },
      opts.signal,
    );
  }

  private validatedText(record: HandoffRecord, base?: ValidSnapshot): string {
    const doc = toDocument(record, base?.document);
    const checked = checkDocument(doc);
    if (!checked.ok)
      throw new HandoffError("bad-input", `the handoff would not be valid v0.1: ${checked.problems.map((p) => p.message).join("; ")}`);
    // Room for the lock file's name (<task_id>.json.lock) within the usual 255-byte limit.
    if (Buffer.byteLength(`${record.task_id}.json${LOCK_SUFFIX}`, "utf8") > 255)
      throw new HandoffError("bad-input", "the task_id is too long for a file name");
    const text = serializeDocument(doc);
    const size = Buffer.byteLength(text, "utf8");
    if (size > this.maxBytes)
      throw new HandoffError("too-large", `the handoff would be ${size} bytes, over the ${this.maxBytes}-byte limit`);
    return text;
  }

  private async withLock<T>(file: string, fn: (lock: HeldLock) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const lock = await acquireLock(file, {
      staleMs: this.lockStaleMs,
      waitMs: this.lockWaitMs,
      ...(signal ? { signal } : {}),
      now: this.now,
    });
    try {
      return await fn(lock);
    } finally {
      await lock.release();
    }
  }
}

function changedSentence(before: ValidSnapshot, now: Snapshot): string {
  if (!now.valid) return `${before.name} changed since it was read and is no longer a valid handoff: ${now.reason}`;
  const r = now.record;
  if (r.status !== before.record.status) {
    return `${r.task_id} changed since it was read: it is ${r.status}${r.to_agent ? ` (${r.to_agent})` : ""} now, not ${before.record.status}`;
  }
  return `${r.task_id} changed since it was read (still ${r.status}); read it again`;
}

/** The snapshot Baton wrote when the file no longer holds it (it was replaced right after). */
function syntheticSnapshot(base: ValidSnapshot, text: string, hash: string): ValidSnapshot {
  const checked = checkDocument(JSON.parse(text));
  if (!checked.ok) throw new Error("unreachable: Baton wrote an invalid document");
  return { ...base, record: checked.record, document: checked.document, hash, size: Buffer.byteLength(text, "utf8") };
}
