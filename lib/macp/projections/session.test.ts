import { describe, expect, it } from "vitest";
import { DECISION_MODE, HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { makeEvent } from "@/lib/macp/test-utils";
import type { SessionEvent } from "@/lib/macp/projections/types";
import { describePhaseChange, emptySessionView, reduceSession, viewFromEvents, type SessionView } from "@/lib/macp/projections/session";

const OWNER = "agent://owner";
const BOB = "bob";
const CAROL = "carol";
const SID = "01JTESTSESSION000000000001";

const start = (mode: string, extra: Record<string, unknown> = {}) =>
  makeEvent(
    mode,
    "SessionStart",
    {
      intent: "move it",
      participants: [OWNER, BOB, CAROL],
      modeVersion: "1.0.0",
      configurationVersion: "cfg",
      policyVersion: "",
      ttlMs: 60_000n,
      roots: [{ uri: "macp://r", name: "R" }],
      contextId: "ctx-1",
      extensions: { "x.ext": new Uint8Array([1]) },
      ...extra,
    },
    { sender: OWNER, ts: 10_000, sequence: 1 },
  );
const h = (type: string, payload: Record<string, unknown>, sender = OWNER, seq?: number) =>
  makeEvent(HANDOFF_MODE, type, payload, { sender, sequence: seq });
const t = (type: string, payload: Record<string, unknown>, sender: string) => makeEvent(TASK_MODE, type, payload, { sender });

describe("reduceSession: metadata", () => {
  it("reads SessionStart metadata", () => {
    const v = viewFromEvents([start(HANDOFF_MODE)]);
    expect(v).toMatchObject({
      sessionId: SID,
      mode: HANDOFF_MODE,
      started: true,
      intent: "move it",
      participants: [OWNER, BOB, CAROL],
      initiator: OWNER,
      modeVersion: "1.0.0",
      configurationVersion: "cfg",
      policyVersion: "",
      effectivePolicyId: "policy.default",
      ttlMs: 60_000,
      roots: [{ uri: "macp://r", name: "R" }],
      contextId: "ctx-1",
      extensionKeys: ["x.ext"],
      startedAt: 10_000,
      expiresAt: 70_000,
      events: 1,
      ignoredEvents: 0,
      lastSequence: 1,
      lifecycle: "Open",
      phase: "Pending",
      currentOwner: OWNER,
    });
    expect(v.currentTarget).toBeUndefined();
    expect(v.handoff?.phase).toBe("Pending");
    expect(v.task).toBeUndefined();
  });

  // Issue 12: "Last activity" is the newest event's own time; the receive
  // time (which a replay sets to "now") counts only for events without one.
  it("tracks activity by the events' own time, the receive time only without a timestamp", () => {
    let v = viewFromEvents([start(HANDOFF_MODE)]);
    const offer = h("HandoffOffer", { handoffId: "h1", targetParticipant: BOB });
    v = reduceSession(v, { ...offer, receivedAtMs: Number(offer.envelope.timestampUnixMs) + 600_000 });
    expect(v.lastActivityMs).toBe(Number(offer.envelope.timestampUnixMs));
    expect(v.events).toBe(2);
    const untimed = h("HandoffContext", { handoffId: "h1", contentType: "text/plain" });
    untimed.envelope.timestampUnixMs = 0n;
    v = reduceSession(v, { ...untimed, receivedAtMs: Number(offer.envelope.timestampUnixMs) + 900_000 });
    expect(v.lastActivityMs).toBe(Number(offer.envelope.timestampUnixMs) + 900_000);
  });

  it("shows the scope typed at start until an offer names one", () => {
    const started = makeEvent(
      HANDOFF_MODE,
      "SessionStart",
      {
        intent: "rotation",
        participants: [OWNER, BOB],
        ttlMs: 60_000n,
        extensions: { "baton.scope": new TextEncoder().encode("payments-api primary on-call") },
      },
      { sender: OWNER },
    );
    let v = viewFromEvents([started]);
    expect(v.scope).toBe("payments-api primary on-call");
    expect(v.startScope).toBe("payments-api primary on-call");
    v = reduceSession(v, h("HandoffOffer", { handoffId: "h1", targetParticipant: BOB, scope: "secondary" }));
    expect(v.scope).toBe("secondary");
  });

  it("works for events seen before (or without) the SessionStart", () => {
    const v = viewFromEvents([h("HandoffOffer", { handoffId: "h1", targetParticipant: BOB, scope: "s" })]);
    expect(v.started).toBe(false);
    expect(v.mode).toBe(HANDOFF_MODE);
    expect(v.phase).toBe("OfferPending");
    expect(v.currentTarget).toBe(BOB);
  });
});

describe("reduceSession: handoff", () => {
  it("derives phase, owner, target and scope through a serial handoff", () => {
    const events: SessionEvent[] = [
      start(HANDOFF_MODE),
      h("HandoffOffer", { handoffId: "h1", targetParticipant: BOB, scope: "billing" }),
      h("HandoffDecline", { handoffId: "h1", reason: "busy" }, BOB),
      h("HandoffOffer", { handoffId: "h2", targetParticipant: CAROL, scope: "billing v2" }),
    ];
    let v = viewFromEvents(events);
    expect(v.phase).toBe("OfferPending");
    expect(v.currentTarget).toBe(CAROL);
    expect(v.scope).toBe("billing v2");
    expect(v.currentOwner).toBe(OWNER);

    v = reduceSession(v, h("HandoffAccept", { handoffId: "h2", acceptedBy: CAROL }, CAROL));
    expect(v.phase).toBe("Accepted");
    expect(v.currentOwner).toBe(OWNER); // not transferred until committed

    v = reduceSession(v, h("Commitment", { commitmentId: "c", action: "handoff.accepted", outcomePositive: true, reason: `to ${CAROL}` }));
    expect(v.phase).toBe("Committed");
    expect(v.lifecycle).toBe("Resolved");
    expect(v.currentOwner).toBe(CAROL);
    expect(v.commitment?.action).toBe("handoff.accepted");
    expect(v.handoff?.commitment?.outcomePositive).toBe(true);
  });

  it("keeps the initiator as owner after a negative commitment", () => {
    const v = viewFromEvents([
      start(HANDOFF_MODE),
      h("HandoffOffer", { handoffId: "h1", targetParticipant: BOB }),
      h("HandoffDecline", { handoffId: "h1" }, BOB),
      h("Commitment", { commitmentId: "c", action: "handoff.declined", outcomePositive: false }),
    ]);
    expect(v.phase).toBe("Committed");
    expect(v.currentOwner).toBe(OWNER);
    expect(v.commitment?.outcomePositive).toBe(false);
  });
});

describe("reduceSession: task", () => {
  it("derives owner (requester), target (assignee) and scope (title)", () => {
    let v = viewFromEvents([start(TASK_MODE), t("TaskRequest", { taskId: "t1", title: "Summarize", requestedAssignee: BOB }, OWNER)]);
    expect(v.phase).toBe("Requested");
    expect(v.currentOwner).toBe(OWNER);
    expect(v.currentTarget).toBe(BOB);
    expect(v.scope).toBe("Summarize");
    expect(v.handoff).toBeUndefined();

    v = reduceSession(v, t("TaskAccept", { taskId: "t1", assignee: BOB }, BOB));
    v = reduceSession(v, t("TaskUpdate", { taskId: "t1", progress: 0.3 }, BOB));
    expect(v.phase).toBe("InProgress");
    expect(v.task?.task?.latestProgress).toBeCloseTo(0.3);
    v = reduceSession(v, t("TaskComplete", { taskId: "t1", summary: "ok" }, BOB));
    expect(v.phase).toBe("Completed");
    v = reduceSession(v, t("Commitment", { commitmentId: "c", action: "task.completed", outcomePositive: true }, OWNER));
    expect(v.phase).toBe("Committed");
    expect(v.currentOwner).toBe(OWNER);
  });

  it("has no target for an open request before anyone accepts", () => {
    const v = viewFromEvents([start(TASK_MODE), t("TaskRequest", { taskId: "t1", title: "X" }, OWNER)]);
    expect(v.currentTarget).toBeUndefined();
  });
});

describe("reduceSession: other modes and tolerance", () => {
  it("unknown modes use Pending then Committed", () => {
    let v = viewFromEvents([start(DECISION_MODE), makeEvent(DECISION_MODE, "Vote", { proposalId: "p", vote: "APPROVE" })]);
    expect(v.phase).toBe("Pending");
    expect(v.ignoredEvents).toBe(0);
    v = reduceSession(v, makeEvent(DECISION_MODE, "Commitment", { action: "decision.selected", outcomePositive: true }));
    expect(v.phase).toBe("Committed");
    expect(v.currentOwner).toBe(OWNER);
  });

  it("ignores unknown message types and undecodable payloads without throwing", () => {
    const v0 = viewFromEvents([start(HANDOFF_MODE), h("HandoffOffer", { handoffId: "h1", targetParticipant: BOB })]);
    const weird = [
      makeEvent(HANDOFF_MODE, "HandoffWave", new Uint8Array([1, 2, 3])),
      makeEvent(HANDOFF_MODE, "HandoffAccept", new Uint8Array([0xff, 0xff, 0xff, 0xff])),
      makeEvent("ext.other.v1", "Contribute", new TextEncoder().encode('{"value":"x"}')),
      makeEvent(HANDOFF_MODE, "HandoffOffer", { handoffId: "hx" }, { sessionId: "another-session-id-0000000" }),
    ];
    let v = v0;
    for (const e of weird) v = reduceSession(v, e);
    expect(v.ignoredEvents).toBe(4);
    expect(v.events).toBe(6);
    expect(v.handoff).toBe(v0.handoff);
    expect(v.phase).toBe("OfferPending");
  });

  it("tracks runtime annotations when they are delivered", () => {
    let v = viewFromEvents([start(TASK_MODE)]);
    v = reduceSession(v, makeEvent(TASK_MODE, "SessionSuspend", { reason: "pause", suspendedBy: OWNER }));
    expect(v.lifecycle).toBe("Suspended");
    v = reduceSession(v, makeEvent(TASK_MODE, "SessionResume", { reason: "go", resumedBy: OWNER }));
    expect(v.lifecycle).toBe("Open");
    v = reduceSession(v, makeEvent(TASK_MODE, "SessionCancel", { reason: "stop", cancelledBy: OWNER }));
    expect(v.lifecycle).toBe("Cancelled");
    expect(v.phase).toBe("Pending");
    const e = reduceSession(viewFromEvents([start(TASK_MODE)]), makeEvent(TASK_MODE, "TtlExpired", new Uint8Array()));
    expect(e.lifecycle).toBe("Expired");
  });

  it("is immutable", () => {
    const v0 = viewFromEvents([start(HANDOFF_MODE)]);
    const snap = structuredClone(v0);
    reduceSession(v0, h("HandoffOffer", { handoffId: "h1", targetParticipant: BOB }));
    expect(v0).toEqual(snap);
    expect(emptySessionView().events).toBe(0);
  });
});

describe("describePhaseChange", () => {
  const steps = (events: SessionEvent[]): SessionView[] => {
    const out: SessionView[] = [];
    let v = emptySessionView();
    for (const e of events) {
      v = reduceSession(v, e);
      out.push(v);
    }
    return out;
  };

  it("announces each handoff phase and is null when nothing changed", () => {
    const views = steps([
      start(HANDOFF_MODE),
      h("HandoffOffer", { handoffId: "h1", targetParticipant: BOB }),
      h("HandoffContext", { handoffId: "h1", contentType: "text/plain" }),
      h("HandoffContext", { handoffId: "h1", contentType: "text/plain" }),
      h("HandoffDecline", { handoffId: "h1" }, BOB),
      h("HandoffOffer", { handoffId: "h2", targetParticipant: CAROL }),
      h("HandoffAccept", { handoffId: "h2" }, CAROL),
      h("Commitment", { action: "handoff.accepted", outcomePositive: true }),
    ]);
    const said = views.map((v, i) => describePhaseChange(i === 0 ? undefined : views[i - 1], v));
    expect(said).toEqual([
      null,
      // Issue 12: no offer ids spliced into sentences.
      "Offer 1 pending for bob",
      "Context shared with bob",
      null,
      "bob declined offer 1",
      "Offer 2 pending for carol",
      "carol accepted offer 2",
      "Handoff committed: handoff.accepted, positive outcome",
    ]);
  });

  it("announces task phases", () => {
    const views = steps([
      start(TASK_MODE),
      t("TaskRequest", { taskId: "t1", requestedAssignee: BOB }, OWNER),
      t("TaskAccept", { taskId: "t1" }, BOB),
      t("TaskUpdate", { taskId: "t1", progress: 0.5 }, BOB),
      t("TaskFail", { taskId: "t1", errorCode: "E1", retryable: true }, BOB),
      t("Commitment", { action: "task.failed", outcomePositive: false }, OWNER),
    ]);
    const said = views.map((v, i) => describePhaseChange(i === 0 ? undefined : views[i - 1], v));
    expect(said).toEqual([
      null,
      "Task requested from bob",
      "bob took the task, in progress",
      null,
      "Task failed (E1), retryable",
      "Task committed: task.failed, negative outcome",
    ]);
  });
});

describe("reduceSession: implicit accept", () => {
  it("moves ownership to the open offer's target when a positive handoff.accepted commitment follows no explicit accept", () => {
    const v = viewFromEvents([
      start(HANDOFF_MODE),
      h("HandoffOffer", { handoffId: "h1", targetParticipant: BOB, scope: "pager" }),
      h("Commitment", { commitmentId: "c1", action: "handoff.accepted", authorityScope: "s", reason: "implicit", outcomePositive: true }),
    ]);
    expect(v.phase).toBe("Committed");
    expect(v.currentOwner).toBe(BOB);
  });
  it("keeps the owner when the commitment is negative", () => {
    const v = viewFromEvents([
      start(HANDOFF_MODE),
      h("HandoffOffer", { handoffId: "h1", targetParticipant: BOB }),
      h("Commitment", { commitmentId: "c1", action: "handoff.no_target", authorityScope: "s", reason: "none", outcomePositive: false }),
    ]);
    expect(v.currentOwner).toBe(OWNER);
  });
});
