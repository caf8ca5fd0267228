import { create, fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { HandoffContextPayloadSchema } from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import { ParticipantActivitySchema, SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { DEFAULT_CONFIGURATION_VERSION, DEFAULT_POLICY_ID, HANDOFF_MODE, MODE_VERSION, TASK_MODE } from "@/lib/macp/constants";
import { buildEnvelope } from "@/lib/macp/payloads";
import { emptySessionView, reduceSession, type SessionView } from "@/lib/macp/projections/session";
import { historyCount, isTerminalState, leanEnvelope, nextActors, SessionFold, toSummary } from "./summary";

const OWNER = "agent://owner";
const TARGET = "agent://target";
const SESSION = "01JSUMMARYTEST000000000001";

const meta = (state: SessionState, counts: number[] = [], expires = 100n) =>
  create(SessionMetadataSchema, {
    sessionId: SESSION,
    state,
    startedAtUnixMs: 10n,
    expiresAtUnixMs: expires,
    initiator: OWNER,
    participantActivity: counts.map((messageCount, i) =>
      create(ParticipantActivitySchema, { participantId: `p${i}`, messageCount, lastMessageAtUnixMs: BigInt(20 + i) }),
    ),
  });

function handoff(timestampMs?: number) {
  const env = (messageType: string, sender: string, payload: Record<string, unknown>): Envelope =>
    buildEnvelope({ mode: HANDOFF_MODE, messageType, sessionId: SESSION, sender, payload, ...(timestampMs ? { timestampMs } : {}) });
  return {
    start: (intent = "hand over the pager") =>
      env("SessionStart", OWNER, {
        intent,
        participants: [OWNER, TARGET],
        modeVersion: MODE_VERSION,
        configurationVersion: DEFAULT_CONFIGURATION_VERSION,
        policyVersion: "",
        ttlMs: 60_000n,
      }),
    offer: (handoffId = "h1", scope = "pager") =>
      env("HandoffOffer", OWNER, { handoffId, targetParticipant: TARGET, scope, reason: "shift change" }),
    context: (handoffId = "h1", text = "runbook") =>
      env("HandoffContext", OWNER, { handoffId, contentType: "text/plain", context: new TextEncoder().encode(text) }),
    accept: (handoffId = "h1") => env("HandoffAccept", TARGET, { handoffId, acceptedBy: TARGET, reason: "on it" }),
    decline: (handoffId = "h1") => env("HandoffDecline", TARGET, { handoffId, declinedBy: TARGET, reason: "busy" }),
    commit: () =>
      env("Commitment", OWNER, {
        commitmentId: `c-${SESSION}`,
        action: "handoff.accepted",
        authorityScope: "pager",
        reason: `${TARGET} owns the pager`,
        modeVersion: MODE_VERSION,
        configurationVersion: DEFAULT_CONFIGURATION_VERSION,
        policyVersion: DEFAULT_POLICY_ID,
        outcomePositive: true,
      }),
  };
}

describe("historyCount and isTerminalState", () => {
  it("counts the SessionStart plus every accepted non-start message", () => {
    expect(historyCount(meta(SessionState.OPEN))).toBe(1);
    expect(historyCount(meta(SessionState.OPEN, [2, 3]))).toBe(6);
  });
  it("calls resolved, expired and cancelled terminal", () => {
    expect(
      [SessionState.OPEN, SessionState.SUSPENDED, SessionState.RESOLVED, SessionState.EXPIRED, SessionState.CANCELLED].map(isTerminalState),
    ).toEqual([false, false, true, true, true]);
  });
});

describe("SessionFold and toSummary", () => {
  it("folds with the shared reducer, ignores duplicates and fills the row", () => {
    const s = handoff();
    const fold = new SessionFold(SESSION);
    const envs = [s.start("pager rota"), s.offer("h1", "pager"), s.accept()];
    for (const e of envs) expect(fold.add(e)).toBe(true);
    expect(fold.add(envs[1]!)).toBe(false);
    expect(fold.count).toBe(3);
    const row = toSummary(meta(SessionState.OPEN, [1, 1]), fold.view, fold.count);
    expect(row.phase).toBe("Accepted");
    expect(row.intent).toBe("pager rota");
    expect(row.currentOwner).toBe(OWNER);
    expect(row.currentTarget).toBe(TARGET);
    expect(row.scope).toBe("pager");
    expect(row.eventCount).toBe(3n);
    expect(row.outcome).toBe("");

    fold.add(s.commit());
    const done = toSummary(meta(SessionState.RESOLVED, [1, 2]), fold.view, fold.count);
    expect(done.phase).toBe("Committed");
    expect(done.outcome).toBe("positive");
    expect(done.currentOwner).toBe(TARGET);
  });

  it("never changes a view it handed out, and equals folding one by one", () => {
    const s = handoff();
    const envs = [s.start(), s.offer()];
    for (let i = 0; i < 6; i++) envs.push(s.context("h1", `note ${i}`));
    envs.push(s.accept(), s.context("h1", "late"), s.commit());
    const fold = new SessionFold(SESSION);
    const handedOut: [SessionView, SessionView][] = [];
    envs.forEach((e, i) => {
      fold.add(e);
      if (i % 3 === 1) {
        const v = fold.view;
        handedOut.push([v, structuredClone(v)]);
      }
    });
    for (const [v, snapshot] of handedOut) expect(v).toStrictEqual(snapshot);
    const oneByOne = envs.reduce((v, envelope, i) => reduceSession(v, { envelope, sequence: i + 1 }), emptySessionView(SESSION));
    expect(fold.view).toStrictEqual(oneByOne);
    expect(fold.view.handoff?.offers[0]?.contexts).toHaveLength(7);
  });

  it("shows metadata only when the history could not be read", () => {
    const row = toSummary(meta(SessionState.OPEN, [1]), undefined, 0);
    expect(row.phase).toBe("");
    expect(row.currentOwner).toBe(OWNER);
    expect(row.lastActivityUnixMs).toBe(20n);
  });

  it("clamps an agent's future timestamp to the clock it is given, so a row follows from its inputs", () => {
    const s = handoff(5_000);
    const fold = new SessionFold(SESSION);
    fold.add(s.start());
    const m = meta(SessionState.OPEN);
    expect(toSummary(m, fold.view, 1, 1_000).lastActivityUnixMs).toBe(1_000n);
    expect(toSummary(m, fold.view, 1, 9_000).lastActivityUnixMs).toBe(5_000n);
    expect(toSummary(m, fold.view, 1, 1_000)).toStrictEqual(toSummary(m, fold.view, 1, 1_000));
  });
});

describe("nextActors", () => {
  it("follows whose move it is through a handoff", () => {
    const s = handoff();
    const fold = new SessionFold(SESSION);
    const open = meta(SessionState.OPEN);
    expect(nextActors(open, undefined)).toEqual([]);
    fold.add(s.start());
    expect(nextActors(open, fold.view)).toEqual([]);
    fold.add(s.offer());
    expect(nextActors(open, fold.view)).toEqual([TARGET]);
    fold.add(s.accept());
    expect(nextActors(open, fold.view)).toEqual([OWNER]);
    // Under lead approval the designated approvers commit, not the owner.
    expect(nextActors(open, fold.view, ["human:carol", "human:erin"])).toEqual(["human:carol", "human:erin"]);
    expect(nextActors(open, fold.view, [])).toEqual([OWNER]);
    fold.add(s.commit());
    expect(nextActors(open, fold.view)).toEqual([]);
  });

  it("hands a declined offer back to the owner and is empty once closed", () => {
    const s = handoff();
    const fold = new SessionFold(SESSION);
    for (const e of [s.start(), s.offer(), s.decline()]) fold.add(e);
    expect(nextActors(meta(SessionState.OPEN), fold.view)).toEqual([OWNER]);
    // Under lead approval the approver may commit the negative outcome, and the owner may re-offer or cancel (issue 12: both are waited on, as the session page says).
    expect(nextActors(meta(SessionState.OPEN), fold.view, ["human:carol"])).toEqual(["human:carol", OWNER]);
    expect(nextActors(meta(SessionState.CANCELLED), fold.view)).toEqual([]);
  });

  it("names the task's assignee", () => {
    const env = (messageType: string, sender: string, payload: Record<string, unknown>) =>
      buildEnvelope({ mode: TASK_MODE, messageType, sessionId: SESSION, sender, payload });
    const fold = new SessionFold(SESSION);
    fold.add(
      env("SessionStart", OWNER, {
        intent: "t",
        participants: [OWNER, TARGET],
        modeVersion: MODE_VERSION,
        configurationVersion: DEFAULT_CONFIGURATION_VERSION,
        policyVersion: "",
        ttlMs: 60_000n,
      }),
    );
    fold.add(env("TaskRequest", OWNER, { taskId: "t1", title: "do it", instructions: "now", requestedAssignee: TARGET }));
    expect(nextActors(meta(SessionState.OPEN), fold.view)).toEqual([TARGET]);
    // Turned down by the one asked: nobody else may take it, so it waits on the requester (cancel, or ask someone else), not on them.
    fold.add(env("TaskReject", TARGET, { taskId: "t1", assignee: TARGET, reason: "no capacity" }));
    expect(nextActors(meta(SessionState.OPEN), fold.view)).toEqual([OWNER]);
  });
});

describe("leanEnvelope", () => {
  it("drops a large context's bytes and keeps the rest", () => {
    const s = handoff();
    const small = s.context("h1", "short");
    expect(leanEnvelope(small)).toBe(small);
    const big = s.context("h1", "x".repeat(10_000));
    const lean = leanEnvelope(big);
    expect(lean.payload.length).toBeLessThan(100);
    const p = fromBinary(HandoffContextPayloadSchema, lean.payload);
    expect(p.handoffId).toBe("h1");
    expect(p.context.length).toBe(0);
    expect(lean.messageId).toBe(big.messageId);
  });
  it("leaves other message types alone", () => {
    const offer = handoff().offer();
    expect(leanEnvelope(offer)).toBe(offer);
  });
});

describe("SessionFold.peek", () => {
  it("shows the current view without ending the batch, and folds the same as one by one", () => {
    const s = handoff();
    const envs = [s.start(), s.offer()];
    for (let i = 0; i < 50; i++) envs.push(s.context("h1", `note ${i}`));
    envs.push(s.accept());
    const fold = new SessionFold(SESSION);
    const phases: string[] = [];
    for (const e of envs) {
      fold.add(e);
      phases.push(fold.peek().phase);
    }
    const contexts = fold.peek().handoff?.offers[0]?.contexts;
    const after = s.context("h1", "after");
    fold.add(after);
    // Within the batch the list grew in place (no copy per envelope).
    expect(fold.peek().handoff?.offers[0]?.contexts).toBe(contexts);
    const oneByOne = [...envs, after].reduce(
      (v, envelope, i) => reduceSession(v, { envelope, sequence: i + 1 }),
      emptySessionView(SESSION),
    );
    expect(fold.view).toStrictEqual(oneByOne);
    expect(phases.at(-1)).toBe("Accepted");
    expect(phases[1]).toBe("OfferPending");
  });
});

describe("status start and detail in the list row", () => {
  const at = (ms: number) => handoff(ms);
  const fold = (envs: Envelope[]): SessionView =>
    envs.reduce((v, envelope, i) => reduceSession(v, { envelope, sequence: i + 1 }), emptySessionView(SESSION, HANDOFF_MODE));
  const m = create(SessionMetadataSchema, { sessionId: SESSION, state: SessionState.OPEN, startedAtUnixMs: 1_000n, initiator: OWNER });

  it("dates the status from the offer; context on the pending offer does not restart it; accept, decline and a new offer do", () => {
    let v = fold([at(1_000).start(), at(2_000).offer(), at(3_000).context()]);
    expect(v.phase).toBe("ContextSharing");
    expect(toSummary(m, v, 3, 10_000).phaseSinceUnixMs).toBe(2_000n);
    v = fold([at(1_000).start(), at(2_000).offer(), at(3_000).context(), at(4_000).decline()]);
    expect(toSummary(m, v, 4, 10_000).phaseSinceUnixMs).toBe(4_000n);
    v = fold([at(1_000).start(), at(2_000).offer(), at(4_000).decline(), at(5_000).offer("h2")]);
    expect(toSummary(m, v, 4, 10_000).phaseSinceUnixMs).toBe(5_000n);
    v = fold([at(1_000).start(), at(2_000).offer(), at(6_000).accept()]);
    expect(toSummary(m, v, 3, 10_000).phaseSinceUnixMs).toBe(6_000n);
  });

  it("clamps an agent's clock to the row's time and to the start", () => {
    const v = fold([at(1_000).start(), at(99_000).offer()]);
    const s = toSummary(m, v, 2, 10_000);
    expect(s.phaseSinceUnixMs).toBe(s.lastActivityUnixMs);
    const early = fold([at(500).start(), at(600).offer()]);
    expect(toSummary(m, early, 2, 10_000).phaseSinceUnixMs).toBe(1_000n);
  });

  it("says an accepted offer awaits approval only when the policy designates approvers", () => {
    const v = fold([at(1_000).start(), at(2_000).offer(), at(3_000).accept()]);
    expect(toSummary(m, v, 3, 10_000).phaseDetail).toBe("");
    expect(toSummary(m, v, 3, 10_000, []).phaseDetail).toBe("");
    expect(toSummary(m, v, 3, 10_000, ["human:carol"]).phaseDetail).toBe("awaiting_approval");
    const committed = fold([at(1_000).start(), at(2_000).offer(), at(3_000).accept(), at(4_000).commit()]);
    expect(toSummary(m, committed, 4, 10_000, ["human:carol"]).phaseDetail).toBe("");
  });
});
