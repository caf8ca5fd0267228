import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { InboxItemKind } from "@/lib/gen/baton/v1/actions_pb";
import { SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { summarizePolicyRules } from "@/lib/authz/policy-summary";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { viewFromEvents } from "@/lib/macp/projections/session";
import type { SessionEvent } from "@/lib/macp/projections/types";
import { makeEvent } from "@/lib/macp/test-utils";
import { sessionIdForStart } from "./actions";
import { approvalAheadFor, inboxItemsFor } from "./inbox";
import { policyDescriptorFor } from "./policies";

const SID = "01JTESTSESSION000000000001";
const names: Record<string, string> = { "human:alice": "Alice Ng", "human:bob": "Bob Ito", "human:carol": "Carol Lee" };
const ctx = { nameOf: (id: string) => names[id] ?? id, now: 1_700_000_100_000 };
const alice = { role: "operator" as const, participantId: "human:alice" };
const bob = { role: "operator" as const, participantId: "human:bob" };
const carol = { role: "approver" as const, participantId: "human:carol" };

function meta(mode: string, state = SessionState.OPEN, policyVersion = "policy.default") {
  return create(SessionMetadataSchema, {
    sessionId: SID,
    mode,
    state,
    policyVersion,
    initiator: "human:alice",
    expiresAtUnixMs: 1_700_003_600_000n,
  });
}

const start = (mode: string, participants: string[], sender = "human:alice", policy = ""): SessionEvent =>
  makeEvent(
    mode,
    "SessionStart",
    {
      intent: "rotation",
      participants,
      modeVersion: "1.0.0",
      configurationVersion: "config.default",
      policyVersion: policy,
      ttlMs: 3_600_000n,
    },
    { sender },
  );
const h = (type: string, payload: Record<string, unknown>, sender: string) => makeEvent(HANDOFF_MODE, type, payload, { sender });
const t = (type: string, payload: Record<string, unknown>, sender: string) => makeEvent(TASK_MODE, type, payload, { sender });

describe("inboxItemsFor", () => {
  it("shows a pending offer to its target only, and the answered offer to whoever may commit", () => {
    const approval = policyDescriptorFor(HANDOFF_MODE, { kind: "approval", approvers: ["human:carol"] }, (id) => id);
    const policyId = approval?.policyId ?? "";
    const policy = summarizePolicyRules(approval?.rules ?? "");
    const events = [
      start(HANDOFF_MODE, ["human:alice", "human:bob", "human:carol"], "human:alice", policyId),
      h("HandoffOffer", { handoffId: "h1", targetParticipant: "human:bob", scope: "pager" }, "human:alice"),
    ];
    const m = meta(HANDOFF_MODE, SessionState.OPEN, policyId);
    const offered = viewFromEvents(events);
    expect(inboxItemsFor(bob, m, offered, { ...ctx, policy }).map((i) => [i.kind, i.summary, i.subjectId])).toEqual([
      [InboxItemKind.OFFER, "Alice Ng offered you pager.", "h1"],
    ]);
    expect(inboxItemsFor(alice, m, offered, { ...ctx, policy })).toEqual([]);
    expect(inboxItemsFor(carol, m, offered, { ...ctx, policy })).toEqual([]);

    const accepted = viewFromEvents([...events, h("HandoffAccept", { handoffId: "h1", acceptedBy: "human:bob" }, "human:bob")]);
    expect(inboxItemsFor(bob, m, accepted, { ...ctx, policy })).toEqual([]);
    // Carol approves as the policy's approver: the item names who asked (Alice), not who answered.
    expect(inboxItemsFor(carol, m, accepted, { ...ctx, policy }).map((i) => [i.kind, i.fromParticipant, i.summary, i.asApprover])).toEqual([
      [InboxItemKind.APPROVAL, "human:alice", "Alice Ng asks you to approve handing pager to Bob Ito, who accepted.", true],
    ]);
    // Without the policy's rules nothing can be decided, so nothing is shown.
    expect(inboxItemsFor(carol, m, accepted, ctx)).toEqual([]);
    // Nothing waits in a session that is no longer open.
    expect(inboxItemsFor(carol, meta(HANDOFF_MODE, SessionState.CANCELLED, policyId), accepted, { ...ctx, policy })).toEqual([]);
  });

  it("tells a designated approver early, while the offer waits (not counted as waiting on them), and nobody else", () => {
    const approval = policyDescriptorFor(HANDOFF_MODE, { kind: "approval", approvers: ["human:carol"] }, (id) => id);
    const policyId = approval?.policyId ?? "";
    const policy = summarizePolicyRules(approval?.rules ?? "");
    const events = [
      start(HANDOFF_MODE, ["human:alice", "human:bob", "human:carol"], "human:alice", policyId),
      h("HandoffOffer", { handoffId: "h1", targetParticipant: "human:bob", scope: "pager" }, "human:alice"),
    ];
    const m = meta(HANDOFF_MODE, SessionState.OPEN, policyId);
    const offered = viewFromEvents(events);
    const ahead = approvalAheadFor(carol, m, offered, { ...ctx, policy });
    expect(ahead && [ahead.kind, ahead.fromParticipant, ahead.subjectId, ahead.asApprover, ahead.summary]).toEqual([
      InboxItemKind.APPROVAL_AHEAD,
      "human:alice",
      "h1",
      true,
      "Alice Ng offered pager to Bob Ito; your approval comes next, once Bob Ito answers.",
    ]);
    // The owner and the target are not approvers-in-waiting.
    expect(approvalAheadFor(alice, m, offered, { ...ctx, policy })).toBeUndefined();
    expect(approvalAheadFor(bob, m, offered, { ...ctx, policy })).toBeUndefined();
    // Without approvers (the default policy, or its rules not loaded yet) nobody is told early.
    expect(approvalAheadFor(carol, meta(HANDOFF_MODE), offered, ctx)).toBeUndefined();
    expect(approvalAheadFor(carol, m, offered, ctx)).toBeUndefined();
    // A re-offer after a decline: still ahead (the approval that matters is the new offer's answer).
    const reoffered = viewFromEvents([
      ...events,
      h("HandoffDecline", { handoffId: "h1", reason: "busy" }, "human:bob"),
      h("HandoffOffer", { handoffId: "h2", targetParticipant: "human:dave", scope: "pager" }, "human:alice"),
    ]);
    expect(approvalAheadFor(carol, m, reoffered, { ...ctx, policy })?.subjectId).toBe("h2");
    // Once answered it is a real approval item, no longer "ahead"; nor in a closed session.
    const accepted = viewFromEvents([...events, h("HandoffAccept", { handoffId: "h1", acceptedBy: "human:bob" }, "human:bob")]);
    expect(approvalAheadFor(carol, m, accepted, { ...ctx, policy })).toBeUndefined();
    expect(approvalAheadFor(carol, meta(HANDOFF_MODE, SessionState.CANCELLED, policyId), offered, { ...ctx, policy })).toBeUndefined();
    // A viewer named in the policy cannot commit: decide() refuses for authority, so nothing is promised.
    expect(approvalAheadFor({ role: "viewer", participantId: "human:carol" }, m, offered, { ...ctx, policy })).toBeUndefined();
  });

  it("does not ask for a commitment while a new offer waits after a decline", () => {
    const events = [
      start(HANDOFF_MODE, ["human:alice", "human:bob", "human:carol"], "human:carol"),
      h("HandoffOffer", { handoffId: "h1", targetParticipant: "human:bob", scope: "pager" }, "human:carol"),
      h("HandoffDecline", { handoffId: "h1", declinedBy: "human:bob" }, "human:bob"),
    ];
    const m = { ...meta(HANDOFF_MODE), initiator: "human:carol" };
    expect(inboxItemsFor(carol, m, viewFromEvents(events), ctx).map((i) => i.kind)).toEqual([InboxItemKind.APPROVAL]);
    const reoffered = viewFromEvents([
      ...events,
      h("HandoffOffer", { handoffId: "h2", targetParticipant: "human:alice", scope: "pager" }, "human:carol"),
    ]);
    expect(inboxItemsFor(carol, m, reoffered, ctx)).toEqual([]);
    expect(inboxItemsFor(alice, m, reoffered, ctx).map((i) => i.kind)).toEqual([InboxItemKind.OFFER]);
  });

  it("tells the owner a declined offer is back with them, also under lead approval where they may not commit (issue 12, problem 3)", () => {
    const approval = policyDescriptorFor(HANDOFF_MODE, { kind: "approval", approvers: ["human:carol"] }, (id) => id);
    const policyId = approval?.policyId ?? "";
    const policy = summarizePolicyRules(approval?.rules ?? "");
    const events = [
      start(HANDOFF_MODE, ["human:alice", "human:bob", "human:carol"], "human:alice", policyId),
      h("HandoffOffer", { handoffId: "h1", targetParticipant: "human:bob", scope: "pager" }, "human:alice"),
      h("HandoffDecline", { handoffId: "h1", declinedBy: "human:bob", reason: "busy" }, "human:bob"),
    ];
    const m = meta(HANDOFF_MODE, SessionState.OPEN, policyId);
    const declined = viewFromEvents(events);
    expect(inboxItemsFor(alice, m, declined, { ...ctx, policy }).map((i) => [i.kind, i.fromParticipant, i.subjectId, i.summary])).toEqual([
      [InboxItemKind.DECLINED, "human:bob", "h1", "Bob Ito declined pager; offer it to someone else or cancel the handoff."],
    ]);
    // Carol may still reject (the owner keeps it); Bob has nothing to do.
    expect(inboxItemsFor(carol, m, declined, { ...ctx, policy }).map((i) => i.kind)).toEqual([InboxItemKind.APPROVAL]);
    expect(inboxItemsFor(bob, m, declined, { ...ctx, policy })).toEqual([]);
    // Under the default policy the owner commits: the item asks for that (not a second item).
    const plain = viewFromEvents([start(HANDOFF_MODE, ["human:alice", "human:bob"]), ...events.slice(1)]);
    expect(inboxItemsFor(alice, meta(HANDOFF_MODE), plain, ctx).map((i) => i.kind)).toEqual([InboxItemKind.APPROVAL]);
    // Re-offered: the item leaves the owner's inbox.
    const reoffered = viewFromEvents([
      ...events,
      h("HandoffOffer", { handoffId: "h2", targetParticipant: "human:carol", scope: "pager" }, "human:alice"),
    ]);
    expect(inboxItemsFor(alice, m, reoffered, { ...ctx, policy })).toEqual([]);
    // Nothing in a closed session.
    expect(inboxItemsFor(alice, meta(HANDOFF_MODE, SessionState.CANCELLED, policyId), declined, { ...ctx, policy })).toEqual([]);
  });

  it("tells the requester a task turned down by its assignee is back with them", () => {
    const m = { ...meta(TASK_MODE), initiator: "human:carol" };
    const rejected = viewFromEvents([
      start(TASK_MODE, ["human:carol", "human:bob"], "human:carol"),
      t("TaskRequest", { taskId: "t1", title: "Rotate certs", requestedAssignee: "human:bob" }, "human:carol"),
      t("TaskReject", { taskId: "t1", assignee: "human:bob", reason: "no capacity" }, "human:bob"),
    ]);
    expect(inboxItemsFor(carol, m, rejected, ctx).map((i) => [i.kind, i.fromParticipant, i.subjectId, i.summary])).toEqual([
      [InboxItemKind.DECLINED, "human:bob", "t1", 'Bob Ito turned down "Rotate certs"; cancel it, or ask someone else in a new task.'],
    ]);
    expect(inboxItemsFor(bob, m, rejected, ctx)).toEqual([]);
  });

  it("shows a task to its assignee until it is finished, then to the requester if they may commit", () => {
    const m = { ...meta(TASK_MODE), initiator: "human:carol" };
    const base = [
      start(TASK_MODE, ["human:carol", "human:bob"], "human:carol"),
      t("TaskRequest", { taskId: "t1", title: "Rotate certs", requestedAssignee: "human:bob" }, "human:carol"),
    ];
    expect(inboxItemsFor(bob, m, viewFromEvents(base), ctx).map((i) => i.summary)).toEqual(['Carol Lee asked you to do "Rotate certs".']);
    const taken = [...base, t("TaskAccept", { taskId: "t1", assignee: "human:bob" }, "human:bob")];
    expect(inboxItemsFor(bob, m, viewFromEvents(taken), ctx).map((i) => i.summary)).toEqual([
      'You are working on "Rotate certs" for Carol Lee.',
    ]);
    const done = viewFromEvents([...taken, t("TaskComplete", { taskId: "t1", assignee: "human:bob", summary: "ok" }, "human:bob")]);
    expect(inboxItemsFor(bob, m, done, ctx)).toEqual([]);
    expect(inboxItemsFor(carol, m, done, ctx).map((i) => [i.kind, i.summary])).toEqual([
      [InboxItemKind.APPROVAL, 'Bob Ito completed "Rotate certs"; commit the result.'],
    ]);
  });
});

describe("derived ids", () => {
  it("gives a retried start the same valid session id, distinct per person", () => {
    const a = sessionIdForStart("human:alice", "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a");
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(sessionIdForStart("human:alice", "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a")).toBe(a);
    expect(sessionIdForStart("human:bob", "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a")).not.toBe(a);
  });

  it("names policies after their content", () => {
    const n = (id: string) => id;
    const a = policyDescriptorFor(HANDOFF_MODE, { kind: "approval", approvers: ["human:b", "human:a"] }, n);
    const b = policyDescriptorFor(HANDOFF_MODE, { kind: "approval", approvers: ["human:a", "human:b"] }, n);
    expect(a?.policyId).toBe(b?.policyId);
    expect(a?.rules).toBe('{"commitment":{"authority":"designated_role","designated_roles":["human:a","human:b"]}}');
    expect(policyDescriptorFor(TASK_MODE, { kind: "approval", approvers: ["human:a", "human:b"] }, n)?.policyId).not.toBe(a?.policyId);
    expect(policyDescriptorFor(HANDOFF_MODE, { kind: "default" }, n)).toBeNull();
    expect(policyDescriptorFor(HANDOFF_MODE, { kind: "implicit", timeoutMs: 60_000 }, n)?.rules).toBe(
      '{"acceptance":{"implicit_accept_timeout_ms":60000}}',
    );
  });
});

describe("watchInbox over the catalog feeder", () => {
  it("lists what waits on the person among open sessions only, and drops a session when it closes", async () => {
    const { FakeRuntime } = await import("./testing/fake-runtime");
    const { handoffScript } = await import("./testing/scenario");
    const { createGateway } = await import("./gateway");
    const { PolicyCache } = await import("./policies");
    const { watchInbox } = await import("./inbox-stream");
    const { SessionLifecycleEvent_EventType: EventType } = await import("@/lib/gen/macp/v1/core_pb");
    const rt = new FakeRuntime();
    const me = "human:bob";
    const offered = handoffScript(undefined, "human:alice", me);
    rt.start(offered.start(), ["human:alice", me]);
    rt.append(offered.offer());
    // A closed session with an offer to the same person: no item, and never followed.
    const closed = handoffScript(undefined, "human:alice", me);
    rt.start(closed.start(), ["human:alice", me]);
    rt.append(closed.offer());
    rt.setState(closed.sessionId, SessionState.CANCELLED, EventType.CANCELLED);
    const gw = createGateway({ runtime: rt });
    const ac = new AbortController();
    const counts: number[] = [];
    const stream = watchInbox(
      { feeder: gw.feeder, policies: new PolicyCache(async () => null), logger: gw.logger, flushMs: 5, heartbeatMs: 60_000 },
      { role: "operator", participantId: me },
      (id) => id,
      ac.signal,
    );
    const it = stream[Symbol.asyncIterator]();
    const next = async () => {
      for (;;) {
        const r = await it.next();
        if (r.done) throw new Error("inbox ended");
        if (r.value.item.case === "update") return r.value.item.value;
      }
    };
    let update = await next();
    while (update.items.length === 0) update = await next();
    counts.push(update.items.length);
    expect(update.items.map((i) => [i.kind, i.sessionId])).toEqual([[InboxItemKind.OFFER, offered.sessionId]]);
    rt.setState(offered.sessionId, SessionState.CANCELLED, EventType.CANCELLED);
    update = await next();
    expect(update.items).toEqual([]);
    expect(gw.feeder.followedCount).toBe(0);
    ac.abort();
    await it.return?.(undefined);
    gw.close();
  });
});

describe("firstInboxUpdate", () => {
  it("answers with the stream's first update (what the /inbox page renders on the server) and stops observing", async () => {
    const { FakeRuntime } = await import("./testing/fake-runtime");
    const { handoffScript } = await import("./testing/scenario");
    const { createGateway } = await import("./gateway");
    const { PolicyCache } = await import("./policies");
    const { firstInboxUpdate } = await import("./inbox-stream");
    const rt = new FakeRuntime();
    const me = "human:bob";
    const offered = handoffScript(undefined, "human:alice", me);
    rt.start(offered.start(), ["human:alice", me]);
    rt.append(offered.offer());
    const gw = createGateway({ runtime: rt });
    const options = { feeder: gw.feeder, policies: new PolicyCache(async () => null), logger: gw.logger };
    const user = { role: "operator" as const, participantId: me };
    // The feeder follows the open session shortly after it starts: ask until it has.
    let update = await firstInboxUpdate(options, user, (id) => id, 2_000);
    for (let i = 0; i < 50 && update?.items.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      update = await firstInboxUpdate(options, user, (id) => id, 2_000);
    }
    expect(update?.items.map((i) => [i.kind, i.sessionId, i.summary])).toEqual([
      [InboxItemKind.OFFER, offered.sessionId, "human:alice offered you " + (update?.items[0]?.scope || "a handoff") + "."],
    ]);
    expect(update?.count).toBe(1);
    gw.close();
  });

  it("gives up (undefined) when the session index has not loaded in time, and releases what it observed", async () => {
    const { PolicyCache } = await import("./policies");
    const { firstInboxUpdate } = await import("./inbox-stream");
    const { silentLogger } = await import("./logger");
    let observing = 0;
    const feeder = {
      observeOpen(_o: unknown, signal: AbortSignal) {
        observing += 1;
        signal.addEventListener("abort", () => (observing -= 1), { once: true });
      },
    };
    const started = Date.now();
    const update = await firstInboxUpdate(
      { feeder, policies: new PolicyCache(async () => null), logger: silentLogger },
      { role: "operator", participantId: "human:bob" },
      (id) => id,
      60,
    );
    expect(update).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    expect(observing).toBe(0);
  });
});
