// The agent layer (lib/agent) against the real runtime on loopback: session
// helpers, projections over subscribed history, error surfacing, streams,
// control plane, policies, auth styles and TLS.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Auth,
  buildHandoffPolicy,
  contentTypeFor,
  HandoffProjection,
  HandoffSession,
  MacpAckError,
  MacpClient,
  MacpStreamError,
  MacpUsageError,
  readContextFile,
  runtimeBaseUrl,
  TaskProjection,
  TaskSession,
  type SequencedEnvelope,
} from "@/lib/agent";
import { SessionLifecycleEvent_EventType as EventType } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { decodePayloadToJson } from "@/lib/macp/payloads";
import type { RunningRuntime } from "@/lib/runtime";
import { startTestRuntime, tempDir, waitFor } from "./harness";

const OWNER = "agent://oncall/alice";
const TARGET = "agent://oncall/bob";
const BYSTANDER = "agent://oncall/carol";

let rt: RunningRuntime;
const clients: MacpClient[] = [];
function clientAs(id: string, header: "bearer" | "x-macp-agent-id" = "bearer"): MacpClient {
  const c = new MacpClient({ address: rt.address, auth: Auth.devAgent(id, header) });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  rt = await startTestRuntime();
});
afterAll(async () => {
  for (const c of clients) c.close();
  await rt?.close();
});

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
}

describe("MacpClient basics", () => {
  it("normalises runtime addresses", () => {
    expect(runtimeBaseUrl("127.0.0.1:50051")).toBe("http://127.0.0.1:50051");
    expect(runtimeBaseUrl("127.0.0.1:50051", true)).toBe("https://127.0.0.1:50051");
    expect(runtimeBaseUrl("localhost")).toBe("http://localhost:50051");
    expect(runtimeBaseUrl("http://[::1]:7000/")).toBe("http://[::1]:7000");
    expect(runtimeBaseUrl("http://rt:7000", true)).toBe("https://rt:7000");
    expect(runtimeBaseUrl("grpcs://rt.example")).toBe("https://rt.example");
    expect(runtimeBaseUrl("rt.example", true)).toBe("https://rt.example:50051");
    expect(() => runtimeBaseUrl("ftp://x:1")).toThrow(MacpUsageError);
  });

  it("initializes and discovers the modes", async () => {
    const c = clientAs(OWNER);
    const res = await c.initialize();
    expect(res.selectedProtocolVersion).toBe("1.0");
    expect(c.selectedProtocolVersion).toBe("1.0");
    expect(res.supportedModes).toEqual(expect.arrayContaining(["macp.mode.handoff.v1", "macp.mode.task.v1"]));
    expect((await c.listModes()).map((m) => m.mode)).toContain("macp.mode.handoff.v1");
  });

  it("keeps transport failures as ConnectError (unreachable runtime)", async () => {
    const srv = net.createServer();
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
    const port = (srv.address() as net.AddressInfo).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const c = new MacpClient({ address: `127.0.0.1:${port}`, auth: Auth.devAgent(OWNER), retry: { attempts: 2, backoffMs: 10 } });
    try {
      const err = await rejection(c.listSessions());
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.Unavailable);
    } finally {
      c.close();
    }
  });

  it("surfaces a missing credential as ConnectError Unauthenticated", async () => {
    const anon = new MacpClient({ address: rt.address });
    clients.push(anon);
    const err = await rejection(anon.listSessions());
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unauthenticated);
  });
});

