import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ActionResultSchema, PolicyChoice, SessionKind, type ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import {
  HAND_OFF_STEPS,
  stepsOf,
  isComplete,
  isPartial,
  newProgress,
  progressLines,
  progressSentence,
  runHandOff,
  stepMessageId,
  type HandOffPlan,
  type HandOffSender,
  type HandOffStep,
} from "@/features/hand-off/hand-off";

/** The steps of a hand-off with a runbook and no escalation. */
const STEPS = ["start", "offer", "context"] as const satisfies readonly HandOffStep[];
const ATTEMPT = "3f0c2a4e-9b1d-4c6e-8a2f-1b2c3d4e5f60";

function plan(runbook = "# Runbook\n\n1. Check the dashboards."): HandOffPlan {
  return {
    attemptId: ATTEMPT,
    start: {
      kind: SessionKind.HANDOFF,
      intent: "payments-api primary on-call",
      scope: "payments-api primary on-call",
      participants: ["human:bob"],
      ttlMs: 3_600_000,
      policy: PolicyChoice.DEFAULT,
      approvers: [],
      implicitAcceptTimeoutMs: 0,
      frozenContextJson: "",
    },
    offer: { target: "human:bob", scope: "payments-api primary on-call", reason: "end of my rotation" },
    runbook,
  };
}

interface Call {
  step: HandOffStep;
  req: Record<string, unknown>;
}

/**
 * A sender that behaves like the console for ids: a message id it has
 * accepted before is answered as a duplicate; `fail` makes a step throw
 * (network) or be refused, as many times as asked.
 */
function fakeSender(fail: Partial<Record<HandOffStep, { times: number; how: "network" | "refused" | "csrf" }>> = {}) {
  const calls: Call[] = [];
  const accepted = new Set<string>();
  const sessions = new Set<string>();
  const left = Object.fromEntries(Object.entries(fail).map(([k, v]) => [k, v.times])) as Partial<Record<HandOffStep, number>>;
  const answer = (step: HandOffStep, req: Record<string, unknown>, sessionId: string): ActionResult => {
    calls.push({ step, req });
    const f = fail[step];
    if (f && (left[step] ?? 0) > 0) {
      left[step] = (left[step] ?? 0) - 1;
      if (f.how === "network") throw new ConnectError("Failed to fetch", Code.Unavailable);
      if (f.how === "csrf") throw new ConnectError("stale token", Code.PermissionDenied, new Headers({ "x-baton-deny": "csrf" }));
      return create(ActionResultSchema, { ok: false, code: "SESSION_NOT_OPEN", explanation: "The session is closed.", sessionId });
    }
    const id = req.messageId as string;
    const duplicate = accepted.has(id);
    accepted.add(id);
    if (step === "start") sessions.add(sessionId);
    return create(ActionResultSchema, { ok: true, duplicate, sessionId, messageId: id });
  };
  const sender: HandOffSender = {
    startSession: async (req) => answer("start", req as unknown as Record<string, unknown>, `s-${req.messageId}`),
    offer: async (req) => answer("offer", req, req.sessionId),
    attachContext: async (req) => answer("context", req as unknown as Record<string, unknown>, req.sessionId),
    startEscalation: async (req) => {
      const r = await answer("escalate", req as unknown as Record<string, unknown>, req.sessionId);
      if (!r.ok) throw new ConnectError(r.explanation, Code.FailedPrecondition);
      return { originSessionId: r.sessionId };
    },
  };
  return { sender, calls, sessions };
}

