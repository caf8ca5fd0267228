// "Hand off…" against the real console and embedded runtime over gRPC: the
// attempt runner (features/hand-off/hand-off.ts) sends through a signed-in person's
// ActionService client, exactly as the dialog does. The three messages land
// in order as the person; repeating the same attempt makes no second session
// or offer; after a failure at a step, finishing completes it. Failures are
// made by letting a step's call throw before it reaches the console (a lost
// request), or after (a lost answer), around the real client.
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HandoffOutcome, PolicyChoice, type ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HandoffContextPayloadSchema, HandoffOfferPayloadSchema } from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import { SessionStartPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import {
  isComplete,
  newProgress,
  progressSentence,
  runHandOff,
  stepMessageId,
  type HandOffPlan,
  type HandOffSender,
  type HandOffStep,
} from "@/features/hand-off/hand-off";
import { validateHandOff } from "@/lib/client/action-forms";
import { clientFor, collectEnvelopes } from "./harness";
import { signedIn, startTestConsole, uuid, type Browser, type Person, type TestConsole } from "./actions-harness";

const PEOPLE: Person[] = [
  { username: "alice", role: "operator", name: "Alice Ng" },
  { username: "bob", role: "operator", name: "Bob Ito" },
  { username: "carol", role: "approver", name: "Carol Lee" },
  { username: "dave", role: "operator", name: "Dave Park" },
  { username: "erin", role: "operator", name: "Erin Cho" },
];
/** The steps of a hand-off with a runbook (no escalation here: tests/integration/escalation.test.ts). */
const STEPS = ["start", "offer", "context"] as const satisfies readonly HandOffStep[];
const RUNBOOK = "# Payments on-call\n\n1. Check the dashboards.\n2. Page the DB team for replication lag.\n";

let tc: TestConsole;
let alice: Browser;

beforeAll(async () => {
  tc = await startTestConsole(PEOPLE);
  alice = await signedIn(tc, "alice");
});

afterAll(async () => {
  await tc?.close();
});

function planFor(runbook = RUNBOOK, rotation: string[] = []): HandOffPlan {
  const checked = validateHandOff(
    {
      target: "human:bob",
      rotation,
      scope: "payments-api primary on-call",
      reason: "end of my rotation",
      runbook,
      ttlMinutes: "60",
      policy: "approval",
      approvers: ["human:carol"],
      implicitAcceptSeconds: "300",
    },
    "human:alice",
    1_048_576,
  );
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return { attemptId: uuid(), ...checked.value };
}

/** Alice's real ActionService client; `lose` makes a step's call fail once, before sending or after the answer. */
function sender(lose: Partial<Record<HandOffStep, "request" | "answer">> = {}): HandOffSender & { sent: HandOffStep[] } {
  const client = alice.actions();
  const sent: HandOffStep[] = [];
  const wrap = async <T>(step: HandOffStep, call: () => Promise<T>): Promise<T> => {
    const how = lose[step];
    delete lose[step];
    if (how === "request") throw new Error("Failed to fetch");
    const r = await call();
    sent.push(step);
    if (how === "answer") throw new Error("Failed to fetch");
    return r;
  };
  return {
    sent,
    startSession: (req) => wrap("start", () => client.startSession(req)),
    offer: (req) => wrap("offer", () => client.offer(req)),
    attachContext: (req) => wrap("context", () => client.attachContext(req)),
    startEscalation: (req) => wrap("escalate", () => client.startEscalation(req)),
  };
}

async function history(sessionId: string, atLeast: number): Promise<Envelope[]> {
  const rt = tc.console.runtime;
  if (!rt) throw new Error("no embedded runtime");
  // Ask for one more than expected: a second offer or context would show up.
  return collectEnvelopes(clientFor({ url: rt.url }, "baton:console"), sessionId, atLeast + 1, { timeoutMs: 1_000 });
}

function sessionCount(): number {
  const rt = tc.console.runtime;
  if (!rt) throw new Error("no embedded runtime");
  return rt.kernel.listSessions().length;
}

function expectHandOff(envs: Envelope[], plan: HandOffPlan): void {
  expect(envs.map((e) => e.messageType)).toEqual(["SessionStart", "HandoffOffer", "HandoffContext"]);
  expect(envs.map((e) => e.sender)).toEqual(["human:alice", "human:alice", "human:alice"]);
  expect(envs.map((e) => e.messageId)).toEqual(STEPS.map((s) => stepMessageId(plan.attemptId, s)));
  const start = fromBinary(SessionStartPayloadSchema, envs[0]!.payload);
  expect(start.intent).toBe("payments-api primary on-call");
  expect([...start.participants].sort()).toEqual(["human:alice", "human:bob", "human:carol"]);
  expect(start.policyVersion).toMatch(/^policy\.baton\.lead-approval\./);
  const offer = fromBinary(HandoffOfferPayloadSchema, envs[1]!.payload);
  expect(offer).toMatchObject({
    handoffId: stepMessageId(plan.attemptId, "offer"),
    targetParticipant: "human:bob",
    scope: "payments-api primary on-call",
    reason: "end of my rotation",
  });
  const ctx = fromBinary(HandoffContextPayloadSchema, envs[2]!.payload);
  expect(ctx.handoffId).toBe(offer.handoffId);
  expect(ctx.contentType).toBe("text/markdown; charset=utf-8");
  expect(new TextDecoder().decode(ctx.context)).toBe(RUNBOOK);
}

describe("Hand off… over the real runtime", () => {
  it("sends SessionStart, Offer and the runbook in order as the person; the same attempt again makes no second session or offer", async () => {
    const plan = planFor();
    const before = sessionCount();
    const p = await runHandOff(plan, newProgress(plan.attemptId), sender());
    expect(p.failed).toBeUndefined();
    expect(isComplete(plan, p)).toBe(true);
    expectHandOff(await history(p.sessionId, 3), plan);

    // The whole attempt again, as after a reload that lost the answers: all duplicates.
    const again = await runHandOff(plan, newProgress(plan.attemptId), sender());
    expect(again.sessionId).toBe(p.sessionId);
    expect(again.duplicates).toEqual(["start", "offer", "context"]);
    expect(progressSentence(plan, again, "Bob Ito")).toMatch(/nothing was sent twice/);
    expect(sessionCount()).toBe(before + 1);
    expectHandOff(await history(p.sessionId, 3), plan);
  });

  for (const step of STEPS) {
    for (const lost of ["request", "answer"] as const) {
      it(`finishes after the ${lost} of the ${step} step was lost`, async () => {
        const plan = planFor();
        const before = sessionCount();
        const s = sender({ [step]: lost });
        const first = await runHandOff(plan, newProgress(plan.attemptId), s);
        expect(first.failed?.step).toBe(step);
        expect(first.failed?.outcome.kind).toBe("retryable");
        if (step === "context")
          expect(progressSentence(plan, first, "Bob")).toMatch(/^Session started\. Offer sent\. Runbook not attached: /);

        const finished = await runHandOff(plan, first, s);
        expect(finished.failed).toBeUndefined();
        expect(isComplete(plan, finished)).toBe(true);
        // A lost answer means the step did arrive: finishing re-sent it and the runtime called it a duplicate.
        expect(finished.duplicates).toEqual(lost === "answer" ? [step] : []);
        expect(sessionCount()).toBe(before + 1);
        expectHandOff(await history(finished.sessionId, 3), plan);
      });
    }
  }
});

function ok(r: ActionResult): ActionResult {
  if (!r.ok) throw new Error(`refused: ${r.code} ${r.message}`);
  return r;
}

describe("Hand off… with more people on the rotation (issue 12: bob declines, alice re-offers to dave)", () => {
  it("puts them in the session, so the owner's re-offer to one of them is accepted and approved", async () => {
    const [bob, dave, carol, erin] = await Promise.all(["bob", "dave", "carol", "erin"].map((u) => signedIn(tc, u)));
    const plan = planFor(RUNBOOK, ["human:dave"]);
    expect(plan.start.participants).toEqual(["human:bob", "human:dave"]);
    const p = await runHandOff(plan, newProgress(plan.attemptId), sender());
    expect(p.failed).toBeUndefined();
    const sid = p.sessionId;
    // The extra participant reached the runtime's SessionStart; the offer still goes to bob alone.
    const [start, offer] = await history(sid, 3);
    expect([...fromBinary(SessionStartPayloadSchema, start!.payload).participants].sort()).toEqual([
      "human:alice",
      "human:bob",
      "human:carol",
      "human:dave",
    ]);
    expect(fromBinary(HandoffOfferPayloadSchema, offer!.payload).targetParticipant).toBe("human:bob");

    ok(await bob!.actions().decline({ sessionId: sid, messageId: uuid(), reason: "on leave next week" }));
    // Erin is not on the rotation: not a participant, so the protocol refuses an offer to her…
    const toErin = await alice
      .actions()
      .offer({ sessionId: sid, messageId: uuid(), target: "human:erin", scope: "payments-api primary on-call" })
      .then(
        (r) => (r.ok ? "sent" : `${r.code} ${r.message}`),
        (e: Error) => e.message,
      );
    expect(toErin).not.toBe("sent");
    expect(toErin).toMatch(/participant/i);
    // …and she cannot answer for the session.
    expect(
      await erin!
        .actions()
        .accept({ sessionId: sid, messageId: uuid() })
        .then(
          (r) => r.ok,
          () => false,
        ),
    ).toBe(false);
    // Dave is: the re-offer to him is accepted, and carol approves.
    ok(await alice.actions().offer({ sessionId: sid, messageId: uuid(), target: "human:dave", scope: "payments-api primary on-call" }));
    ok(await dave!.actions().accept({ sessionId: sid, messageId: uuid(), reason: "dashboards checked" }));
    const committed = ok(
      await carol!.actions().commit({ sessionId: sid, messageId: uuid(), outcome: HandoffOutcome.ACCEPTED, reason: "approved" }),
    );
    expect(committed.sessionState).toBe(SessionState.RESOLVED);
    const envs = await history(sid, 7);
    expect(envs.map((e) => [e.messageType, e.sender])).toEqual([
      ["SessionStart", "human:alice"],
      ["HandoffOffer", "human:alice"],
      ["HandoffContext", "human:alice"],
      ["HandoffDecline", "human:bob"],
      ["HandoffOffer", "human:alice"],
      ["HandoffAccept", "human:dave"],
      ["Commitment", "human:carol"],
    ]);
  });

  it("refuses, naming the field, a rotation the gateway does not accept (an unknown person)", async () => {
    const plan = planFor(RUNBOOK, ["human:zed"]);
    const r = await runHandOff(plan, newProgress(plan.attemptId), sender());
    expect(r.failed?.step).toBe("start");
    expect(r.failed?.outcome).toMatchObject({ kind: "invalid", field: "participants[1]" });
  });
});

describe("Hand off… templates over the ActionService", () => {
  it("saves, lists and deletes, each person only their own, CSRF checked", async () => {
    const bob = await signedIn(tc, "bob");
    const saved = await alice.actions().saveHandoffTemplate({
      template: {
        name: "Payments weekly",
        target: "human:bob",
        scope: "payments-api primary on-call",
        runbookMarkdown: RUNBOOK,
        policy: PolicyChoice.LEAD_APPROVAL,
        approvers: ["human:carol"],
        ttlMs: 3_600_000,
        participants: ["human:dave", "human:bob"],
      },
    });
    expect(saved.template?.id).toMatch(/^[0-9a-f-]{36}$/);
    const mine = await alice.actions().listHandoffTemplates({});
    expect(mine.templates.map((t) => [t.name, t.runbookMarkdown, t.approvers, t.participants])).toEqual([
      ["Payments weekly", RUNBOOK, ["human:carol"], ["human:dave"]],
    ]);
    await expect(
      alice.actions().saveHandoffTemplate({ template: { name: "Bad rotation", scope: "x", participants: ["has space"] } }),
    ).rejects.toThrow(/template\.participants\[0\]/);
    expect(mine.maxTemplates).toBe(20);
    expect((await bob.actions().listHandoffTemplates({})).templates).toEqual([]);
    expect((await bob.actions().deleteHandoffTemplate({ id: saved.template!.id })).deleted).toBe(false);
    await expect(alice.actions().saveHandoffTemplate({ template: { name: "", scope: "x" } })).rejects.toThrow(/template\.name/);
    const csrfless = await signedIn(tc, "alice");
    csrfless.csrfOverride = "";
    await expect(csrfless.actions().deleteHandoffTemplate({ id: saved.template!.id })).rejects.toThrow(/CSRF/);
    expect((await alice.actions().deleteHandoffTemplate({ id: saved.template!.id })).deleted).toBe(true);
    expect((await alice.actions().listHandoffTemplates({})).templates).toEqual([]);
  });
});
