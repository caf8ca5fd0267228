// v0.1 file handoffs in the console's MAIN session list (ListSessionPage,
// WatchSessionChanges), against the real console server: embedded runtime,
// real accounts, a real watched directory. Files are written by a plain
// process (python3, standard library only, no Baton code); each becomes a row
// of the catalog beside the MACP sessions, found by the mode filter and
// full-text search, waiting on its to_agent (or anyone), announced live, and
// an invalid file is a row marked invalid with its reason.
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionSummary, WatchSessionChangesResponse } from "@/lib/gen/baton/v1/console_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { dirKeyOf } from "@/lib/gateway/file-handoffs";
import { Browser, signedIn, startTestConsole, uuid, type TestConsole } from "./actions-harness";

const PEOPLE = [
  { username: "alice", role: "operator", name: "Alice Park" },
  { username: "vic", role: "viewer", name: "Vic Viewer" },
] as const;

let tc: TestConsole;
let dir: string;
let data: string;
let key: string;

/** A plain process writes a file the way v0.1's reference tools do (temporary file, then rename). */
function pythonWrites(name: string, text: string): void {
  const script = [
    "import os, sys",
    "d, name, text = sys.argv[1], sys.argv[2], sys.stdin.read()",
    "tmp = os.path.join(d, '.tmp-' + name)",
    "open(tmp, 'w').write(text)",
    "os.replace(tmp, os.path.join(d, name))",
  ].join("\n");
  const r = spawnSync("python3", ["-c", script, dir, name], { input: text, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`python3 failed: ${r.stderr}`);
}

function offer(taskId: string, over: Record<string, unknown> = {}): string {
  const now = new Date().toISOString();
  return JSON.stringify({
    task_id: taskId,
    from_agent: "agent://planner",
    to_agent: "",
    status: "offered",
    description: "Rotate the TLS certificates on the edge proxies",
    context: { ticket: "OPS-12" },
    created_at: now,
    updated_at: now,
    ...over,
  });
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

const idOf = (s: SessionSummary) => s.metadata?.sessionId ?? "";

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-files-list-"));
  data = await mkdtemp(path.join(os.tmpdir(), "baton-files-list-data-"));
  tc = await startTestConsole(PEOPLE, { BATON_HANDOFF_DIRS: dir, BATON_DATA_DIR: data, BATON_HEARTBEAT_MS: "500" });
  await tc.console.files?.ready;
  key = dirKeyOf(dir);
}, 60_000);

afterAll(async () => {
  await tc?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(data, { recursive: true, force: true });
});