describe("HandoffSession", () => {
  it("drives a full handoff; projections fold the subscribed history with the shared reducers", async () => {
    const owner = new HandoffSession(clientAs(OWNER));
    const runbook = "# Payments on-call\n\n## Pager\n- check the queue depth\n- escalate to DBA after 15 min\n";
    const startAck = await owner.start({ intent: "weekly on-call rotation", participants: [OWNER, TARGET], ttlMs: 600_000 });
    expect(startAck).toMatchObject({ ok: true, duplicate: false, sessionId: owner.sessionId, sessionState: SessionState.OPEN });
    await owner.offer({ targetParticipant: TARGET, scope: "payments-api primary", reason: "end of shift" });
    expect(owner.projection.activeOffer()?.handoffId).toBe("h1");
    await owner.addContext({ contentType: "text/markdown", context: runbook });
    expect(owner.projection.phase).toBe("ContextSharing");

    const target = await HandoffSession.attach(clientAs(TARGET), owner.sessionId);
    expect(target.projection.activeOffer()?.target).toBe(TARGET);
    await target.acceptHandoff({ reason: "ready" });
    expect(target.projection.isAccepted("h1")).toBe(true);
    expect(target.suggestedAction()).toBe("handoff.accepted");

    const ack = await owner.commit({ action: "handoff.accepted", reason: `${TARGET} owns payments-api` });
    expect(ack.sessionState).toBe(SessionState.RESOLVED);

    const events = await owner.client.history(owner.sessionId);
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(events.map((e) => e.envelope.messageType)).toEqual([
      "SessionStart",
      "HandoffOffer",
      "HandoffContext",
      "HandoffAccept",
      "Commitment",
    ]);
    const proj = HandoffProjection.from(events);
    expect(proj.phase).toBe("Committed");
    expect(proj.isAccepted("h1")).toBe(true);
    expect(proj.isDeclined("h1")).toBe(false);
    expect(proj.pendingHandoffs()).toEqual([]);
    expect(proj.activeOffer()).toBeUndefined();
    expect(proj.getHandoff("h1")?.contexts[0]?.contentType).toBe("text/markdown");
    expect(new TextDecoder().decode(proj.getHandoff("h1")?.contexts[0]?.context)).toBe(runbook);
    expect(proj.commitment).toMatchObject({
      action: "handoff.accepted",
      outcomePositive: true,
      sender: OWNER,
      policyVersion: "policy.default",
    });
    // Same reducers, same answer: the owner's refreshed projection agrees.
    await owner.refresh();
    expect(owner.projection.state).toEqual(proj.state);
    expect((await owner.metadata()).state).toBe(SessionState.RESOLVED);
  });

  it("infers outcome_positive from the action (declined → false) and allows overriding it", async () => {
    const projection = new HandoffProjection();
    const owner = new HandoffSession(clientAs(OWNER), { projection });
    const target = new HandoffSession(clientAs(TARGET), { sessionId: owner.sessionId, projection });
    await owner.start({ intent: "rotation", participants: [OWNER, TARGET], ttlMs: 60_000 });
    await owner.offer({ targetParticipant: TARGET, scope: "s" });
    await target.decline({ reason: "on leave" });
    expect(projection.isDeclined("h1")).toBe(true);
    expect(owner.suggestedAction()).toBe("handoff.declined");
    await owner.commit({ action: "handoff.declined", reason: "nobody free" });
    const last = owner.lastEnvelope;
    expect(last?.messageType).toBe("Commitment");
    expect(decodePayloadToJson(last?.mode ?? "", "Commitment", last?.payload ?? new Uint8Array())).toMatchObject({
      action: "handoff.declined",
      outcome_positive: false,
    });
    expect(projection.isPositiveOutcome).toBe(false);

    // An explicit value wins over the inference (the runtime then checks the suffix rule).
    const other = new HandoffSession(clientAs(OWNER));
    await other.start({ intent: "x", participants: [OWNER, TARGET], ttlMs: 60_000 });
    await other.offer({ targetParticipant: TARGET });
    await new HandoffSession(clientAs(TARGET), { sessionId: other.sessionId }).decline({ handoffId: "h1" });
    const err = await rejection(other.commit({ action: "handoff.declined", reason: "r", outcomePositive: true }));
    expect(err).toBeInstanceOf(MacpAckError);
    expect((err as MacpAckError).code).toBe("INVALID_ENVELOPE");
  });

  it("a rejected call throws MacpAckError with the MACP code, explanation and Ack", async () => {
    const owner = new HandoffSession(clientAs(OWNER));
    await owner.start({ intent: "rotation", participants: [OWNER, TARGET, BYSTANDER], ttlMs: 60_000 });
    await owner.offer({ targetParticipant: TARGET, scope: "db on-call" });
    const bystander = new HandoffSession(clientAs(BYSTANDER), { sessionId: owner.sessionId });
    const err = await rejection(bystander.acceptHandoff({ handoffId: "h1" }));
    expect(err).toBeInstanceOf(MacpAckError);
    const e = err as MacpAckError;
    expect(e.code).toBe("FORBIDDEN");
    expect(e.explanation).toMatch(/not allowed/);
    expect(e.ack.ok).toBe(false);
    expect(e.ack.messageId).toBe(bystander.lastEnvelope?.messageId);
    expect(e.message).toMatch(/^FORBIDDEN: /);
    // Nothing about the rejected message reached the projection.
    expect(bystander.projection.events).toHaveLength(0);

    const early = await rejection(owner.commit({ action: "handoff.accepted", reason: "too soon" }));
    expect((early as MacpAckError).code).toBe("INVALID_ENVELOPE");

    // raiseOnNack: false hands back the rejected Ack instead.
    const env = bystander.lastEnvelope;
    if (!env) throw new Error("no envelope");
    const ack = await bystander.client.send(env, { raiseOnNack: false });
    expect(ack.ok).toBe(false);
    expect(ack.error?.code).toBe("FORBIDDEN");
  });

  it("resending the same envelope after success is a duplicate, not a second message", async () => {
    const owner = new HandoffSession(clientAs(OWNER));
    await owner.start({ intent: "retry", participants: [OWNER, TARGET], ttlMs: 60_000 });
    const first = await owner.offer({ targetParticipant: TARGET });
    const again = await owner.retryLast();
    expect(first.duplicate).toBe(false);
    expect(again).toMatchObject({ ok: true, duplicate: true, messageId: first.messageId });
    expect(owner.projection.offers).toHaveLength(1);
    // A caller-chosen message id is used as is.
    const ack = await owner.sendContext({ context: { incidents: 0 }, messageId: "ctx-1" });
    expect(ack.messageId).toBe("ctx-1");
    expect(owner.projection.getHandoff("h1")?.contexts[0]?.contentType).toBe("application/json");
  });

  it("refuses bad input locally before sending", async () => {
    const s = new HandoffSession(clientAs(OWNER));
    await expect(s.start({ intent: "x", participants: [OWNER], ttlMs: 0 })).rejects.toBeInstanceOf(MacpUsageError);
    await expect(s.acceptHandoff()).rejects.toThrow(/no offer is known/);
    expect(() => new HandoffSession(clientAs(OWNER), { sessionId: " " })).toThrow(MacpUsageError);
  });

  it("cancel goes through the control plane; only the initiator (by default) may cancel", async () => {
    const owner = new HandoffSession(clientAs(OWNER));
    await owner.start({ intent: "to cancel", participants: [OWNER, TARGET], ttlMs: 60_000 });
    const err = await rejection(new HandoffSession(clientAs(TARGET), { sessionId: owner.sessionId }).cancel("not mine"));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.PermissionDenied);
    const ack = await owner.cancel("rotation postponed");
    expect(ack.sessionState).toBe(SessionState.CANCELLED);
    const late = await rejection(owner.offer({ targetParticipant: TARGET }));
    expect((late as MacpAckError).code).toBe("SESSION_NOT_OPEN");
    const sus = await rejection(owner.suspend());
    expect((sus as MacpAckError).code).toBe("SESSION_NOT_OPEN");
  });
});

