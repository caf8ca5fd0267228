// Who may act, the browser's message_id and cancel, through the ActionService against the real
// console and embedded runtime.
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { FieldViolationSchema, PolicyChoice, SessionKind } from "@/lib/gen/baton/v1/actions_pb";
import { HandoffOfferPayloadSchema } from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { fromBinary } from "@bufbuild/protobuf";
import { Browser, signedIn, uuid } from "./actions-harness";
import { alice, bob, history, ok, refusal, startRotation, tc, useTestConsole, victor } from "./__fixtures__/actions-kit";

useTestConsole();

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
