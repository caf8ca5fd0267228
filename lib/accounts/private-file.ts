// Files only this user may read (users file, console sessions), written so a
// reader never sees half of one: a complete temporary file in the same folder
// (mode 0600, fsynced), then a rename or link onto the real name, then an
// fsync of the folder so the new name survives a crash.
import { randomBytes } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { chmod, mkdir, open, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { syncDir } from "@/lib/base/sync-dir";

/** Write `text` to a new mode-0600 temporary file next to `file` (fsynced); returns its path. */
export async function writePrivateTemp(file: string, text: string): Promise<string> {
  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const fh = await open(tmp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL, 0o600);
  try {
    await fh.writeFile(text, "utf8");
    await fh.sync();
  } catch (e) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fh.close();
  await chmod(tmp, 0o600); // whatever the umask
  return tmp;
}

/** Replace `file` with `text` atomically, mode 0600. */
export async function writePrivateFileAtomic(file: string, text: string): Promise<void> {
  const tmp = await writePrivateTemp(file, text);
  try {
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await syncDir(path.dirname(file));
}
