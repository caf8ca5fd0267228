// Making a rename or link durable: fsync the folder that holds it, so the new
// name survives a crash. Used by every writer that replaces a file atomically
// (the users file, sign-ins, v0.1 handoff files).
import { open } from "node:fs/promises";

/** fsync a folder so a rename or link in it survives a crash (where the platform allows it). */
export async function syncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, "r");
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // Not supported on every filesystem; the rename itself is still atomic.
  }
}
