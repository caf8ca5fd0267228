// BATON_HANDOFF_BRIDGE: the console runs the v0.1 bridge against its own
// (embedded, dev-mode) runtime. An agent's file offer to a person becomes a
// Task session; the person accepts it from the console; the bridge sends the
// TaskAccept as that person (with the console's delegate credential, since
// people's ids are reserved on the embedded runtime); an MACP agent sees it.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Auth, MacpClient, TaskSession } from "@/lib/agent";
import { FileHandoffAction, FileHandoffService } from "@/lib/gen/baton/v1/files_pb";
import { dirKeyOf } from "@/lib/gateway/file-handoffs";
import { planFileHandoffs } from "@/lib/server/file-handoffs-setup";
import { signedIn, startTestConsole, uuid, type Browser, type TestConsole } from "./actions-harness";
import { waitFor } from "./harness";

const PLANNER = "agent://ops/planner";
const WORKER = "agent://ops/worker";

let tc: TestConsole;
let dir: string;
let data: string;
const clients: MacpClient[] = [];

function files(b: Browser) {
  const interceptor: Interceptor = (next) => (req) => {
    for (const [k, v] of Object.entries(b.headers())) req.header.set(k, v);
    req.header.set("x-baton-csrf", b.csrf);
    return next(req);
  };
  return createClient(FileHandoffService, createConnectTransport({ baseUrl: b.baseUrl, httpVersion: "1.1", interceptors: [interceptor] }));
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "baton-console-bridge-"));
  data = await mkdtemp(path.join(os.tmpdir(), "baton-console-bridge-data-"));
  tc = await startTestConsole([{ username: "bob", role: "operator", name: "Bob Ito" }], {
    BATON_HANDOFF_DIRS: dir,
    BATON_DATA_DIR: data,
    BATON_HANDOFF_BRIDGE: "1",
    BATON_HANDOFF_BRIDGE_PARTICIPANTS: WORKER,
    BATON_HANDOFF_WATCH: "watch",
  });
  await tc.console.files?.ready;
}, 60_000);

afterAll(async () => {
  for (const c of clients.splice(0)) c.close();
  await tc?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(data, { recursive: true, force: true });
});

describe("the console's bridge setting", { timeout: 120_000 }, () => {
  it("checks its settings", () => {
    expect(planFileHandoffs({ BATON_HANDOFF_DIRS: "/a,/b", BATON_HANDOFF_BRIDGE: "/b" }, "/")).toMatchObject({
      dirs: ["/a", "/b"],
      bridgeDirs: ["/b"],
    });
    expect(planFileHandoffs({ BATON_HANDOFF_DIRS: "/a", BATON_HANDOFF_BRIDGE: "0" }, "/").bridgeDirs).toEqual([]);
    expect(() => planFileHandoffs({ BATON_HANDOFF_DIRS: "/a", BATON_HANDOFF_BRIDGE: "/c" }, "/")).toThrow(/not in BATON_HANDOFF_DIRS/);
    expect(() => planFileHandoffs({ BATON_HANDOFF_BRIDGE: "1" }, "/")).toThrow(/BATON_HANDOFF_DIRS is empty/);
    expect(() => planFileHandoffs({ BATON_HANDOFF_DIRS: "/a", BATON_HANDOFF_WATCH: "sometimes" }, "/")).toThrow(/BATON_HANDOFF_WATCH/);
  });

  it("mirrors an agent's file offer to a person into a Task session, and the person's accept from the console into it", async () => {
    const bob = await signedIn(tc, "bob");
    const taskId = uuid();
    const now = new Date().toISOString();
    await writeFile(
      path.join(dir, `${taskId}.json`),
      JSON.stringify({
        task_id: taskId,
        from_agent: PLANNER,
        to_agent: "human:bob",
        status: "offered",
        description: "Rotate the TLS certificates",
        context: { ticket: "OPS-12" },
        created_at: now,
        updated_at: now,
      }),
    );
    const worker = new MacpClient({ address: tc.console.runtimeAddress, auth: Auth.devAgent(WORKER) });
    clients.push(worker);
    let sid = "";
    await waitFor(
      async () => {
        sid = (await worker.listSessions()).find((s) => s.contextId === taskId)?.sessionId ?? "";
        return sid !== "";
      },
      20_000,
      "the bridged session",
    );

    const settings = await files(bob).getFileHandoffSettings({});
    expect(settings.bridge).toBe(true);
    let hash = "";
    await waitFor(
      async () => {
        const got = await files(bob).getFileHandoff({ dirKey: dirKeyOf(dir), taskId });
        hash = got.handoff?.hash ?? "";
        return got.handoff?.status === "offered";
      },
      10_000,
      "the handoff in the console",
    );
    const res = await files(bob).actOnFileHandoff({ dirKey: dirKeyOf(dir), taskId, action: FileHandoffAction.ACCEPT, expectHash: hash });
    expect(res.handoff?.toAgent).toBe("human:bob");

    const session = await TaskSession.attach(worker, sid);
    await waitFor(
      async () => (await session.refresh(), session.projection.task?.activeAssignee === "human:bob"),
      20_000,
      "the TaskAccept from human:bob",
    );
    expect(session.projection.task).toMatchObject({ taskId, requester: PLANNER, requestedAssignee: "human:bob" });
    expect(JSON.parse(await readFile(path.join(dir, `${taskId}.json`), "utf8"))).toMatchObject({
      status: "accepted",
      to_agent: "human:bob",
    });
  });
});