describe("TaskSession", () => {
  const PLANNER = "agent://etl/planner";
  const WORKER = "agent://etl/worker-7";

  it("request → accept → 30% → 70% → complete → commit, folded by TaskProjection", async () => {
    const planner = new TaskSession(clientAs(PLANNER));
    await planner.start({ intent: "backfill", participants: [PLANNER, WORKER], ttlMs: 600_000 });
    await planner.request({
      taskId: "backfill-march",
      title: "Backfill March invoices",
      requestedAssignee: WORKER,
      input: { month: "2025-03" },
    });
    const worker = await TaskSession.attach(clientAs(WORKER), planner.sessionId);
    await worker.acceptTask();
    await worker.update({ progress: 0.3, message: "30%" });
    await worker.update({ progress: 0.7, message: "70%" });
    await worker.complete({ output: { rows: 1204 }, summary: "1204 invoices backfilled" });
    expect(worker.suggestedAction()).toBe("task.completed");
    await expect(worker.update({ progress: 2 })).rejects.toBeInstanceOf(MacpUsageError);
    await planner.syncVersions();
    const ack = await planner.commit({ action: "task.completed", reason: "output verified" });
    expect(ack.sessionState).toBe(SessionState.RESOLVED);

    const proj = TaskProjection.from(await planner.client.history(planner.sessionId));
    expect(proj.phase).toBe("Committed");
    expect(proj.task?.taskId).toBe("backfill-march");
    expect(proj.activeAssignee()).toBe(WORKER);
    expect(proj.task?.updates.map((u) => u.progress)).toEqual([0.3, 0.7]);
    expect(proj.latestProgress()).toBe(1);
    expect(proj.isCompleted()).toBe(true);
    expect(proj.isFailed()).toBe(false);
    expect(proj.terminalReport()).toMatchObject({ kind: "complete", summary: "1204 invoices backfilled" });
    expect(proj.commitment).toMatchObject({ action: "task.completed", outcomePositive: true });
  });

  it("an update from someone other than the assignee is FORBIDDEN", async () => {
    const planner = new TaskSession(clientAs(PLANNER));
    await planner.start({ intent: "x", participants: [PLANNER, WORKER, BYSTANDER], ttlMs: 60_000 });
    await planner.request({ title: "t", requestedAssignee: WORKER });
    await new TaskSession(clientAs(WORKER), { sessionId: planner.sessionId }).acceptTask({ taskId: "t1" });
    const err = await rejection(
      new TaskSession(clientAs(BYSTANDER), { sessionId: planner.sessionId }).update({ taskId: "t1", progress: 0.5 }),
    );
    expect((err as MacpAckError).code).toBe("FORBIDDEN");
  });
});

