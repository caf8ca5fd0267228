// The shared lock file: exclusive while held, stale locks broken (by age, or
// at once when the holder is a dead process here), and breaking is race-free
// among breakers: a fresh lock moved by a late breaker is put back.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { acquireLock, lockPathFor, removeIfSame } from "./lock";

let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-lock-"));
  file = path.join(dir, "t.json");
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const opts = { staleMs: 10_000, waitMs: 5_000 };

describe("lock file", () => {
  it("is held by one holder at a time among many concurrent acquirers, and removed after", async () => {
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 24 }, async () => {
        const lock = await acquireLock(file, opts);
        inside++;
        most = Math.max(most, inside);
        await new Promise((r) => setTimeout(r, 1));
        await lock.verify();
        inside--;
        await lock.release();
      }),
    );
    expect(most).toBe(1);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it("writes who holds it, so a plain tool (or a person) can tell", async () => {
    const lock = await acquireLock(file, opts);
    const body = JSON.parse(fs.readFileSync(lockPathFor(file), "utf8"));
    expect(body).toMatchObject({ by: "baton", pid: process.pid, host: os.hostname(), token: lock.token });
    await lock.release();
  });

  it("breaks a lock left by a dead process on this machine at once, and a too-old lock of anyone", async () => {
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString();
    const ns = fs.readlinkSync("/proc/self/ns/pid");
    fs.writeFileSync(lockPathFor(file), JSON.stringify({ by: "baton", pid: Number(dead), host: os.hostname(), pidns: ns }));
    // Not stale by age (60 s) and only 100 ms to wait: only the dead-holder rule can let this through.
    await (await acquireLock(file, { staleMs: 60_000, waitMs: 100 })).release();

    fs.writeFileSync(lockPathFor(file), "held by a plain tool");
    const old = new Date(Date.now() - 30_000);
    fs.utimesSync(lockPathFor(file), old, old);
    await (await acquireLock(file, opts)).release();
  });

  it("a late breaker that moved a fresh lock puts it back, and the fresh holder still holds it", async () => {
    const lockFile = lockPathFor(file);
    fs.writeFileSync(lockFile, "stale");
    const st = fs.statSync(lockFile, { bigint: true });
    const stale = { dev: st.dev, ino: st.ino, body: "stale" };
    // Another breaker removed the stale lock and someone took the lock anew…
    fs.unlinkSync(lockFile);
    const fresh = await acquireLock(file, opts);
    // …then this breaker, which judged the old inode stale, acts on the name.
    expect(await removeIfSame(lockFile, stale)).toBe(false);
    expect(await fresh.stillHeld()).toBe(true);
    expect(fs.readdirSync(dir)).toEqual(["t.json.lock"]);
    await fresh.release();
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it("a holder whose lock was taken over finds out before it commits", async () => {
    const held = await acquireLock(file, opts);
    fs.unlinkSync(lockPathFor(file));
    const other = await acquireLock(file, opts);
    await expect(held.verify()).rejects.toMatchObject({ kind: "lock-lost" });
    await held.release(); // leaves the new holder's lock alone
    expect(await other.stillHeld()).toBe(true);
    await other.release();
  });
});
