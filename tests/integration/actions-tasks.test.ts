// Tasks driven by signed-in people, and the directory, through the ActionService against the real
// console and embedded runtime.
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { FieldViolationSchema, InboxItemKind, SessionKind, TaskOutcome } from "@/lib/gen/baton/v1/actions_pb";
import { CommitmentPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { TaskRequestPayloadSchema } from "@/lib/gen/macp/modes/task/v1/task_pb";
import { fromBinary } from "@bufbuild/protobuf";
import { waitFor } from "./harness";
import { uuid, watchInbox } from "./actions-harness";
import { alice, bob, dave, erin, history, ok, refusal, tc, useTestConsole, victor } from "./__fixtures__/actions-kit";

useTestConsole();

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
