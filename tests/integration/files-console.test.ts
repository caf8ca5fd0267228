// The console's FileHandoffService against the real console server (embedded
// runtime, real accounts, a real v0.1 directory on disk): files written by
// another program appear in the list and the watch stream; people act with
// the MACP roles, CSRF and sign-in like every other action; a lost race is
// ABORTED and nothing is overwritten; invalid files are listed with their
// reason and never touched; a retried offer or accept does nothing twice.
import { readFile, writeFile, mkdtemp, rm, readdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileHandoffAction, FileHandoffService, type FileHandoff, type WatchFileHandoffsResponse } from "@/lib/gen/baton/v1/files_pb";
import { dirKeyOf } from "@/lib/gateway/file-handoffs";
import { Browser, signedIn, startTestConsole, uuid, type TestConsole } from "./actions-harness";

const PEOPLE = [
  { username: "alice", role: "operator", name: "Alice Park" },
  { username: "bob", role: "operator", name: "Bob Ito" },
  { username: "carol", role: "approver", name: "Carol Lee" },
  { username: "vic", role: "viewer", name: "Vic Viewer" },
] as const;

let tc: TestConsole;
let dir: string;
let data: string;
let key: string;

function files(b: Browser, opts: { csrf?: boolean } = {}): Client<typeof FileHandoffService> {
  const interceptor: Interceptor = (next) => (req) => {
    for (const [k, v] of Object.entries(b.headers())) req.header.set(k, v);
    if (opts.csrf !== false && b.csrf) req.header.set("x-baton-csrf", b.csrf);
    return next(req);
  };
  return createClient(FileHandoffService, createConnectTransport({ baseUrl: b.baseUrl, httpVersion: "1.1", interceptors: [interceptor] }));
}

function doc(taskId: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    task_id: taskId,
    from_agent: "agent://planner",
    to_agent: "",
    status: "offered",
    description: "Rotate the TLS certificates",
    context: { ticket: "OPS-12" },
    created_at: now,
    updated_at: now,
    ...over,
  };
}

async function writeDoc(taskId: string, d: Record<string, unknown>): Promise<void> {
  const tmp = path.join(dir, `.t-${uuid()}`);
  await writeFile(tmp, JSON.stringify(d, null, 2));
  const { rename } = await import("node:fs/promises");
  await rename(tmp, path.join(dir, `${taskId}.json`));
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function listed(b: Browser, taskId: string, pred: (h: FileHandoff) => boolean = () => true): Promise<FileHandoff> {
  return until(`${taskId} listed`, async () => {
    const res = await files(b).listFileHandoffs({ limit: 200 });
    return res.handoffs.find((h) => h.taskId === taskId && pred(h));
  });
}

async function codeOf(p: Promise<unknown>): Promise<{ code: Code; message: string; meta: Headers }> {
  try {
    await p;
  } catch (e) {
    const ce = ConnectError.from(e);
    return { code: ce.code, message: ce.rawMessage, meta: ce.metadata };
  }
  throw new Error("expected an error");
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-files-console-"));
  data = await mkdtemp(path.join(os.tmpdir(), "baton-files-data-"));
  tc = await startTestConsole(PEOPLE, { BATON_HANDOFF_DIRS: dir, BATON_DATA_DIR: data, BATON_HEARTBEAT_MS: "500" });
  await tc.console.files?.ready;
  key = dirKeyOf(dir);
}, 60_000);

afterAll(async () => {
  await tc?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(data, { recursive: true, force: true });
});