describe("v0.1 file handoffs in the session list", () => {
  it("a file written by a plain process becomes a row, live, found by the mode filter and by search", async () => {
    const vic = await signedIn(tc, "vic");
    const list = vic.console();
    // An open list's change stream (what the browser's live window follows).
    const ac = new AbortController();
    const notices: { at: number; ids: string[] }[] = [];
    const stream = (async () => {
      try {
        for await (const m of list.watchSessionChanges(
          { query: { mode: "file" } },
          { signal: ac.signal },
        ) as AsyncIterable<WatchSessionChangesResponse>) {
          if (m.item.case === "change") notices.push({ at: Date.now(), ids: m.item.value.sessionIds });
        }
      } catch {
        // aborted
      }
    })();
    await until("the first notice", async () => (notices.length > 0 ? true : undefined));

    // Ten files, one after the other: each is announced to the open list within about a second
    // of its write (the watcher, the 50 ms catalog batch and the list's 250 ms coalescing).
    const delays: number[] = [];
    let taskId = "";
    let rowId = "";
    for (let i = 0; i < 10; i++) {
      taskId = uuid();
      rowId = `v0.1:${key}/${taskId}.json`;
      // From when the file is in place: python3 has renamed it and exited (its interpreter's start-up,
      // half a second and more on a loaded machine, is not the console's delay).
      pythonWrites(`${taskId}.json`, offer(taskId));
      const written = Date.now();
      const notice = await until("a change notice naming the file", async () => notices.find((n) => n.ids.includes(rowId)));
      delays.push(notice.at - written);
    }
    ac.abort();
    await stream;
    delays.sort((a, b) => a - b);
    console.log(`file written → list change notice: p50 ${delays[4]} ms, max ${delays[9]} ms`);
    // Generous (two shared cores); the figure above is what the README reports.
    expect(delays[9]).toBeLessThan(2_000);

    const byMode = await list.listSessionPage({ query: { mode: "file" }, limit: 100 });
    const row = byMode.sessions.find((s) => idOf(s) === rowId);
    expect(row).toBeDefined();
    expect(row?.metadata).toMatchObject({ mode: "v0.1.file", state: SessionState.OPEN, contextId: taskId, initiator: "agent://planner" });
    expect(row).toMatchObject({
      intent: "Rotate the TLS certificates on the edge proxies",
      currentOwner: "agent://planner",
      currentTarget: "",
      waitingOn: ["*"],
    });
    expect(row?.fileHandoff).toMatchObject({
      dirKey: key,
      name: `${taskId}.json`,
      taskId,
      status: "offered",
      valid: true,
      present: true,
      fromAgent: "agent://planner",
    });
    // Only file rows under that mode; the whole list has them too.
    expect(byMode.sessions.every((s) => s.metadata?.mode === "v0.1.file")).toBe(true);
    expect((await list.listSessionPage({ limit: 500 })).sessions.some((s) => idOf(s) === rowId)).toBe(true);
    expect((await list.listSessionPage({ query: { mode: "task" }, limit: 500 })).sessions.some((s) => idOf(s) === rowId)).toBe(false);

    // Full-text search: task id (a part of it), description, agent.
    for (const text of [taskId.slice(0, 8), "edge proxies", "agent://planner"]) {
      const found = await list.listSessionPage({ query: { text }, limit: 50 });
      expect(found.sessions.map(idOf), text).toContain(rowId);
    }
    // Waiting on: anyone but the offerer.
    expect((await list.listSessionPage({ query: { waitingOn: "agent://other" }, limit: 50 })).sessions.map(idOf)).toContain(rowId);
    expect((await list.listSessionPage({ query: { waitingOn: "agent://planner" }, limit: 50 })).sessions.map(idOf)).not.toContain(rowId);
  });

  it("a change moves the row's status; the file's to_agent is who it waits on", async () => {
    const vic = await signedIn(tc, "vic");
    const list = vic.console();
    const taskId = uuid();
    const rowId = `v0.1:${key}/${taskId}.json`;
    pythonWrites(`${taskId}.json`, offer(taskId, { to_agent: "agent://oncall" }));
    await until("offered row", async () =>
      (await list.listSessionPage({ query: { waitingOn: "agent://oncall" }, limit: 100 })).sessions.find((s) => idOf(s) === rowId),
    );
    pythonWrites(`${taskId}.json`, offer(taskId, { to_agent: "agent://oncall", status: "accepted" }));
    const accepted = await until("accepted row", async () =>
      (await list.listSessionPage({ query: { mode: "file", text: taskId }, limit: 10 })).sessions.find(
        (s) => s.fileHandoff?.status === "accepted",
      ),
    );
    expect(accepted).toMatchObject({ phase: "InProgress", waitingOn: ["agent://oncall"], currentTarget: "agent://oncall" });
    pythonWrites(`${taskId}.json`, offer(taskId, { to_agent: "agent://oncall", status: "completed" }));
    const done = await until("completed row", async () =>
      (await list.listSessionPage({ query: { mode: "file", state: "resolved" }, limit: 100 })).sessions.find((s) => idOf(s) === rowId),
    );
    expect(done).toMatchObject({ outcome: "positive", waitingOn: [] });
  });

  it("people among from_agent / to_agent are named by name; agents by id", async () => {
    const vic = await signedIn(tc, "vic");
    const alice = (await tc.accounts.directory.users()).find((u) => u.username === "alice");
    expect(alice).toBeDefined();
    const taskId = uuid();
    pythonWrites(`${taskId}.json`, offer(taskId, { to_agent: alice?.participantId }));
    const row = await until("row for alice", async () =>
      (await vic.console().listSessionPage({ query: { mode: "file", waitingOn: alice?.participantId ?? "" }, limit: 50 })).sessions.find(
        (s) => s.fileHandoff?.taskId === taskId,
      ),
    );
    expect(row.fileHandoff).toMatchObject({
      toAgent: alice?.participantId,
      toName: "Alice Park",
      fromAgent: "agent://planner",
      fromName: "",
    });
    // The stored row keeps ids only (names are the accounts' as they are when served).
    expect(row.currentTarget).toBe(alice?.participantId);
  });

  it("an invalid file is a row marked invalid with its reason, and the file is left alone", async () => {
    const vic = await signedIn(tc, "vic");
    const name = `broken-${uuid()}.json`;
    const text = '{"task_id": "broken", "from_agent": "agent://x", "status": "offe';
    pythonWrites(name, text);
    const row = await until("invalid row", async () =>
      (await vic.console().listSessionPage({ query: { mode: "file", text: name.slice(0, -5) }, limit: 10 })).sessions.find(
        (s) => s.fileHandoff?.name === name,
      ),
    );
    expect(row.fileHandoff?.valid).toBe(false);
    expect(row.fileHandoff?.problem).not.toBe("");
    expect(row.scope).toBe(row.fileHandoff?.problem);
    expect(row.metadata?.state).toBe(SessionState.UNSPECIFIED);
    expect(await readFile(path.join(dir, name), "utf8")).toBe(text);
  });

  it("reads follow the list's sign-in rule", async () => {
    const anon = new Browser(tc.url);
    let code: Code | undefined;
    try {
      await anon.console().listSessionPage({ query: { mode: "file" } });
    } catch (e) {
      code = ConnectError.from(e).code;
    }
    expect(code).toBe(Code.Unauthenticated);
  });
});