describe("stepMessageId", () => {
  it("is deterministic, a UUID v4, and different for each step", () => {
    const ids = HAND_OFF_STEPS.map((s) => stepMessageId(ATTEMPT, s));
    expect(new Set(ids).size).toBe(HAND_OFF_STEPS.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(HAND_OFF_STEPS.map((s) => stepMessageId(ATTEMPT.toUpperCase(), s))).toEqual(ids);
    expect(ids).not.toContain(ATTEMPT);
    expect(stepMessageId("00000000-0000-4000-8000-0000000000ff", "offer")).toBe("00000000-0000-4000-8000-0000000000fd");
  });
  it("refuses an attempt id that is not a UUID v4", () => {
    expect(() => stepMessageId("not-a-uuid", "start")).toThrow(/UUID v4/);
  });
});

describe("runHandOff", () => {
  it("sends SessionStart, Offer, then Context, with the attempt's ids and the new session's id", async () => {
    const { sender, calls } = fakeSender();
    const p = await runHandOff(plan(), newProgress(ATTEMPT), sender);
    expect(calls.map((c) => c.step)).toEqual(["start", "offer", "context"]);
    expect(calls.map((c) => c.req.messageId)).toEqual(STEPS.map((s) => stepMessageId(ATTEMPT, s)));
    const sid = `s-${stepMessageId(ATTEMPT, "start")}`;
    expect(calls[1]?.req).toMatchObject({
      sessionId: sid,
      target: "human:bob",
      scope: "payments-api primary on-call",
      reason: "end of my rotation",
    });
    // The runbook goes to this attempt's offer, named by its id, not "the latest offer".
    expect(calls[2]?.req).toMatchObject({
      sessionId: sid,
      handoffId: stepMessageId(ATTEMPT, "offer"),
      content: { case: "markdown", value: plan().runbook },
    });
    expect(p).toMatchObject({ sessionId: sid, done: ["start", "offer", "context"], duplicates: [] });
    expect(p.failed).toBeUndefined();
    expect(isComplete(plan(), p)).toBe(true);
    expect(progressSentence(plan(), p, "Bob Ito")).toBe("Handed off to Bob Ito: offer sent with the runbook.");
  });

  it("sends two messages when there is no runbook", async () => {
    const { sender, calls } = fakeSender();
    const p = await runHandOff(plan(""), newProgress(ATTEMPT), sender);
    expect(calls.map((c) => c.step)).toEqual(["start", "offer"]);
    expect(isComplete(plan(""), p)).toBe(true);
    expect(progressSentence(plan(""), p, "Bob Ito")).toBe("Handed off to Bob Ito: offer sent.");
  });

  it("repeating a whole attempt re-sends the same envelopes, answered as duplicates: one session, one offer", async () => {
    const { sender, calls, sessions } = fakeSender();
    await runHandOff(plan(), newProgress(ATTEMPT), sender);
    const again = await runHandOff(plan(), newProgress(ATTEMPT), sender);
    expect(calls.map((c) => c.req.messageId)).toEqual([...STEPS, ...STEPS].map((s) => stepMessageId(ATTEMPT, s)));
    expect(sessions.size).toBe(1);
    expect(again.duplicates).toEqual(["start", "offer", "context"]);
    expect(progressSentence(plan(), again, "Bob Ito")).toMatch(/nothing was sent twice/);
  });

  for (const step of STEPS) {
    it(`stops at a failed ${step}, says what was sent and what was not, and finishes from there`, async () => {
      const { sender, calls } = fakeSender({ [step]: { times: 1, how: "network" } });
      const first = await runHandOff(plan(), newProgress(ATTEMPT), sender);
      const order = STEPS.slice(0, STEPS.indexOf(step) + 1);
      expect(calls.map((c) => c.step)).toEqual(order);
      expect(first.failed?.step).toBe(step);
      expect(first.failed?.outcome.kind).toBe("retryable");
      expect(first.done).toEqual(STEPS.slice(0, STEPS.indexOf(step)));
      expect(isPartial(plan(), first)).toBe(step !== "start");
      const lines = progressLines(plan(), first);
      expect(lines.find((l) => l.step === step)?.state).toBe("failed");
      if (step === "context") {
        expect(progressSentence(plan(), first, "Bob")).toMatch(
          /^Session started\. Offer sent\. Runbook not attached: No connection to the console server\./,
        );
      }
      if (step === "start") expect(progressSentence(plan(), first, "Bob")).toMatch(/^Session not started: /);

      const finished = await runHandOff(plan(), first, sender);
      // Only what was not done is sent again, with the same id as before.
      const retried = calls.slice(order.length);
      expect(retried.map((c) => c.step)).toEqual(STEPS.slice(STEPS.indexOf(step)));
      expect(retried[0]?.req.messageId).toBe(stepMessageId(ATTEMPT, step));
      expect(finished.failed).toBeUndefined();
      expect(finished.done).toEqual([...STEPS]);
      expect(isComplete(plan(), finished)).toBe(true);
    });
  }

  it("says the runtime's refusal with its code", async () => {
    const { sender } = fakeSender({ context: { times: 1, how: "refused" } });
    const p = await runHandOff(plan(), newProgress(ATTEMPT), sender);
    expect(progressSentence(plan(), p, "Bob")).toBe(
      "Session started. Offer sent. Runbook not attached: The runtime refused it: SESSION_NOT_OPEN. The session is closed.",
    );
  });

  it("refreshes a stale CSRF token and retries the step once with the same id", async () => {
    const { sender, calls } = fakeSender({ offer: { times: 1, how: "csrf" } });
    let refreshed = 0;
    const p = await runHandOff(plan(), newProgress(ATTEMPT), sender, { refreshCsrf: async () => void (refreshed += 1) });
    expect(refreshed).toBe(1);
    expect(calls.map((c) => c.step)).toEqual(["start", "offer", "offer", "context"]);
    expect(calls[1]?.req.messageId).toBe(calls[2]?.req.messageId);
    expect(isComplete(plan(), p)).toBe(true);
  });

  it("refuses progress of another attempt", async () => {
    const { sender } = fakeSender();
    await expect(runHandOff(plan(), newProgress("11111111-1111-4111-8111-111111111111"), sender)).rejects.toThrow(
      /another hand-off attempt/,
    );
  });

  it("sets up the escalation last, with the attempt's id; a lost answer is finished with the same chain", async () => {
    const chain = [
      { kind: "notify" as const, afterMinutes: 15, participants: ["human:carol"] },
      { kind: "reoffer" as const, afterMinutes: 15, participants: ["human:dave"] },
    ];
    const withChain = { ...plan(), escalation: chain };
    const { sender, calls } = fakeSender({ escalate: { times: 1, how: "network" } });
    const first = await runHandOff(withChain, newProgress(ATTEMPT), sender);
    expect(calls.map((c) => c.step)).toEqual(["start", "offer", "context", "escalate"]);
    expect(first.failed?.step).toBe("escalate");
    expect(progressSentence(withChain, first, "Bob")).toMatch(/^Session started\. Offer sent\. Runbook attached\. Escalation not set up: /);
    const done = await runHandOff(withChain, first, sender);
    expect(calls.slice(4).map((c) => c.step)).toEqual(["escalate"]);
    expect(calls[4]?.req).toMatchObject({ sessionId: done.sessionId, messageId: stepMessageId(ATTEMPT, "escalate") });
    expect((calls[4]?.req.steps as { participants: string[] }[]).map((x) => x.participants)).toEqual([["human:carol"], ["human:dave"]]);
    expect(isComplete(withChain, done)).toBe(true);
    expect(stepsOf(plan())).not.toContain("escalate");
  });
});