describe("streams", () => {
  it("subscribe numbers envelopes explicitly, resumes after a sequence and delivers live", async () => {
    const owner = new HandoffSession(clientAs(OWNER));
    await owner.start({ intent: "stream", participants: [OWNER, TARGET], ttlMs: 60_000 });
    await owner.offer({ targetParticipant: TARGET });
    const got: SequencedEnvelope[] = [];
    const ac = new AbortController();
    const target = clientAs(TARGET);
    const done = (async () => {
      for await (const ev of target.subscribe(owner.sessionId, 1, { signal: ac.signal })) got.push(ev);
    })();
    await waitFor(() => got.length === 1, 5_000, "replay");
    expect(got[0]).toMatchObject({ sequence: 2 });
    expect(got[0]?.envelope.messageType).toBe("HandoffOffer");
    await new HandoffSession(target, { sessionId: owner.sessionId }).acceptHandoff({ handoffId: "h1" });
    await waitFor(() => got.length === 2, 5_000, "live accept");
    expect(got[1]?.sequence).toBe(3);
    expect(got[1]?.envelope.sender).toBe(TARGET);
    ac.abort();
    await done; // ends quietly on abort
  });

  it("subscribe by a non-participant throws MacpStreamError FORBIDDEN", async () => {
    const owner = new HandoffSession(clientAs(OWNER));
    await owner.start({ intent: "private", participants: [OWNER, TARGET], ttlMs: 60_000 });
    const outsider = clientAs("agent://outsider");
    const err = await rejection(
      (async () => {
        for await (const _ of outsider.subscribe(owner.sessionId)) void _;
      })(),
    );
    expect(err).toBeInstanceOf(MacpStreamError);
    expect((err as MacpStreamError).code).toBe("FORBIDDEN");
    const g = await rejection(outsider.getSession(owner.sessionId));
    expect((g as ConnectError).code).toBe(Code.PermissionDenied);
  });

  it("watchSessions yields the snapshot and live lifecycle events", async () => {
    const watcher = clientAs("agent://watcher");
    const seen: { type: string; sessionId: string; state: string }[] = [];
    const ac = new AbortController();
    const done = (async () => {
      for await (const ev of watcher.watchSessions({ signal: ac.signal })) {
        seen.push({
          type: EventType[ev.eventType] ?? "?",
          sessionId: ev.session?.sessionId ?? "",
          state: SessionState[ev.session?.state ?? 0] ?? "?",
        });
      }
    })();
    const owner = new HandoffSession(clientAs(OWNER));
    await owner.start({ intent: "watched", participants: [OWNER, TARGET], ttlMs: 60_000 });
    await waitFor(() => seen.some((e) => e.sessionId === owner.sessionId && e.type === "CREATED"), 5_000, "CREATED");
    await owner.cancel("done");
    await waitFor(() => seen.some((e) => e.sessionId === owner.sessionId && e.type === "CANCELLED"), 5_000, "CANCELLED");
    expect((await watcher.listSessions()).some((m) => m.sessionId === owner.sessionId)).toBe(true);
    ac.abort();
    await done;
  });
});

