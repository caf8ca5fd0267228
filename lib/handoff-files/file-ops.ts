// The file operations directory.ts's atomic writes are made of: a hidden
// temporary file in the handoff directory, written and fsynced; the hash of a
// file as it is now (never through a link); and whether a path exists. The
// fsync of the directory after a rename is lib/base/sync-dir.ts.
import { randomBytes } from "node:crypto";
import { constants as C } from "node:fs";
import { chmod, lstat, open, unlink } from "node:fs/promises";
import path from "node:path";
import { hashBytes } from "./snapshot";

/** Write `text` to a new hidden temporary file in `dir`, fsynced, with `mode` if given; returns its path. */
export async function writeTemp(dir: string, text: string, mode: number | undefined): Promise<string> {
  // Hidden (never listed as a handoff) and short (whatever the length of the task_id).
  const tmp = path.join(dir, `.baton-${process.pid}-${randomBytes(6).toString("hex")}.tmp`);
  const fh = await open(tmp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o666);
  try {
    await fh.writeFile(text, "utf8");
    await fh.sync();
  } catch (e) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fh.close();
  if (mode !== undefined) await chmod(tmp, mode).catch(() => undefined);
  return tmp;
}

/** The file's hash now (undefined when it cannot be opened; a stand-in for a non-file or one over `maxBytes`). */
export async function hashOf(file: string, maxBytes: number): Promise<string | undefined> {
  let fh;
  try {
    fh = await open(file, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size > maxBytes) return `stat:${st.ino}:${st.size}`;
    return hashBytes(await fh.readFile());
  } finally {
    await fh.close();
  }
}

export async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch {
    return false;
  }
}
