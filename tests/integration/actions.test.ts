// Signed-in people driving handoffs and tasks through the ActionService, end
// to end: the real console server and embedded runtime (dev auth, memory
// only), people from a users file, browsers with a cookie and CSRF token, and
// the session history read back from the runtime.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FieldViolationSchema,
  HandoffOutcome,
  InboxItemKind,
  PolicyChoice,
  SessionKind,
  TaskOutcome,
  type ActionResult,
} from "@/lib/gen/baton/v1/actions_pb";
import { CommitmentPayloadSchema, SessionStartPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import { HandoffContextPayloadSchema, HandoffOfferPayloadSchema } from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { TaskRequestPayloadSchema } from "@/lib/gen/macp/modes/task/v1/task_pb";
import { fromBinary } from "@bufbuild/protobuf";
import { clientFor, collectEnvelopes, waitFor } from "./harness";
import { Browser, signedIn, startTestConsole, uuid, watchInbox, type Person, type TestConsole } from "./actions-harness";

const PEOPLE: Person[] = [
  { username: "alice", role: "operator", name: "Alice Ng" },
  { username: "bob", role: "operator", name: "Bob Ito" },
  { username: "carol", role: "approver", name: "Carol Lee" },
  { username: "dave", role: "operator", name: "Dave Park" },
  { username: "erin", role: "approver", name: "Erin Diaz" },
  { username: "victor", role: "viewer", name: "Victor Viewer" },
];
const RUNBOOK = "# Payments on-call\n\n1. Check the dashboards.\n2. Page the DB team for replication lag.\n";

let tc: TestConsole;
let alice: Browser;
let bob: Browser;
let carol: Browser;
let dave: Browser;
let erin: Browser;
let victor: Browser;

beforeAll(async () => {
  tc = await startTestConsole(PEOPLE);
  [alice, bob, carol, dave, erin, victor] = await Promise.all([
    signedIn(tc, "alice"),
    signedIn(tc, "bob"),
    signedIn(tc, "carol"),
    signedIn(tc, "dave"),
    signedIn(tc, "erin"),
    signedIn(tc, "victor"),
  ]);
});

afterAll(async () => {
  await tc?.close();
});

/** The accepted history of a session, read directly from the runtime as an observer would. */
async function history(sessionId: string, count: number): Promise<Envelope[]> {
  const rt = tc.console.runtime;
  if (!rt) throw new Error("no embedded runtime");
  return collectEnvelopes(clientFor({ url: rt.url }, "baton:console"), sessionId, count, { timeoutMs: 2_000 });
}

async function refusal(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("expected the call to be refused");
}

function ok(r: ActionResult): ActionResult {
  if (!r.ok) throw new Error(`refused: ${r.code} ${r.message}`);
  return r;
}

async function startRotation(): Promise<string> {
  const started = ok(
    await alice.actions().startSession({
      messageId: uuid(),
      kind: SessionKind.HANDOFF,
      intent: "Payments on-call rotation (lead approval)",
      scope: "payments on-call",
      participants: ["human:bob", "human:dave"],
      ttlMs: 3_600_000,
      policy: PolicyChoice.LEAD_APPROVAL,
      approvers: ["human:carol"],
      frozenContextJson: JSON.stringify({ incident: null, week: 32 }),
    }),
  );
  expect(started.policyId).toMatch(/^policy\.baton\.lead-approval\.[0-9a-f]{16}$/);
  expect(started.sessionState).toBe(SessionState.OPEN);
  return started.sessionId;
}

describe("a rotation that needs the lead's approval, driven by people", () => {
  it("offer with a runbook → decline → re-offer → accept → the owner and another approver are refused → the designated approver commits", async () => {
    const sid = await startRotation();
    const bobInbox = watchInbox(bob);
    const carolInbox = watchInbox(carol);
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
    } finally {
      await bobInbox.stop();
      await carolInbox.stop();
    }

    ok(await alice.actions().offer({ sessionId: sid, messageId: uuid(), target: "human:dave" }));
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

describe("who may act", () => {
  it("refuses a viewer with PERMISSION_DENIED and the reason", async () => {
    const err = await refusal(
      victor.actions().startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "x", participants: ["human:bob"] }),
    );
    expect(err.code).toBe(Code.PermissionDenied);
    expect(err.rawMessage).toBe("Your account is read-only (viewer): you can watch sessions but not act in them.");
  });

  it("refuses callers without a session with UNAUTHENTICATED", async () => {
    const anonymous = new Browser(tc.url);
    const err = await refusal(anonymous.actions().offer({ sessionId: uuid(), messageId: uuid(), target: "human:bob" }));
    expect(err.code).toBe(Code.Unauthenticated);
    const forged = new Browser(tc.url);
    forged.cookie = "baton_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    forged.csrf = "x";
    expect((await refusal(forged.actions().cancel({ sessionId: uuid(), messageId: uuid() }))).code).toBe(Code.Unauthenticated);
    // Reads that change nothing need a session too.
    expect((await refusal(anonymous.actions().listDirectory({}))).code).toBe(Code.Unauthenticated);
  });

  it("refuses a missing or wrong CSRF token, and a request from another origin", async () => {
    const b = await signedIn(tc, "alice");
    const start = () =>
      b.actions().startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "csrf", participants: ["human:bob"] });
    b.csrfOverride = "";
    let err = await refusal(start());
    expect(err.code).toBe(Code.PermissionDenied);
    expect(err.rawMessage).toContain("missing x-baton-csrf header");
    b.csrfOverride = "not-the-token";
    err = await refusal(start());
    expect(err.code).toBe(Code.PermissionDenied);
    expect(err.rawMessage).toContain("wrong x-baton-csrf token");
    b.csrfOverride = undefined;
    b.origin = "https://evil.example";
    err = await refusal(start());
    expect(err.code).toBe(Code.PermissionDenied);
    expect(err.rawMessage).toContain("origin https://evil.example is not this console");
    b.origin = tc.url;
    ok(await start());
  });

  it("names the wrong field with INVALID_ARGUMENT and a FieldViolation", async () => {
    // Thunks, not promises: each call is made when its turn comes, so no refusal
    // arrives before anything awaits it (an unhandled rejection otherwise).
    const cases: [() => Promise<unknown>, string][] = [
      [() => alice.actions().offer({ sessionId: uuid(), messageId: "not-a-uuid", target: "human:bob" }), "message_id"],
      [() => alice.actions().offer({ sessionId: uuid(), messageId: "", target: "human:bob" }), "message_id"],
      [
        () => alice.actions().startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "x", participants: ["human:zed"] }),
        "participants[0]",
      ],
      [
        () =>
          alice.actions().startSession({
            messageId: uuid(),
            kind: SessionKind.HANDOFF,
            intent: "x",
            participants: ["human:bob"],
            policy: PolicyChoice.LEAD_APPROVAL,
            approvers: ["human:dave"],
          }),
        "approvers[0]",
      ],
      [
        () =>
          alice.actions().startSession({
            messageId: uuid(),
            kind: SessionKind.HANDOFF,
            intent: "x",
            participants: ["human:bob"],
            frozenContextJson: "{nope",
          }),
        "frozen_context_json",
      ],
      [
        () =>
          alice.actions().attachContext({ sessionId: uuid(), messageId: uuid(), content: { case: "link", value: "javascript:alert(1)" } }),
        "content.link",
      ],
      [
        () =>
          alice.actions().attachContext({
            sessionId: uuid(),
            messageId: uuid(),
            content: { case: "file", value: { contentType: "text/html", data: new Uint8Array([60]) } },
          }),
        "content.file.content_type",
      ],
    ];
    for (const [call, field] of cases) {
      const err = await refusal(call());
      expect(err.code, field).toBe(Code.InvalidArgument);
      expect(err.findDetails(FieldViolationSchema)[0]?.field).toBe(field);
    }
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

describe("idempotency: the browser's message_id", () => {
  it("answers a retried or double-clicked offer as a duplicate, never a second offer", async () => {
    const sid = await startRotation();
    const messageId = uuid();
    const offer = () => alice.actions().offer({ sessionId: sid, messageId, target: "human:bob" });
    // A double click: both requests race to the runtime.
    const both = await Promise.all([offer(), offer()]);
    expect(both.every((r) => r.ok)).toBe(true);
    expect(both.filter((r) => r.duplicate)).toHaveLength(1);
    // A retry after the first one landed is answered from the history.
    const retry = ok(await offer());
    expect(retry).toMatchObject({ duplicate: true, handoffId: messageId, sessionState: SessionState.OPEN });
    const envs = await history(sid, 2);
    expect(envs.map((e) => e.messageType)).toEqual(["SessionStart", "HandoffOffer"]);
    const summary = (await alice.console().getSessionSummary({ sessionId: sid })).summary;
    expect(summary?.eventCount).toBe(2n);
    expect(fromBinary(HandoffOfferPayloadSchema, (envs[1] as Envelope).payload).handoffId).toBe(messageId);

    // The same id for a different message is refused.
    const misuse = await refusal(bob.actions().decline({ sessionId: sid, messageId }));
    expect(misuse.code).toBe(Code.InvalidArgument);
    expect(misuse.findDetails(FieldViolationSchema)[0]?.field).toBe("message_id");
  });

  it("starts one session for a retried StartSession", async () => {
    const messageId = uuid();
    const start = () =>
      alice.actions().startSession({ messageId, kind: SessionKind.TASK, intent: "retry me", participants: ["human:bob"] });
    const first = ok(await start());
    const again = ok(await start());
    expect(again.sessionId).toBe(first.sessionId);
    expect(again.duplicate).toBe(true);
  });
});

describe("cancel", () => {
  it("lets the owner cancel, an admin cancel anyone's session, and refuses others", async () => {
    const admin = await signedIn(tc, "admin", tc.adminPassword);
    // The bootstrap admin must replace the one-time password first.
    const gated = await refusal(admin.actions().listDirectory({}));
    expect(gated.code).toBe(Code.FailedPrecondition);
    const changed = await fetch(`${tc.url}/auth/password`, {
      method: "POST",
      headers: admin.headers({ "content-type": "application/json", "x-baton-csrf": admin.csrf }),
      body: JSON.stringify({ currentPassword: tc.adminPassword, newPassword: "a brand new admin password" }),
    });
    expect(changed.status).toBe(200);

    const own = ok(
      await alice
        .actions()
        .startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "cancel me", participants: ["human:bob"] }),
    );
    const byBob = await refusal(bob.actions().cancel({ sessionId: own.sessionId, messageId: uuid() }));
    expect(byBob.code).toBe(Code.PermissionDenied);
    expect(byBob.rawMessage).toBe("Only the session's owner (Alice Ng) or an admin can cancel it.");
    const cancelled = ok(await alice.actions().cancel({ sessionId: own.sessionId, messageId: uuid(), reason: "wrong team" }));
    expect(cancelled.sessionState).toBe(SessionState.CANCELLED);

    const other = ok(
      await bob
        .actions()
        .startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "admin cancels", participants: ["human:dave"] }),
    );
    const byAdmin = ok(await admin.actions().cancel({ sessionId: other.sessionId, messageId: uuid(), reason: "cleanup" }));
    expect(byAdmin).toMatchObject({ sessionState: SessionState.CANCELLED, duplicate: false });
    const twice = ok(await admin.actions().cancel({ sessionId: other.sessionId, messageId: uuid() }));
    expect(twice.duplicate).toBe(true);
    const meta = (await victor.console().getSessionSummary({ sessionId: other.sessionId })).summary?.metadata;
    expect(meta?.state).toBe(SessionState.CANCELLED);
  });
});