describe("FileHandoffService", () => {
  it("reports the watched directory", async () => {
    const b = await signedIn(tc, "vic");
    const s = await files(b).getFileHandoffSettings({});
    expect(s.enabled).toBe(true);
    expect(s.bridge).toBe(false);
    expect(s.directories.map((d) => [d.key, d.path])).toEqual([[key, dir]]);
  });

  it("reads need sign-in", async () => {
    const anon = new Browser(tc.url);
    expect((await codeOf(files(anon).listFileHandoffs({}))).code).toBe(Code.Unauthenticated);
  });

  it("a file another program writes appears in the list and on the watch stream", async () => {
    const b = await signedIn(tc, "vic");
    const ac = new AbortController();
    const seen: FileHandoff[] = [];
    let heartbeats = 0;
    const stream = (async () => {
      try {
        for await (const m of files(b).watchFileHandoffs({}, { signal: ac.signal }) as AsyncIterable<WatchFileHandoffsResponse>) {
          if (m.item.case === "changes") seen.push(...m.item.value.changed);
          if (m.item.case === "heartbeat") heartbeats++;
        }
      } catch {
        // aborted
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    const id = uuid();
    await writeDoc(id, doc(id));
    const row = await until("change on the stream", async () => seen.find((h) => h.taskId === id));
    expect(row).toMatchObject({ status: "offered", fromAgent: "agent://planner", valid: true, dirKey: key });
    await until("a heartbeat", async () => (heartbeats > 0 ? true : undefined), 3_000);
    ac.abort();
    await stream;
  });

  it("operators act with the MACP roles; viewers cannot; the file carries the person's participant id", async () => {
    const id = uuid();
    await writeDoc(id, doc(id));
    const vic = await signedIn(tc, "vic");
    const bob = await signedIn(tc, "bob");
    const row = await listed(vic, id);
    const denied = await codeOf(
      files(vic).actOnFileHandoff({ dirKey: key, taskId: id, action: FileHandoffAction.ACCEPT, expectHash: row.hash }),
    );
    expect(denied.code).toBe(Code.PermissionDenied);
    expect(denied.meta.get("x-baton-deny")).toBe("role");

    // Completing before anyone accepted: the state machine says no.
    const early = await codeOf(
      files(bob).actOnFileHandoff({ dirKey: key, taskId: id, action: FileHandoffAction.COMPLETE, expectHash: row.hash }),
    );
    expect(early.code).toBe(Code.PermissionDenied);
    expect(early.message).toMatch(/can only be completed while it is accepted/);

    const res = await files(bob).actOnFileHandoff({ dirKey: key, taskId: id, action: FileHandoffAction.ACCEPT, expectHash: row.hash });
    expect(res.handoff?.status).toBe("accepted");
    expect(res.handoff?.toAgent).toBe("human:bob");
    const onDisk = JSON.parse(await readFile(path.join(dir, `${id}.json`), "utf8")) as Record<string, unknown>;
    expect(onDisk).toMatchObject({ status: "accepted", to_agent: "human:bob", context: { ticket: "OPS-12" } });

    // The same request again (a retry after a lost answer): nothing is written twice.
    const again = await files(bob).actOnFileHandoff({ dirKey: key, taskId: id, action: FileHandoffAction.ACCEPT, expectHash: row.hash });
    expect(again.duplicate).toBe(true);

    // Only bob, who accepted it, may complete it.
    const alice = await signedIn(tc, "alice");
    const notHers = await codeOf(
      files(alice).actOnFileHandoff({ dirKey: key, taskId: id, action: FileHandoffAction.COMPLETE, expectHash: res.handoff?.hash ?? "" }),
    );
    expect(notHers.code).toBe(Code.PermissionDenied);
    expect(notHers.meta.get("x-baton-deny")).toBe("authority");
    const done = await files(bob).actOnFileHandoff({
      dirKey: key,
      taskId: id,
      action: FileHandoffAction.COMPLETE,
      expectHash: res.handoff?.hash ?? "",
      context: { result: "rotated" },
    });
    expect(done.handoff?.status).toBe("completed");

    const page = await files(vic).getFileHandoff({ dirKey: key, taskId: id });
    expect(page.timeline.map((e) => [e.previousStatus, e.status, e.step])).toEqual([
      ["", "offered", "first"],
      ["offered", "accepted", "legal"],
      ["accepted", "completed", "legal"],
    ]);
    expect(JSON.parse(page.contextJson)).toEqual({ ticket: "OPS-12", result: "rotated" });
  });

  it("an offer to someone else is theirs alone", async () => {
    const id = uuid();
    await writeDoc(id, doc(id, { to_agent: "human:carol" }));
    const bob = await signedIn(tc, "bob");
    const row = await listed(bob, id);
    const r = await codeOf(
      files(bob).actOnFileHandoff({ dirKey: key, taskId: id, action: FileHandoffAction.REJECT, expectHash: row.hash }),
    );
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.message).toBe("This handoff is offered to Carol Lee; only they can turn it down.");
    const carol = await signedIn(tc, "carol");
    const mine = await files(carol).listFileHandoffs({ waitingOnMe: true });
    expect(mine.handoffs.map((h) => h.taskId)).toContain(id);
    const bobs = await files(bob).listFileHandoffs({ waitingOnMe: true });
    expect(bobs.handoffs.map((h) => h.taskId)).not.toContain(id);
  });

  it("state-changing calls need the CSRF token", async () => {
    const id = uuid();
    await writeDoc(id, doc(id));
    const bob = await signedIn(tc, "bob");
    const row = await listed(bob, id);
    const before = await readFile(path.join(dir, `${id}.json`), "utf8");
    const r = await codeOf(
      files(bob, { csrf: false }).actOnFileHandoff({ dirKey: key, taskId: id, action: FileHandoffAction.ACCEPT, expectHash: row.hash }),
    );
    expect(r.code).toBe(Code.PermissionDenied);
    expect(r.meta.get("x-baton-deny")).toBe("csrf");
    const o = await codeOf(files(bob, { csrf: false }).offerFileHandoff({ dirKey: key, description: "x", messageId: uuid() }));
    expect(o.code).toBe(Code.PermissionDenied);
    expect(await readFile(path.join(dir, `${id}.json`), "utf8")).toBe(before);
  });

  it("a lost race is ABORTED with what the file says now, and nothing is overwritten", async () => {
    const id = uuid();
    await writeDoc(id, doc(id));
    const bob = await signedIn(tc, "bob");
    const row = await listed(bob, id);
    // Another agent accepts it first (a plain tool, after bob loaded the page).
    await writeDoc(id, doc(id, { status: "accepted", to_agent: "agent://fast" }));
    const theirs = await readFile(path.join(dir, `${id}.json`), "utf8");
    const r = await codeOf(
      files(bob).actOnFileHandoff({ dirKey: key, taskId: id, action: FileHandoffAction.ACCEPT, expectHash: row.hash }),
    );
    expect(r.code).toBe(Code.Aborted);
    expect(r.meta.get("x-baton-file")).toBe("conflict");
    expect(r.message).toMatch(/Someone else changed this handoff.*accepted \(agent:\/\/fast\).*Reload/);
    expect(await readFile(path.join(dir, `${id}.json`), "utf8")).toBe(theirs);
  });

  it("invalid files are listed with the reason and never touched", async () => {
    const broken = uuid();
    await writeFile(path.join(dir, `${broken}.json`), '{"task_id": "');
    const misnamed = uuid();
    await writeFile(path.join(dir, `${misnamed}.json`), JSON.stringify(doc(uuid())));
    const bob = await signedIn(tc, "bob");
    // writeFile creates the file empty, then writes: the watcher may list it in between ("the file
    // is empty"), and must then list what it says once written.
    const a = await listed(bob, broken, (h) => /JSON/i.test(h.problem));
    expect(a.valid).toBe(false);
    expect(a.problem).toMatch(/JSON/i);
    const b = await listed(bob, misnamed, (h) => !/empty/i.test(h.problem));
    expect(b.valid).toBe(false);
    expect(b.problem).toMatch(/name|task_id/i);
    const page = await files(bob).getFileHandoff({ dirKey: key, taskId: broken });
    expect(page.excerpt).toBe('{"task_id": "');
    const before = await readFile(path.join(dir, `${broken}.json`), "utf8");
    const r = await codeOf(
      files(bob).actOnFileHandoff({ dirKey: key, taskId: broken, action: FileHandoffAction.ACCEPT, expectHash: a.hash }),
    );
    expect(r.code).toBe(Code.FailedPrecondition);
    expect(r.message).toMatch(/not a valid v0\.1 handoff/);
    expect(await readFile(path.join(dir, `${broken}.json`), "utf8")).toBe(before);
  });

  it("people turn down, mark failed and offer again from the console; each step is in the file and the timeline", async () => {
    const alice = await signedIn(tc, "alice");
    const bob = await signedIn(tc, "bob");
    const onDisk = async (id: string) => JSON.parse(await readFile(path.join(dir, `${id}.json`), "utf8")) as Record<string, unknown>;

    // Alice offers to Bob; Bob turns it down, with a reason.
    const declined = await files(alice).offerFileHandoff({
      dirKey: key,
      description: "Shadow the night shift",
      toAgent: "human:bob",
      messageId: uuid(),
    });
    const d = declined.handoff;
    const rejected = await files(bob).actOnFileHandoff({
      dirKey: key,
      taskId: d?.taskId ?? "",
      action: FileHandoffAction.REJECT,
      expectHash: d?.hash ?? "",
      context: { reason: "on leave" },
    });
    expect(rejected.handoff?.status).toBe("rejected");
    expect(await onDisk(d?.taskId ?? "")).toMatchObject({
      status: "rejected",
      from_agent: "human:alice",
      to_agent: "human:bob",
      context: { reason: "on leave" },
    });

    // Alice offers to anyone; Bob takes it and cannot finish it; Alice, who offered it, offers it again to Carol.
    const offered = await files(alice).offerFileHandoff({ dirKey: key, description: "Restore the staging database", messageId: uuid() });
    const id = offered.handoff?.taskId ?? "";
    const accepted = await files(bob).actOnFileHandoff({
      dirKey: key,
      taskId: id,
      action: FileHandoffAction.ACCEPT,
      expectHash: offered.handoff?.hash ?? "",
    });
    const notHis = await codeOf(
      files(bob).actOnFileHandoff({ dirKey: key, taskId: id, action: FileHandoffAction.REOFFER, expectHash: accepted.handoff?.hash ?? "" }),
    );
    expect(notHis.code).toBe(Code.PermissionDenied);
    const failed = await files(bob).actOnFileHandoff({
      dirKey: key,
      taskId: id,
      action: FileHandoffAction.FAIL,
      expectHash: accepted.handoff?.hash ?? "",
      context: { error: "backup corrupt" },
    });
    expect(failed.handoff?.status).toBe("failed");
    expect(await onDisk(id)).toMatchObject({ status: "failed", to_agent: "human:bob", context: { error: "backup corrupt" } });
    const bobAgain = await codeOf(
      files(bob).actOnFileHandoff({ dirKey: key, taskId: id, action: FileHandoffAction.REOFFER, expectHash: failed.handoff?.hash ?? "" }),
    );
    expect(bobAgain.code).toBe(Code.PermissionDenied);
    const again = await files(alice).actOnFileHandoff({
      dirKey: key,
      taskId: id,
      action: FileHandoffAction.REOFFER,
      expectHash: failed.handoff?.hash ?? "",
      toAgent: "human:carol",
    });
    expect(again.handoff?.status).toBe("offered");
    expect(await onDisk(id)).toMatchObject({ status: "offered", from_agent: "human:alice", to_agent: "human:carol" });
    const page = await files(alice).getFileHandoff({ dirKey: key, taskId: id });
    expect(page.timeline.map((e) => [e.previousStatus, e.status, e.step])).toEqual([
      ["", "offered", "first"],
      ["offered", "accepted", "legal"],
      ["accepted", "failed", "legal"],
      ["failed", "offered", "legal"],
    ]);
  });

  it("offers from the console are v0.1 files from the person; a retried offer makes one file", async () => {
    const alice = await signedIn(tc, "alice");
    const messageId = uuid();
    const req = {
      dirKey: key,
      description: "Review the runbook\nand sign off",
      toAgent: "human:bob",
      context: { ticket: "OPS-7" },
      messageId,
    };
    const first = await files(alice).offerFileHandoff(req);
    expect(first.duplicate).toBe(false);
    const id = first.handoff?.taskId ?? "";
    const onDisk = JSON.parse(await readFile(path.join(dir, `${id}.json`), "utf8")) as Record<string, unknown>;
    expect(onDisk).toMatchObject({
      task_id: id,
      from_agent: "human:alice",
      to_agent: "human:bob",
      status: "offered",
      context: { ticket: "OPS-7" },
    });
    const second = await files(alice).offerFileHandoff(req);
    expect(second.duplicate).toBe(true);
    expect(second.handoff?.taskId).toBe(id);
    expect((await readdir(dir)).filter((n) => n.startsWith(id))).toEqual([`${id}.json`]);
    // Bob sees it waiting on him.
    const bob = await signedIn(tc, "bob");
    expect((await files(bob).listFileHandoffs({ waitingOnMe: true })).handoffs.map((h) => h.taskId)).toContain(id);
    // Bad input is refused at the edge, naming the field.
    const bad = await codeOf(files(alice).offerFileHandoff({ ...req, messageId: uuid(), context: { "bad key": "x" } }));
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.message).toMatch(/^context:/);
    const self = await codeOf(files(alice).offerFileHandoff({ ...req, messageId: uuid(), toAgent: "human:alice" }));
    expect(self.code).toBe(Code.PermissionDenied);
  });

  it("filters by status and checks its inputs", async () => {
    const vic = await signedIn(tc, "vic");
    const done = await files(vic).listFileHandoffs({ status: "completed" });
    expect(done.handoffs.length).toBeGreaterThan(0);
    expect(done.handoffs.every((h) => h.status === "completed")).toBe(true);
    expect((await codeOf(files(vic).listFileHandoffs({ status: "bogus" }))).code).toBe(Code.InvalidArgument);
    expect((await codeOf(files(vic).listFileHandoffs({ dirKey: "zz" }))).code).toBe(Code.InvalidArgument);
    expect((await codeOf(files(vic).listFileHandoffs({ dirKey: "0123456789ab" }))).code).toBe(Code.NotFound);
    expect((await codeOf(files(vic).getFileHandoff({ dirKey: key, taskId: "../etc/passwd" }))).code).toBe(Code.InvalidArgument);
    expect((await codeOf(files(vic).getFileHandoff({ dirKey: key, taskId: uuid() }))).code).toBe(Code.NotFound);
  });

  it("the watch stream ends when its sign-in ends", async () => {
    const b = await signedIn(tc, "vic");
    const ac = new AbortController();
    let ended: ConnectError | null = null;
    const stream = (async () => {
      try {
        for await (const _ of files(b).watchFileHandoffs({}, { signal: ac.signal })) void _;
      } catch (e) {
        ended = ConnectError.from(e);
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    const out = await fetch(`${tc.url}/auth/logout`, {
      method: "POST",
      headers: { ...b.headers(), "content-type": "application/json", "x-baton-csrf": b.csrf },
      body: "{}",
    });
    expect(out.status).toBeLessThan(300);
    await Promise.race([stream, new Promise((r) => setTimeout(r, 5_000))]);
    expect((ended as ConnectError | null)?.code).toBe(Code.Unauthenticated);
    ac.abort();
  });
});
