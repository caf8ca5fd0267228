// The agent layer (lib/agent) against the real runtime on loopback: the handoff and task session
// helpers and their projections over subscribed history.
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { HandoffProjection, HandoffSession, MacpAckError, MacpUsageError, TaskProjection, TaskSession } from "@/lib/agent";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { decodePayloadToJson } from "@/lib/macp/payloads";
import { BYSTANDER, clientAs, OWNER, rejection, TARGET, useAgentRuntime } from "./__fixtures__/agent-kit";

useAgentRuntime();

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
