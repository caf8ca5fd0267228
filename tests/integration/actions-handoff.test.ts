// A lead-approval rotation and context uploads, driven by signed-in people through the ActionService
// against the real console and embedded runtime.
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { FieldViolationSchema, HandoffOutcome, InboxItemKind, PolicyChoice, SessionKind } from "@/lib/gen/baton/v1/actions_pb";
import { CommitmentPayloadSchema, SessionStartPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import { HandoffContextPayloadSchema } from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { fromBinary } from "@bufbuild/protobuf";
import { waitFor } from "./harness";
import { uuid, watchInbox } from "./actions-harness";
import { alice, bob, carol, dave, erin, history, ok, refusal, startRotation, useTestConsole, victor } from "./__fixtures__/actions-kit";

useTestConsole();

const RUNBOOK = "# Payments on-call\n\n1. Check the dashboards.\n2. Page the DB team for replication lag.\n";

describe("a rotation that needs the lead's approval, driven by people", () => {
  it("offer with a runbook → decline → re-offer → accept → the owner and another approver are refused → the designated approver commits", async () => {
    const sid = await startRotation();
    const bobInbox = watchInbox(bob);
    const carolInbox = watchInbox(carol);
    const aliceInbox = watchInbox(alice);
    try {
      const offer1 = ok(await alice.actions().offer({ sessionId: sid, messageId: uuid(), target: "human:bob", reason: "end of my week" }));
      expect(offer1.handoffId).toBe(offer1.messageId);
      ok(await alice.actions().attachContext({ sessionId: sid, messageId: uuid(), content: { case: "markdown", value: RUNBOOK } }));

      // Bob's inbox shows the pending offer…
      await waitFor(
        () => bobInbox.latest?.some((i) => i.sessionId === sid && i.kind === InboxItemKind.OFFER) === true,
        5_000,
        "bob's offer in his inbox",
      );
      const item = bobInbox.latest?.find((i) => i.sessionId === sid);
      expect(item).toMatchObject({ fromParticipant: "human:alice", scope: "payments on-call", subjectId: offer1.handoffId });
      expect(item?.summary).toBe("Alice Ng offered you payments on-call.");
      // Carol, the approver, is told now (ahead, not counted), before Bob answers.
      await waitFor(() => carolInbox.latestAhead?.some((i) => i.sessionId === sid) === true, 5_000, "the approval ahead in carol's inbox");
      expect(carolInbox.latestAhead?.find((i) => i.sessionId === sid)).toMatchObject({
        kind: InboxItemKind.APPROVAL_AHEAD,
        fromParticipant: "human:alice",
        subjectId: offer1.handoffId,
        asApprover: true,
        summary: "Alice Ng offered payments on-call to Bob Ito; your approval comes next, once Bob Ito answers.",
      });
      expect(carolInbox.latest?.some((i) => i.sessionId === sid)).toBe(false);

      // …and it clears once he answers.
      ok(await bob.actions().decline({ sessionId: sid, messageId: uuid(), reason: "on leave next week" }));
      await waitFor(() => bobInbox.latest !== undefined && !bobInbox.latest.some((i) => i.sessionId === sid), 5_000, "bob's inbox cleared");
      expect(bobInbox.error).toBeNull();
      // A declined offer that nobody re-offered yet: nothing is ahead of Carol (the owner decides next).
      await waitFor(
        () => carolInbox.latestAhead !== undefined && !carolInbox.latestAhead.some((i) => i.sessionId === sid),
        5_000,
        "carol's approval ahead cleared",
      );
      expect(carolInbox.error).toBeNull();
      // Alice, who may not commit under lead approval, is told it is back with her (issue 12, problem 3).
      await waitFor(
        () => aliceInbox.latest?.some((i) => i.sessionId === sid && i.kind === InboxItemKind.DECLINED) === true,
        5_000,
        "the declined offer in alice's inbox",
      );
      expect(aliceInbox.latest?.find((i) => i.sessionId === sid)).toMatchObject({
        fromParticipant: "human:bob",
        subjectId: offer1.handoffId,
        summary: "Bob Ito declined payments on-call; offer it to someone else or cancel the handoff.",
      });

      // Her re-offer takes it out of her inbox.
      ok(await alice.actions().offer({ sessionId: sid, messageId: uuid(), target: "human:dave" }));
      await waitFor(
        () => aliceInbox.latest !== undefined && !aliceInbox.latest.some((i) => i.sessionId === sid),
        5_000,
        "alice's inbox cleared by the re-offer",
      );
      expect(aliceInbox.error).toBeNull();
    } finally {
      await bobInbox.stop();
      await carolInbox.stop();
      await aliceInbox.stop();
    }

    ok(await dave.actions().accept({ sessionId: sid, messageId: uuid(), reason: "dashboards checked" }));

    // Alice owns the session, but its lead-approval policy designates Carol.
    const byAlice = await refusal(alice.actions().commit({ sessionId: sid, messageId: uuid(), outcome: HandoffOutcome.ACCEPTED }));
    expect(byAlice.code).toBe(Code.PermissionDenied);
    expect(byAlice.rawMessage).toBe("This handoff needs approval from Carol Lee.");
    // Erin is an approver, but the policy names Carol.
    const byErin = await refusal(erin.actions().commit({ sessionId: sid, messageId: uuid(), outcome: HandoffOutcome.ACCEPTED }));
    expect(byErin.code).toBe(Code.PermissionDenied);
    expect(byErin.rawMessage).toBe("This handoff needs approval from Carol Lee.");
    expect(byErin.metadata.get("x-baton-deny")).toBe("authority");

    const committed = ok(
      await carol.actions().commit({ sessionId: sid, messageId: uuid(), outcome: HandoffOutcome.ACCEPTED, reason: "approved for week 32" }),
    );
    expect(committed.sessionState).toBe(SessionState.RESOLVED);

    // What the runtime recorded: every sender is the signed-in person's own id.
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
    const start = fromBinary(SessionStartPayloadSchema, (envs[0] as Envelope).payload);
    expect(start.participants).toEqual(["human:alice", "human:bob", "human:dave", "human:carol"]);
    expect(start.policyVersion).toBe((await alice.console().getSessionSummary({ sessionId: sid })).summary?.metadata?.policyVersion);
    expect(new TextDecoder().decode(start.extensions["baton.frozen_context"])).toBe('{"incident":null,"week":32}');
    const ctx = fromBinary(HandoffContextPayloadSchema, (envs[2] as Envelope).payload);
    expect(ctx.contentType).toBe("text/markdown; charset=utf-8");
    expect(new TextDecoder().decode(ctx.context)).toBe(RUNBOOK);
    const commitment = fromBinary(CommitmentPayloadSchema, (envs[6] as Envelope).payload);
    expect(commitment).toMatchObject({
      action: "handoff.accepted",
      outcomePositive: true,
      authorityScope: "payments on-call",
      modeVersion: "1.0.0",
    });
    expect(commitment.reason).toBe("approved for week 32 (new owner: human:dave)");
    expect(commitment.policyVersion).toBe(start.policyVersion);

    const summary = (await victor.console().getSessionSummary({ sessionId: sid })).summary;
    expect(summary).toMatchObject({ phase: "Committed", currentOwner: "human:dave", outcome: "positive" });
  });

  it("the owner who may not commit is told, not asked: her offer accepted, then committed by the approver (issue 12, item 5)", async () => {
    const sid = await startRotation();
    const aliceInbox = watchInbox(alice);
    try {
      ok(await alice.actions().offer({ sessionId: sid, messageId: uuid(), target: "human:bob" }));
      ok(await bob.actions().accept({ sessionId: sid, messageId: uuid(), reason: "I can take it" }));
      await waitFor(
        () => aliceInbox.latestNews?.some((i) => i.sessionId === sid && i.kind === InboxItemKind.ACCEPTED) === true,
        5_000,
        "the accepted offer in alice's news",
      );
      expect(aliceInbox.latestNews?.find((i) => i.sessionId === sid)).toMatchObject({
        fromParticipant: "human:bob",
        summary: "Bob Ito accepted payments on-call; the approver commits it, nothing to do for you.",
      });
      // News is not something waiting on her.
      expect(aliceInbox.latest?.some((i) => i.sessionId === sid)).toBe(false);

      ok(await carol.actions().commit({ sessionId: sid, messageId: uuid(), outcome: HandoffOutcome.ACCEPTED, reason: "approved" }));
      await waitFor(
        () => aliceInbox.latestNews?.some((i) => i.sessionId === sid && i.kind === InboxItemKind.CLOSED) === true,
        5_000,
        "the commitment in alice's news",
      );
      const told = aliceInbox.latestNews?.filter((i) => i.sessionId === sid) ?? [];
      expect(told.map((i) => [InboxItemKind[i.kind], i.summary])).toEqual([
        ["CLOSED", "Bob Ito now holds payments on-call: the handoff is committed."],
      ]);
      expect(aliceInbox.latest?.some((i) => i.sessionId === sid)).toBe(false);
      expect(aliceInbox.error).toBeNull();
    } finally {
      await aliceInbox.stop();
    }
  });

  it("the designated approver rejects an accepted offer: a negative commitment, and the owner keeps it (issue 12, item 6)", async () => {
    const sid = await startRotation();
    ok(await alice.actions().offer({ sessionId: sid, messageId: uuid(), target: "human:bob" }));
    ok(await bob.actions().accept({ sessionId: sid, messageId: uuid(), reason: "I can take it" }));
    const policyId = (await alice.console().getSessionSummary({ sessionId: sid })).summary?.metadata?.policyVersion ?? "";
    // What the approver's Reject sends (features/session/actions/ApprovalForm.tsx): the negative
    // outcome, the authority scope from the bound policy, the prefilled reason.
    const rejected = ok(
      await carol.actions().commit({
        sessionId: sid,
        messageId: uuid(),
        outcome: HandoffOutcome.DECLINED,
        authorityScope: `approver under ${policyId}`,
        reason: "Rejected: Alice Ng (human:alice) keeps payments on-call.",
      }),
    );
    expect(rejected.sessionState).toBe(SessionState.RESOLVED);
    const envs = await history(sid, 5);
    expect(envs.map((e) => [e.messageType, e.sender])).toEqual([
      ["SessionStart", "human:alice"],
      ["HandoffOffer", "human:alice"],
      ["HandoffAccept", "human:bob"],
      ["Commitment", "human:carol"],
    ]);
    const commitment = fromBinary(CommitmentPayloadSchema, (envs[3] as Envelope).payload);
    expect(commitment).toMatchObject({ action: "handoff.declined", outcomePositive: false, authorityScope: `approver under ${policyId}` });
    expect(commitment.reason).toContain("Rejected: Alice Ng (human:alice) keeps payments on-call.");
    await waitFor(
      async () => (await victor.console().getSessionSummary({ sessionId: sid })).summary?.phase === "Committed",
      5_000,
      "the catalog's row committed",
    );
    const summary = (await victor.console().getSessionSummary({ sessionId: sid })).summary;
    expect(summary).toMatchObject({ currentOwner: "human:alice", outcome: "negative" });
  });

  it("reuses the registered approval policy for the same approvers", async () => {
    const a = ok(
      await alice.actions().startSession({
        messageId: uuid(),
        kind: SessionKind.HANDOFF,
        intent: "one",
        participants: ["human:bob"],
        policy: PolicyChoice.LEAD_APPROVAL,
        approvers: ["human:carol"],
      }),
    );
    const b = ok(
      await bob.actions().startSession({
        messageId: uuid(),
        kind: SessionKind.HANDOFF,
        intent: "two",
        participants: ["human:dave"],
        policy: PolicyChoice.LEAD_APPROVAL,
        approvers: ["human:carol"],
      }),
    );
    expect(a.policyId).toBe(b.policyId);
    const c = ok(
      await bob.actions().startSession({
        messageId: uuid(),
        kind: SessionKind.HANDOFF,
        intent: "three",
        participants: ["human:dave"],
        policy: PolicyChoice.LEAD_APPROVAL,
        approvers: ["human:carol", "human:erin"],
      }),
    );
    expect(c.policyId).not.toBe(a.policyId);
  });
});

describe("context uploads", () => {
  it("takes files up to the runtime's payload limit and names the field beyond it", async () => {
    const sid = await startRotation();
    ok(await alice.actions().offer({ sessionId: sid, messageId: uuid(), target: "human:bob" }));
    const pdf = new Uint8Array(512 * 1024).fill(7);
    const small = ok(
      await alice.actions().attachContext({
        sessionId: sid,
        messageId: uuid(),
        content: { case: "file", value: { contentType: "application/pdf", data: pdf } },
      }),
    );
    expect(small.handoffId).not.toBe("");
    ok(
      await alice
        .actions()
        .attachContext({ sessionId: sid, messageId: uuid(), content: { case: "link", value: "https://wiki.example/runbooks/payments" } }),
    );
    const big = new Uint8Array(1_048_576).fill(7);
    const err = await refusal(
      alice.actions().attachContext({
        sessionId: sid,
        messageId: uuid(),
        content: { case: "file", value: { contentType: "application/pdf", data: big } },
      }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.findDetails(FieldViolationSchema)[0]?.field).toBe("content.file.data");
    expect(err.rawMessage).toContain("at most 1048576 bytes");
    // Only the owner's own offers take context.
    const byBob = await refusal(
      bob.actions().attachContext({ sessionId: sid, messageId: uuid(), content: { case: "markdown", value: "notes" } }),
    );
    expect(byBob.code).toBe(Code.PermissionDenied);
    const envs = await history(sid, 4);
    expect(envs.map((e) => e.messageType)).toEqual(["SessionStart", "HandoffOffer", "HandoffContext", "HandoffContext"]);
    expect(fromBinary(HandoffContextPayloadSchema, (envs[3] as Envelope).payload).contentType).toBe("text/uri-list");
  });
});
