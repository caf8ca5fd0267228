// The console's hub of v0.1 handoff directories: a real directory, a real
// watcher and store; the browser stream coalesces changes, bounds what it
// holds, and beats when nothing happens.
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { WatchFileHandoffsResponse } from "@/lib/gen/baton/v1/files_pb";
import { handoffSettingsFromEnv } from "@/lib/handoff-files";
import { FileHandoffs, MAX_PENDING, dirKeyOf } from "./file-handoffs";

let dir: string;
let data: string;
let hub: FileHandoffs;

async function writeHandoff(id: string, over: Record<string, unknown> = {}): Promise<void> {
  const now = new Date().toISOString();
  const doc = {
    task_id: id,
    from_agent: "agent://a",
    to_agent: "",
    status: "offered",
    description: `d ${id}`,
    context: {},
    created_at: now,
    updated_at: now,
    ...over,
  };
  const tmp = path.join(dir, `.tmp-${id}`);
  await writeFile(tmp, JSON.stringify(doc));
  await rename(tmp, path.join(dir, `${id}.json`));
}

/** Read the stream in the background, keeping every message. */
function follow(h: FileHandoffs) {
  const ac = new AbortController();
  const got: WatchFileHandoffsResponse[] = [];
  const done = (async () => {
    for await (const m of h.watch(ac.signal)) got.push(m);
  })();
  return { got, stop: async () => (ac.abort(), await done) };
}

async function until(pred: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "file-hub-"));
  data = await mkdtemp(path.join(os.tmpdir(), "file-hub-data-"));
});
afterEach(async () => {
  hub?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(data, { recursive: true, force: true });
});

function start(opts: { heartbeatMs?: number; coalesceMs?: number } = {}): FileHandoffs {
  hub = new FileHandoffs({
    dirs: [dir],
    settings: handoffSettingsFromEnv({ BATON_HANDOFF_WATCH: "watch" }),
    historyFile: path.join(data, "h.sqlite"),
    ...opts,
  });
  return hub;
}

describe("FileHandoffs", () => {
  it("records what is there at start, keys directories stably, and reports their status", async () => {
    await writeHandoff("a1");
    const h = start();
    await h.ready;
    expect(h.history.find(dir, "a1.json")?.status).toBe("offered");
    expect(h.dirByKey(dirKeyOf(dir))?.path).toBe(dir);
    expect(dirKeyOf(dir)).toMatch(/^[0-9a-f]{12}$/);
    expect(h.directoryStatus()).toMatchObject([{ key: dirKeyOf(dir), path: dir, mode: "watch", tracked: 1 }]);
  });

  it("the stream opens with a heartbeat, then sends each changed handoff once per burst", async () => {
    const h = start({ coalesceMs: 150 });
    await h.ready;
    const s = follow(h);
    await until(() => s.got.length === 1);
    expect(s.got[0]?.item.case).toBe("heartbeat");
    await writeHandoff("b1");
    await writeHandoff("b1", { status: "accepted", to_agent: "x" });
    await writeHandoff("b2");
    await until(() => s.got.some((m) => m.item.case === "changes" && m.item.value.changed.some((c) => c.taskId === "b2")));
    await new Promise((r) => setTimeout(r, 400));
    await s.stop();
    const changed = s.got.flatMap((m) => (m.item.case === "changes" ? m.item.value.changed : []));
    // Coalesced: far fewer entries than writes, and the newest state of b1 wins.
    const b1 = changed.filter((c) => c.taskId === "b1");
    expect(b1.length).toBeGreaterThanOrEqual(1);
    expect(b1.length).toBeLessThanOrEqual(2);
    expect(b1[b1.length - 1]?.status).toBe("accepted");
  });

  it("beats when nothing changes", async () => {
    const h = start({ heartbeatMs: 100 });
    await h.ready;
    const s = follow(h);
    await until(() => s.got.filter((m) => m.item.case === "heartbeat").length >= 3, 3_000);
    await s.stop();
  });

  it("holds at most MAX_PENDING names per stream, then says overflow", async () => {
    const h = start({ coalesceMs: 300, heartbeatMs: 60_000 });
    await h.ready;
    const s = follow(h);
    await until(() => s.got.length === 1);
    // Notify directly (as the watcher would), more names than a stream holds.
    for (let i = 0; i < MAX_PENDING + 10; i++)
      h.recordSnapshot(dir, {
        valid: false,
        name: `x${i}.json`,
        path: path.join(dir, `x${i}.json`),
        hash: `h${i}`,
        viaSymlink: false,
        problems: [],
        reason: "test",
      });
    await until(() => s.got.some((m) => m.item.case === "changes"));
    await s.stop();
    const msg = s.got.find((m) => m.item.case === "changes");
    expect(msg?.item.case === "changes" && msg.item.value.overflow).toBe(true);
    expect(msg?.item.case === "changes" && msg.item.value.changed.length).toBe(0);
  });

  it("close ends open streams", async () => {
    const h = start({ heartbeatMs: 60_000 });
    await h.ready;
    const ac = new AbortController();
    const it = h.watch(ac.signal);
    await it.next();
    const next = it.next();
    h.close();
    expect((await next).done).toBe(true);
  });
});