describe("tasks as people", () => {
  it("request → inbox → accept → progress → complete → the requester commits", async () => {
    const started = ok(
      await erin
        .actions()
        .startSession({ messageId: uuid(), kind: SessionKind.TASK, intent: "Rotate the TLS certificates", participants: ["human:bob"] }),
    );
    const sid = started.sessionId;
    const inbox = watchInbox(bob);
    try {
      const requested = ok(
        await erin.actions().taskRequest({
          sessionId: sid,
          messageId: uuid(),
          title: "Rotate certs on edge-1",
          instructions: "Use the runbook; announce in #ops.",
          assignee: "human:bob",
          inputJson: '{"hosts":["edge-1"]}',
        }),
      );
      await waitFor(
        () => inbox.latest?.some((i) => i.sessionId === sid && i.kind === InboxItemKind.TASK) === true,
        5_000,
        "task in bob's inbox",
      );
      expect(inbox.latest?.find((i) => i.sessionId === sid)?.summary).toBe('Erin Diaz asked you to do "Rotate certs on edge-1".');

      // Only the requested assignee may take it.
      const byDave = await refusal(dave.actions().taskAccept({ sessionId: sid, messageId: uuid() }));
      expect(byDave.code).toBe(Code.PermissionDenied);

      ok(await bob.actions().taskAccept({ sessionId: sid, messageId: uuid(), taskId: requested.taskId }));
      ok(await bob.actions().taskUpdate({ sessionId: sid, messageId: uuid(), progress: 0.5, message: "edge-1 halfway" }));
      const badProgress = await refusal(bob.actions().taskUpdate({ sessionId: sid, messageId: uuid(), progress: 1.5 }));
      expect(badProgress.findDetails(FieldViolationSchema)[0]?.field).toBe("progress");
      ok(
        await bob.actions().taskComplete({
          sessionId: sid,
          messageId: uuid(),
          output: new TextEncoder().encode('{"rotated":1}'),
          summary: "edge-1 rotated",
        }),
      );
      await waitFor(() => inbox.latest !== undefined && !inbox.latest.some((i) => i.sessionId === sid), 5_000, "bob's task done");
    } finally {
      await inbox.stop();
    }

    const erinInbox = watchInbox(erin);
    try {
      await waitFor(
        () => erinInbox.latest?.some((i) => i.sessionId === sid && i.kind === InboxItemKind.APPROVAL) === true,
        5_000,
        "approval in erin's inbox",
      );
    } finally {
      await erinInbox.stop();
    }
    const byAssignee = await refusal(bob.actions().taskCommit({ sessionId: sid, messageId: uuid(), outcome: TaskOutcome.COMPLETED }));
    expect(byAssignee.code).toBe(Code.PermissionDenied);
    const committed = ok(await erin.actions().taskCommit({ sessionId: sid, messageId: uuid(), outcome: TaskOutcome.COMPLETED }));
    expect(committed.sessionState).toBe(SessionState.RESOLVED);

    const envs = await history(sid, 6);
    expect(envs.map((e) => [e.messageType, e.sender])).toEqual([
      ["SessionStart", "human:erin"],
      ["TaskRequest", "human:erin"],
      ["TaskAccept", "human:bob"],
      ["TaskUpdate", "human:bob"],
      ["TaskComplete", "human:bob"],
      ["Commitment", "human:erin"],
    ]);
    expect(new TextDecoder().decode(fromBinary(TaskRequestPayloadSchema, (envs[1] as Envelope).payload).input)).toBe(
      '{"hosts":["edge-1"]}',
    );
    expect(fromBinary(CommitmentPayloadSchema, (envs[5] as Envelope).payload)).toMatchObject({
      action: "task.completed",
      outcomePositive: true,
      authorityScope: "Rotate certs on edge-1",
      reason: "edge-1 rotated",
    });
  });

  it("a rejected task under the default policy can only be failed or cancelled", async () => {
    const sid = ok(
      await erin
        .actions()
        .startSession({ messageId: uuid(), kind: SessionKind.TASK, intent: "reject me", participants: ["human:bob", "human:dave"] }),
    ).sessionId;
    ok(await erin.actions().taskRequest({ sessionId: sid, messageId: uuid(), title: "Anyone?" }));
    ok(await bob.actions().taskReject({ sessionId: sid, messageId: uuid(), reason: "busy" }));
    const err = await refusal(dave.actions().taskAccept({ sessionId: sid, messageId: uuid() }));
    expect(err.code).toBe(Code.PermissionDenied);
    expect(err.rawMessage).toContain("doesn't allow reassignment");
  });
});

describe("directory", () => {
  it("lists users and the agents seen in sessions", async () => {
    const rt = tc.console.runtime;
    if (!rt) throw new Error("no runtime");
    ok(
      await alice
        .actions()
        .startSession({ messageId: uuid(), kind: SessionKind.HANDOFF, intent: "with a bot", participants: ["agent://pager-bot"] }),
    );
    const dir = await victor.actions().listDirectory({});
    expect(dir.users.map((u) => [u.username, u.role, u.participantId])).toContainEqual(["carol", "approver", "human:carol"]);
    expect(dir.users.find((u) => u.username === "alice")?.displayName).toBe("Alice Ng");
    expect(dir.agents.map((a) => a.participantId)).toContain("agent://pager-bot");
    expect(dir.agents.map((a) => a.participantId)).not.toContain("human:alice");
  });
});
