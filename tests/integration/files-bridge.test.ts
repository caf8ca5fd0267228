// The bridge between a v0.1 handoff directory and MACP Task-mode sessions,
// against the real runtime over gRPC: an MACP agent written with lib/agent
// picks up a file offer and completes it (the file ends up completed), file
// agents' steps reach the session, a re-offer opens a new session, and a
// bridge restarted mid-way creates no duplicate session or message.
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Auth, MacpClient, TaskSession } from "@/lib/agent";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HandoffDirectory, type HandoffRecord } from "@/lib/handoff-files";
import { devCredentials, HandoffBridge, SqliteBridgeState, type BridgeEvent, type BridgeOptions } from "@/lib/handoff-files/bridge";
import type { RunningRuntime } from "@/lib/runtime";
import { startTestRuntime, tempDir, waitFor } from "./harness";

const PLANNER = "agent://etl/planner";
const WORKER = "agent://etl/worker-7";
const FILE_AGENT = "agent://etl/file-worker";

let rt: RunningRuntime;
let root: string;
let dir: string;
let stateFile: string;
const clients: MacpClient[] = [];
const running: { bridge: HandoffBridge; state: SqliteBridgeState }[] = [];

function clientAs(id: string): MacpClient {
  const c = new MacpClient({ address: rt.address, auth: Auth.devAgent(id) });
  clients.push(c);
  return c;
}

async function startBridge(extra: Partial<BridgeOptions> = {}): Promise<{ bridge: HandoffBridge; events: BridgeEvent[] }> {
  const state = new SqliteBridgeState(stateFile);
  const events: BridgeEvent[] = [];
  const bridge = new HandoffBridge({
    dir,
    runtime: rt.address,
    credentials: devCredentials,
    participants: [WORKER],
    state,
    watch: { mode: "watch" },
    onEvent: (e) => events.push(e),
    ...extra,
  });
  running.push({ bridge, state });
  await bridge.start();
  return { bridge, events };
}

async function stopBridges(): Promise<void> {
  for (const { bridge, state } of running.splice(0)) {
    await bridge.stop();
    state.close();
  }
}

function fileOf(taskId: string): HandoffRecord & Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(dir, `${taskId}.json`), "utf8"));
}

/** Write an offer the way a plain v0.1 tool does: a JSON file, nothing else. */
function plainOffer(taskId: string, extra: Partial<HandoffRecord> = {}): void {
  const now = new Date().toISOString();
  const rec = {
    task_id: taskId,
    from_agent: PLANNER,
    to_agent: "",
    status: "offered",
    description: "Backfill March invoices\nfrom the ledger",
    context: { month: "2026-03" },
    created_at: now,
    updated_at: now,
    ...extra,
  };
  fs.writeFileSync(path.join(dir, `${taskId}.json`), JSON.stringify(rec, null, 2));
}

async function sessionsFor(taskId: string) {
  return (await clientAs(PLANNER).listSessions()).filter((s) => s.contextId === taskId);
}

beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(async () => {
  await stopBridges();
  for (const c of clients.splice(0)) c.close();
  await rt?.close();
});
beforeEach(() => {
  root = tempDir("baton-bridge-");
  dir = path.join(root, ".handoffs");
  fs.mkdirSync(dir);
  stateFile = path.join(root, "data", "handoff-files.sqlite");
});
afterEach(async () => {
  await stopBridges();
  fs.rmSync(root, { recursive: true, force: true });
});