describe("policies", () => {
  it("registers, reads and lists a policy; a second registration is refused with a reason", async () => {
    const c = clientAs("agent://admin");
    const policy = buildHandoffPolicy({
      policyId: "policy.agenttest.lead",
      description: "lead approves",
      commitment: { authority: "designated_role", designatedRoles: ["agent://lead"] },
    });
    expect(await c.registerPolicy(policy)).toEqual({ ok: true, error: "" });
    const again = await c.registerPolicy(policy);
    expect(again.ok).toBe(false);
    expect(again.error).toMatch(/already registered/);
    const got = await c.getPolicy("policy.agenttest.lead");
    expect(JSON.parse(got.rules)).toEqual({ commitment: { authority: "designated_role", designated_roles: ["agent://lead"] } });
    expect((await c.listPolicies("macp.mode.handoff.v1")).map((p) => p.policyId)).toContain("policy.agenttest.lead");
    const missing = await rejection(c.getPolicy("policy.nope"));
    expect((missing as ConnectError).code).toBe(Code.NotFound);

    // Sessions bound to it: the owner may not commit, the lead may.
    const owner = new HandoffSession(clientAs(OWNER), { policyVersion: "policy.agenttest.lead" });
    await owner.start({ intent: "needs approval", participants: [OWNER, TARGET, "agent://lead"], ttlMs: 60_000 });
    await owner.offer({ targetParticipant: TARGET });
    await new HandoffSession(clientAs(TARGET), { sessionId: owner.sessionId }).acceptHandoff({ handoffId: "h1" });
    const denied = await rejection(owner.commit({ action: "handoff.accepted", reason: "r" }));
    expect((denied as MacpAckError).code).toBe("FORBIDDEN");
    const lead = await HandoffSession.attach(clientAs("agent://lead"), owner.sessionId);
    expect(lead.policyVersion).toBe("policy.agenttest.lead");
    expect((await lead.commit({ action: "handoff.accepted", reason: "approved" })).sessionState).toBe(SessionState.RESOLVED);
  });
});

describe("auth styles and TLS", () => {
  it("accepts the legacy x-macp-agent-id dev header", async () => {
    const s = new HandoffSession(clientAs(OWNER, "x-macp-agent-id"));
    const ack = await s.start({ intent: "legacy header", participants: [OWNER, TARGET], ttlMs: 60_000 });
    expect(ack.ok).toBe(true);
    expect((await s.metadata()).initiator).toBe(OWNER);
  });

  it("talks TLS with a CA file and token auth; the runtime fills in the sender", async () => {
    const dir = tempDir("baton-agent-tls-");
    const cert = path.join(dir, "cert.pem");
    const key = path.join(dir, "key.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
      ],
      { stdio: "ignore" },
    );
    const tls = await startTestRuntime({
      MACP_ALLOW_INSECURE: "0",
      MACP_TLS_CERT_PATH: cert,
      MACP_TLS_KEY_PATH: key,
      MACP_AUTH_TOKENS_JSON: JSON.stringify([
        { token: "tok-alice", sender: OWNER },
        { token: "tok-bob", sender: TARGET },
      ]),
    });
    const alice = new MacpClient({ address: tls.address, tls: true, caPath: cert, auth: Auth.bearer("tok-alice") });
    const bob = new MacpClient({ address: tls.address, caPath: cert, auth: Auth.bearer("tok-bob", { expectedSender: TARGET }) });
    try {
      expect(alice.baseUrl.startsWith("https://")).toBe(true);
      const s = new HandoffSession(alice);
      await s.start({ intent: "over TLS", participants: [OWNER, TARGET], ttlMs: 60_000 });
      await s.offer({ targetParticipant: TARGET });
      await new HandoffSession(bob, { sessionId: s.sessionId }).acceptHandoff({ handoffId: "h1" });
      const events = await alice.history(s.sessionId);
      expect(events.map((e) => e.envelope.sender)).toEqual([OWNER, OWNER, TARGET]);
      const wrong = new MacpClient({ address: tls.address, caPath: cert, auth: Auth.bearer("nope") });
      const err = await rejection(wrong.listSessions());
      wrong.close();
      expect((err as ConnectError).code).toBe(Code.Unauthenticated);
      expect(() => new MacpClient({ address: tls.address, caPath: path.join(dir, "missing.pem") })).toThrow(/cannot read CA file/);
    } finally {
      alice.close();
      bob.close();
      await tls.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("context files", () => {
  it("guesses the content type from the extension and enforces the 1 MiB limit", () => {
    expect(contentTypeFor("runbook.md")).toBe("text/markdown");
    expect(contentTypeFor("state.JSON")).toBe("application/json");
    expect(contentTypeFor("notes.txt")).toBe("text/plain");
    expect(contentTypeFor("dump.bin")).toBe("application/octet-stream");
    const dir = tempDir("baton-ctx-");
    try {
      const small = path.join(dir, "r.md");
      fs.writeFileSync(small, "# Runbook\n");
      expect(readContextFile(small)).toMatchObject({ contentType: "text/markdown", size: 10 });
      expect(readContextFile(small, { contentType: "text/plain" }).contentType).toBe("text/plain");
      const big = path.join(dir, "big.txt");
      fs.writeFileSync(big, Buffer.alloc(1_048_577, 97));
      expect(() => readContextFile(big)).toThrow(/1\.00 MiB limit/);
      expect(() => readContextFile(path.join(dir, "nope.md"))).toThrow(/no such file/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
