// Reading one handoff file safely: never through a symbolic link that leaves
// the directory, never a FIFO or device (opened non-blocking, then checked),
// never more than the size limit, and always into a Snapshot that is either
// a valid v0.1 record or the reasons it is not. Reading never changes a file.

import { createHash } from "node:crypto";
import { constants as C, type Stats } from "node:fs";
import { open, realpath, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { parseHandoffBytes, type HandoffRecord, type JsonObject, type Problem } from "./record";

interface SnapshotBase {
  /** File name inside the directory, e.g. `3f2a….json`. */
  name: string;
  /** Absolute path as configured (not resolved through links). */
  path: string;
  /** Content hash (sha256 hex) or, when the content was not read, a stat signature. */
  hash: string;
  size?: number;
  mtimeMs?: number;
  /** Change time of the inode read (moves on every write and rename; cannot be set back). */
  ctimeMs?: number;
  /** The name is a symbolic link to a file inside the directory: read, never written. */
  viaSymlink: boolean;
  /** Device, inode, size and times of what was read (a watcher compares it with a later stat). */
  sig?: string;
}

export interface ValidSnapshot extends SnapshotBase {
  valid: true;
  record: HandoffRecord;
  /** The whole JSON document, unknown fields included. */
  document: JsonObject;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

export interface InvalidSnapshot extends SnapshotBase {
  valid: false;
  problems: Problem[];
  /** The problems in one sentence. */
  reason: string;
  /** The task_id the file claims, when it could be read. */
  taskId?: string;
  /** The start of the text, for display (at most 512 characters), when it was read. */
  excerpt?: string;
}

export type Snapshot = ValidSnapshot | InvalidSnapshot;

export interface ReadOptions {
  /** Largest file read, in bytes. */
  maxBytes: number;
  /** The directory's real path (symbolic links resolved), to judge where links point. */
  realDir: string;
}

/** Whether `name` is one a v0.1 handoff file could have: `*.json`, not hidden (temp and lock files start with "."). */
export function isHandoffFileName(name: string): boolean {
  return name.endsWith(".json") && name.length > 5 && !name.startsWith(".") && !name.includes("/") && !name.includes("\0");
}

export function hashBytes(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function statSignature(st: Stats): string {
  return `stat:${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
}

/** The identity and version of a file as stat sees it; equal strings mean "not changed" to a watcher. */
export function fileSignature(st: Stats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

function invalid(name: string, file: string, problems: Problem[], extra: Partial<InvalidSnapshot> = {}): InvalidSnapshot {
  return {
    valid: false,
    name,
    path: file,
    problems,
    reason: problems.map((p) => p.message).join("; "),
    hash: extra.hash ?? `problem:${problems.map((p) => p.code).join(",")}`,
    viaSymlink: false,
    ...extra,
  };
}

function isInside(realDir: string, target: string): boolean {
  const rel = path.relative(realDir, target);
  return rel !== "" && !rel.startsWith(`..${path.sep}`) && rel !== ".." && !path.isAbsolute(rel);
}

const OPEN_FLAGS = C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK;

/**
 * Read `name` in `dir`. Undefined when there is no such file. Errors other
 * than "missing", "a link", "not allowed to read" are thrown (e.g. EIO).
 */
export async function readSnapshot(dir: string, name: string, opts: ReadOptions): Promise<Snapshot | undefined> {
  const file = path.join(dir, name);
  let fh: FileHandle;
  let viaSymlink = false;
  try {
    fh = await open(file, OPEN_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    if (code === "EACCES" || code === "EPERM")
      return invalid(name, file, [{ code: "unreadable", message: `cannot read the file (${code})` }]);
    if (code !== "ELOOP" && code !== "EMLINK") throw e;
    // A symbolic link: follow it only to a file inside the directory.
    let target: string;
    try {
      target = await realpath(file);
    } catch (e2) {
      const c2 = (e2 as NodeJS.ErrnoException).code;
      if (c2 === "ENOENT" || c2 === "ELOOP" || c2 === "ENOTDIR") {
        return invalid(name, file, [{ code: "symlink-dangling", message: "a symbolic link that points nowhere" }]);
      }
      throw e2;
    }
    if (!isInside(opts.realDir, target)) {
      return invalid(name, file, [
        { code: "symlink-outside", message: `a symbolic link to ${target}, outside the handoff directory; Baton does not follow it` },
      ]);
    }
    try {
      fh = await open(target, OPEN_FLAGS);
    } catch (e3) {
      const c3 = (e3 as NodeJS.ErrnoException).code;
      if (c3 === "ENOENT") return undefined;
      if (c3 === "ELOOP" || c3 === "EMLINK")
        return invalid(name, file, [{ code: "symlink-dangling", message: "a symbolic link that changed while it was read" }]);
      if (c3 === "EACCES" || c3 === "EPERM") return invalid(name, file, [{ code: "unreadable", message: `cannot read the file (${c3})` }]);
      throw e3;
    }
    viaSymlink = true;
  }
  try {
    const st = await fh.stat();
    const sig = fileSignature(st);
    if (!st.isFile()) {
      const what = st.isDirectory() ? "a directory" : st.isFIFO() ? "a named pipe" : st.isSocket() ? "a socket" : "not a regular file";
      return invalid(name, file, [{ code: "not-regular-file", message: `${what}, not a handoff file` }], {
        hash: statSignature(st),
        viaSymlink,
        sig,
      });
    }
    const tooLarge = (size: number) =>
      invalid(
        name,
        file,
        [{ code: "too-large", message: `${size > opts.maxBytes ? `${size} bytes` : "the file"} is over the ${opts.maxBytes}-byte limit` }],
        {
          hash: statSignature(st),
          size,
          mtimeMs: st.mtimeMs,
          ctimeMs: st.ctimeMs,
          viaSymlink,
          sig,
        },
      );
    if (st.size > opts.maxBytes) return tooLarge(st.size);
    const bytes = await readAtMost(fh, opts.maxBytes + 1, st.size);
    if (bytes.length > opts.maxBytes) return tooLarge(bytes.length);
    const hash = hashBytes(bytes);
    const parsed = parseHandoffBytes(bytes, name);
    if (!parsed.ok) {
      const claimed = parsed.document?.task_id;
      return invalid(name, file, parsed.problems, {
        hash,
        size: bytes.length,
        mtimeMs: st.mtimeMs,
        ctimeMs: st.ctimeMs,
        viaSymlink,
        sig,
        ...(typeof claimed === "string" ? { taskId: claimed } : {}),
        excerpt: Buffer.from(bytes.subarray(0, 2048)).toString("utf8").slice(0, 512),
      });
    }
    return {
      valid: true,
      name,
      path: file,
      record: parsed.record,
      document: parsed.document,
      hash,
      size: bytes.length,
      mtimeMs: st.mtimeMs,
      ctimeMs: st.ctimeMs,
      viaSymlink,
      sig,
    };
  } finally {
    await fh.close();
  }
}

/** Read up to `limit` bytes (the file may grow or shrink while it is read). */
async function readAtMost(fh: FileHandle, limit: number, sizeHint: number): Promise<Uint8Array> {
  let buf = Buffer.allocUnsafe(Math.min(limit, Math.max(sizeHint, 0) + 1, 64 * 1024) || 1);
  let len = 0;
  for (;;) {
    if (len === buf.length) {
      if (buf.length >= limit) break;
      const bigger = Buffer.allocUnsafe(Math.min(limit, buf.length * 2));
      buf.copy(bigger, 0, 0, len);
      buf = bigger;
    }
    const { bytesRead } = await fh.read(buf, len, buf.length - len, len);
    if (bytesRead === 0) break;
    len += bytesRead;
  }
  return buf.subarray(0, len);
}
