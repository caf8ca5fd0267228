// Watching directories on the real file system: changes arrive with
// fs.watch and with polling, a directory that appears later is
// picked up, history survives a restart without duplicates, and hostile load
// (a file rewritten in a tight loop, more files than the limit) stays bounded.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HandoffDirectory } from "./directory";
import { SqliteHistoryStore } from "./history-sqlite";
import { HandoffWatcher, isNetworkFilesystem, isNetworkFsType, type HandoffChange, type WatcherOptions } from "./watch";

let root: string;
let dir: string;
const cleanup: (() => void)[] = [];
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "baton-watch-"));
  dir = path.join(root, "handoffs");
});
afterEach(() => {
  for (const c of cleanup.splice(0).reverse()) c();
  fs.rmSync(root, { recursive: true, force: true });
});

function watcher(opts: Partial<WatcherOptions> = {}) {
  const w = new HandoffWatcher({ dirs: [dir], ...opts });
  const changes: HandoffChange[] = [];
  w.subscribe((c) => changes.push(c));
  cleanup.push(() => w.stop());
  return { w, changes };
}

// Waits are generous: the suite shares two cores with other work. How fast changes arrive is
// measured by `npm run bench:files`, not asserted here.
async function until<T>(what: string, fn: () => T | undefined, ms = 5_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const find = (changes: HandoffChange[], pred: (c: HandoffChange) => boolean) => () => changes.find(pred);

for (const mode of ["watch", "poll"] as const) {
  describe(`${mode} mode`, () => {
    it("reports files already there, then new, changed and removed ones as they happen", async () => {
      const hd = new HandoffDirectory(dir, {
        newId: (() => {
          let i = 0;
          return () => `t${++i}`;
        })(),
      });
      await hd.offer({ description: "already there", from: "x" });
      const { w, changes } = watcher({ mode, pollMs: 200 });
      await w.start();
      expect(changes.map((c) => [c.kind, c.taskId, c.source])).toEqual([["added", "t1", "initial"]]);
      expect(w.status()[0]).toMatchObject({ mode, tracked: 1, untracked: 0 });

      await hd.offer({ description: "new", from: "x" });
      await until(
        "t2 added",
        find(changes, (c) => c.taskId === "t2" && c.kind === "added"),
      );
      await hd.act("t2", { kind: "accept", agent: "bob" });
      const accepted = await until(
        "t2 accepted",
        find(changes, (c) => c.taskId === "t2" && c.kind === "changed"),
      );
      expect(accepted).toMatchObject({ previousStatus: "offered", step: "legal" });
      expect(accepted.snapshot?.valid && accepted.snapshot.record.to_agent).toBe("bob");
      fs.writeFileSync(path.join(dir, "t1.json"), "{ torn");
      const torn = await until(
        "t1 invalid",
        find(changes, (c) => c.taskId === "t1" && c.kind === "changed"),
      );
      expect(torn.snapshot?.valid).toBe(false);
      fs.unlinkSync(path.join(dir, "t2.json"));
      await until(
        "t2 removed",
        find(changes, (c) => c.taskId === "t2" && c.kind === "removed"),
      );
      // Lock and temporary files are never reported.
      expect(changes.every((c) => c.name.endsWith(".json") && !c.name.startsWith("."))).toBe(true);
    });
  });
}

describe("bounds", () => {
  it("a file rewritten in a tight loop is read a bounded number of times and its last state is seen", async () => {
    fs.mkdirSync(dir);
    const hd = new HandoffDirectory(dir, { newId: () => "hot" });
    const store = new SqliteHistoryStore(path.join(root, "h.sqlite"), { maxSnapshotsPerHandoff: 20 });
    cleanup.push(() => store.close());
    const { w, changes } = watcher({ mode: "watch", minReadIntervalMs: 50, history: store });
    await w.start();
    const { snapshot } = await hd.offer({ description: "hot", from: "x" });
    const file = path.join(dir, "hot.json");
    const started = Date.now();
    const writes = 2_000;
    for (let n = 1; n <= writes; n++) {
      fs.writeFileSync(file, JSON.stringify({ ...snapshot.document, description: `rewrite ${n}` }));
      if (n % 20 === 0) await new Promise((r) => setImmediate(r));
    }
    await until(
      "the last rewrite",
      find(changes, (c) => c.snapshot?.valid === true && c.snapshot.record.description === `rewrite ${writes}`),
    );
    const elapsed = Date.now() - started;
    // At most one read per 50 ms (plus the first), whatever the number of writes.
    const reads = changes.filter((c) => c.taskId === "hot").length;
    expect(reads).toBeLessThanOrEqual(Math.ceil(elapsed / 50) + 2);
    expect(reads).toBeLessThan(writes / 10);
    const summary = store.find(dir, "hot.json");
    expect(store.history(summary?.id ?? -1).items.length).toBeLessThanOrEqual(20);
    expect(w.status()[0]?.tracked).toBe(1);
  });

  it("tracks at most maxFiles files per directory and counts the rest", async () => {
    fs.mkdirSync(dir);
    const hd = new HandoffDirectory(dir);
    for (let i = 0; i < 60; i++) await hd.offer({ description: `d${i}`, from: "x" });
    const { w, changes } = watcher({ mode: "poll", pollMs: 100, maxFiles: 25 });
    await w.start();
    expect(changes).toHaveLength(25);
    expect(w.status()[0]).toMatchObject({ tracked: 25, untracked: 35 });
    await hd.offer({ description: "one more", from: "x" });
    await w.rescan();
    expect(changes).toHaveLength(25);
    expect(w.status()[0]).toMatchObject({ tracked: 25, untracked: 36 });
  });
});

describe("directories and history", () => {
  it("picks up a directory created after the watcher started", async () => {
    const { w, changes } = watcher({ mode: "auto", pollMs: 100 });
    await w.start();
    expect(w.status()[0]?.mode).toBe("missing");
    await new HandoffDirectory(dir, { newId: () => "late" }).offer({ description: "late", from: "x" });
    await until(
      "late added",
      find(changes, (c) => c.taskId === "late"),
    );
    expect(w.status()[0]?.mode).toBe("watch"); // a local filesystem: notifications
    expect(await isNetworkFilesystem(dir)).toBe(false);
  });

  it("auto mode polls on network and FUSE filesystems (statfs magic), and watches local ones", () => {
    for (const nfs of [0x6969, 0xff534d42, 0xfe534d42, 0x65735546, 0x01021997, BigInt(0x6969)]) expect(isNetworkFsType(nfs)).toBe(true);
    // ext4, xfs, btrfs, tmpfs, overlayfs
    for (const local of [0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630]) expect(isNetworkFsType(local)).toBe(false);
    // statfs can report the magic as a negative 32-bit number.
    expect(isNetworkFsType(0xff534d42 | 0)).toBe(true);
  });

  it("after a restart records only what changed while it was stopped, with the step from the last run", async () => {
    const hd = new HandoffDirectory(dir, {
      newId: (() => {
        let i = 0;
        return () => `r${++i}`;
      })(),
    });
    await hd.offer({ description: "one", from: "x" });
    await hd.offer({ description: "two", from: "x" });
    const file = path.join(root, "data", "handoff-files.sqlite");
    let store = new SqliteHistoryStore(file);
    let { w } = watcher({ mode: "watch", history: store });
    await w.start();
    w.stop();
    store.close();
    await hd.act("r1", { kind: "accept", agent: "bob" });
    fs.unlinkSync(path.join(dir, "r2.json"));

    store = new SqliteHistoryStore(file);
    cleanup.push(() => store.close());
    const second = watcher({ mode: "watch", history: store });
    w = second.w;
    await w.start();
    const kinds = second.changes.map((c) => [c.taskId, c.kind, c.step ?? "-"]).sort();
    expect(kinds).toEqual([
      ["r1", "changed", "legal"],
      ["r2", "removed", "-"],
    ]);
    const r1 = store.find(dir, "r1.json");
    expect(r1).toMatchObject({ status: "accepted", toAgent: "bob", snapshots: 2 });
    expect(store.find(dir, "r2.json")).toMatchObject({ present: false, snapshots: 2 });
  });
});