describe("files bridge", { timeout: 120_000 }, () => {
  it("an MACP agent (lib/agent) picks up a v0.1 offer and completes it; the file ends up completed", async () => {
    const { bridge } = await startBridge();
    const taskId = "5b0c7e2a-1d3f-4a6b-8c9d-0e1f2a3b4c5d";
    plainOffer(taskId);

    // The worker finds the task the way any MACP agent would: a Task session it takes part in.
    const worker = clientAs(WORKER);
    let sid = "";
    await waitFor(
      async () => {
        const s = (await worker.listSessions()).find((m) => m.contextId === taskId && m.participants.includes(WORKER));
        sid = s?.sessionId ?? "";
        return sid !== "";
      },
      15_000,
      "the bridged session",
    );
    const session = await TaskSession.attach(worker, sid);
    await waitFor(async () => (await session.refresh(), session.projection.task !== undefined), 15_000, "the TaskRequest");
    expect(session.projection.task).toMatchObject({ taskId, title: "Backfill March invoices", requester: PLANNER, requestedAssignee: "" });
    expect(JSON.parse(new TextDecoder().decode(session.projection.task?.input))).toEqual({ month: "2026-03" });

    await session.acceptTask({ taskId });
    await waitFor(() => fileOf(taskId).status === "accepted", 15_000, "the file to say accepted");
    expect(fileOf(taskId).to_agent).toBe(WORKER);

    await session.complete({ taskId, summary: "48,211 invoices backfilled", output: "rows=48211" });
    await waitFor(() => fileOf(taskId).status === "completed", 15_000, "the file to say completed");
    expect(fileOf(taskId).context).toEqual({
      month: "2026-03",
      macp_session_id: sid,
      macp_summary: "48,211 invoices backfilled",
      macp_output: "rows=48211",
    });

    // The bridge commits for the requester (the file's from_agent), which resolves the session.
    await waitFor(async () => (await worker.getSession(sid)).state === SessionState.RESOLVED, 15_000, "the session to resolve");
    await session.refresh();
    expect(session.projection.commitment).toMatchObject({ action: "task.completed", sender: PLANNER });
    await bridge.settled();
    expect(await sessionsFor(taskId)).toHaveLength(1);
  });

  it("mirrors a file agent's accept and complete into the session, and a re-offer into a new session", async () => {
    const { bridge } = await startBridge();
    const hd = new HandoffDirectory(dir);
    const { snapshot } = await hd.offer({ description: "Rotate the TLS certificates", from: PLANNER, to: FILE_AGENT });
    const taskId = snapshot.record.task_id;
    const planner = clientAs(PLANNER);
    await waitFor(async () => (await sessionsFor(taskId)).length === 1, 15_000, "the first session");
    const first = (await sessionsFor(taskId))[0]?.sessionId ?? "";

    await hd.act(taskId, { kind: "accept", agent: FILE_AGENT });
    await hd.act(taskId, { kind: "fail", context: { reason: "the HSM was offline" } });
    await waitFor(async () => (await planner.getSession(first)).state === SessionState.RESOLVED, 15_000, "the failed session to resolve");
    const failed = await TaskSession.attach(planner, first);
    expect(failed.projection.task).toMatchObject({ activeAssignee: FILE_AGENT, requestedAssignee: FILE_AGENT });
    expect(failed.projection.terminalReport()).toMatchObject({
      kind: "fail",
      assignee: FILE_AGENT,
      retryable: true,
      reason: "the HSM was offline",
    });
    expect(failed.projection.commitment).toMatchObject({ action: "task.failed", outcomePositive: false });

    await hd.act(taskId, { kind: "reoffer", to: FILE_AGENT });
    await waitFor(async () => (await sessionsFor(taskId)).length === 2, 15_000, "a second session for the re-offer");
    await hd.act(taskId, { kind: "accept", agent: FILE_AGENT });
    await hd.act(taskId, { kind: "complete" });
    const second = (await sessionsFor(taskId)).find((s) => s.sessionId !== first)?.sessionId ?? "";
    await waitFor(async () => (await planner.getSession(second)).state === SessionState.RESOLVED, 15_000, "the second session to resolve");
    const done = await TaskSession.attach(planner, second);
    expect(done.projection.events.map((e) => e.envelope.messageType)).toEqual([
      "SessionStart",
      "TaskRequest",
      "TaskAccept",
      "TaskComplete",
      "Commitment",
    ]);
    expect(done.projection.commitment?.action).toBe("task.completed");
    await bridge.settled();
    expect(fileOf(taskId).status).toBe("completed");
  });

  it("a bridge restarted mid-way creates no duplicate session or message", async () => {
    const taskId = "0d9c8b7a-6f5e-4d3c-8b2a-190817161514";
    // The first bridge "crashes" right after the SessionStart was acknowledged.
    const crash = {
      afterSend: async (_t: string, step: string) => {
        if (step === "start") throw new Error("simulated crash after SessionStart");
      },
    };
    const { bridge: crashed, events } = await startBridge({ hooks: crash });
    plainOffer(taskId, { to_agent: FILE_AGENT });
    await waitFor(() => events.some((e) => e.kind === "error"), 15_000, "the simulated crash");
    await stopBridges();
    expect(crashed).toBeDefined();
    const planner = clientAs(PLANNER);
    expect(await sessionsFor(taskId)).toHaveLength(1);

    // The second bridge carries on in the same session; it sent the start once already.
    const second = await startBridge();
    await waitFor(
      async () => {
        const s = (await sessionsFor(taskId))[0];
        return s !== undefined && (await TaskSession.attach(planner, s.sessionId)).projection.task !== undefined;
      },
      15_000,
      "the TaskRequest after the restart",
    );
    await second.bridge.settled();
    // It read the session back (the start is there), so it sent only what was missing, in the same session.
    expect(
      second.events
        .filter((e) => e.kind === "sent" || e.kind === "epoch")
        .map((e) => (e.kind === "sent" ? [e.step, e.sessionId] : [e.kind])),
    ).toEqual([["request", (await sessionsFor(taskId))[0]?.sessionId]]);

    // Accept in the file, then restart again before anything else happens.
    const hd = new HandoffDirectory(dir);
    await hd.act(taskId, { kind: "accept", agent: FILE_AGENT });
    const sid = (await sessionsFor(taskId))[0]?.sessionId ?? "";
    await waitFor(
      async () => (await TaskSession.attach(planner, sid)).projection.task?.activeAssignee === FILE_AGENT,
      15_000,
      "the TaskAccept",
    );
    await stopBridges();
    await startBridge();
    await hd.act(taskId, { kind: "complete" });
    await waitFor(async () => (await planner.getSession(sid)).state === SessionState.RESOLVED, 15_000, "the session to resolve");

    expect(await sessionsFor(taskId)).toHaveLength(1);
    const history = (await TaskSession.attach(planner, sid)).projection.events.map((e) => e.envelope.messageType);
    expect(history).toEqual(["SessionStart", "TaskRequest", "TaskAccept", "TaskComplete", "Commitment"]);
  });

  it("leaves handoffs that were already final when it first saw them alone, and says why invalid files are not mirrored", async () => {
    plainOffer("old-1", { status: "completed", to_agent: FILE_AGENT });
    fs.writeFileSync(path.join(dir, "broken.json"), "{");
    const { bridge, events } = await startBridge();
    await bridge.settled();
    expect(events).toContainEqual({
      kind: "skipped",
      taskId: "old-1",
      reason: "already completed when the bridge first saw it; not mirrored",
    });
    expect(events.find((e) => e.kind === "blocked" && e.taskId === "broken")).toMatchObject({
      reason: expect.stringMatching(/^not mirrored: not valid JSON/),
    });
    expect(await sessionsFor("old-1")).toHaveLength(0);
    expect(fs.readFileSync(path.join(dir, "broken.json"), "utf8")).toBe("{");
  });
});
