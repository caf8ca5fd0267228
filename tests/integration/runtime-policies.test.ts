// The embedded runtime over real gRPC on loopback: policies.
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { buildEnvelope } from "@/lib/macp/payloads";
import { agent, clientFor, collectEnvelopes, newSessionId, startTestRuntime } from "./harness";
import { expectCode, rt, useTestRuntime } from "./__fixtures__/runtime-kit";

useTestRuntime();

describe("policies", () => {
  it("a designated approver (team lead) commits; the owner cannot", async () => {
    const admin = clientFor(rt, "admin");
    const reg = await admin.registerPolicy({
      policyDescriptor: {
        policyId: "policy.oncall.lead-approval",
        mode: HANDOFF_MODE,
        rules: JSON.stringify({ commitment: { authority: "designated_role", designated_roles: ["human:carol"] } }),
        schemaVersion: 1,
      },
    });
    expect(reg.ok, reg.error).toBe(true);
    const bad = await admin.registerPolicy({
      policyDescriptor: {
        policyId: "policy.bad",
        mode: HANDOFF_MODE,
        rules: JSON.stringify({ commitment: { authority: "designated_role" } }),
        schemaVersion: 1,
      },
    });
    expect(bad.ok).toBe(false);
    expect(bad.error).toContain("designated_roles");

    const sid = newSessionId();
    const alice = agent(rt, "human:alice", sid);
    await alice.start(["human:alice", "human:bob", "human:dave", "human:carol"], { policy: "policy.oncall.lead-approval" });
    await alice.send("HandoffOffer", { handoffId: "h1", targetParticipant: "human:dave" });
    await agent(rt, "human:dave", sid).send("HandoffAccept", { handoffId: "h1" });
    const p = { policy: "policy.oncall.lead-approval" };
    expect((await alice.commit("handoff.accepted", true, p)).error?.code).toBe("FORBIDDEN");
    const carol = await agent(rt, "human:carol", sid).commit("handoff.accepted", true, p);
    expect(carol.ok, carol.error?.message).toBe(true);
    expect(carol.sessionState).toBe(SessionState.RESOLVED);
    const listed = await admin.listPolicies({ mode: HANDOFF_MODE });
    expect(listed.descriptors.map((d) => d.policyId)).toEqual(["policy.default", "policy.oncall.lead-approval"]);
  });

  it("implicit accept after the policy timeout lets the owner commit", async () => {
    const admin = clientFor(rt, "admin");
    await admin.registerPolicy({
      policyDescriptor: {
        policyId: "policy.test.implicit",
        mode: HANDOFF_MODE,
        rules: JSON.stringify({ acceptance: { implicit_accept_timeout_ms: 5000 } }),
        schemaVersion: 1,
      },
    });
    const sid = newSessionId();
    const o = agent(rt, "o", sid);
    const t0 = Date.now();
    await o.start(["o", "t"], { policy: "policy.test.implicit" });
    await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" }, { timestampMs: t0 });
    const p = "policy.test.implicit";
    expect((await o.commit("handoff.accepted", true, { policy: p, timestampMs: t0 + 4999 })).error?.code).toBe("INVALID_ENVELOPE");
    expect((await o.commit("handoff.accepted", true, { policy: p, timestampMs: t0 + 5000 })).ok).toBe(true);
  });

  it("task: reassignment gate and require_output", async () => {
    const admin = clientFor(rt, "admin");
    await admin.registerPolicy({
      policyDescriptor: {
        policyId: "policy.test.output",
        mode: TASK_MODE,
        rules: JSON.stringify({ completion: { require_output: true } }),
        schemaVersion: 1,
      },
    });
    const sid = newSessionId();
    const req = agent(rt, "planner", sid, TASK_MODE);
    const w1 = agent(rt, "w1", sid, TASK_MODE);
    const w2 = agent(rt, "w2", sid, TASK_MODE);
    await req.start(["planner", "w1", "w2"], { policy: "policy.test.output" });
    await req.send("TaskRequest", { taskId: "t1", title: "Build" });
    expect((await req.send("TaskAccept", { taskId: "t1" })).error?.code).toBe("FORBIDDEN"); // requester cannot take it
    expect((await w1.send("TaskReject", { taskId: "t1", reason: "busy" })).ok).toBe(true);
    expect((await w2.send("TaskAccept", { taskId: "t1" })).error?.code).toBe("POLICY_DENIED");

    const sid2 = newSessionId();
    const r2 = agent(rt, "planner", sid2, TASK_MODE);
    const x = agent(rt, "w1", sid2, TASK_MODE);
    await r2.start(["planner", "w1"], { policy: "policy.test.output" });
    await r2.send("TaskRequest", { taskId: "t1", title: "Build", requestedAssignee: "w1" });
    await x.send("TaskAccept", { taskId: "t1" });
    expect((await x.send("TaskUpdate", { taskId: "t2", progress: 0.3 })).error?.code).toBe("INVALID_ENVELOPE");
    expect((await x.send("TaskUpdate", { taskId: "t1", progress: 0.3 })).ok).toBe(true);
    await x.send("TaskComplete", { taskId: "t1", summary: "done" });
    expect((await x.send("TaskUpdate", { taskId: "t1", progress: 1 })).error?.code).toBe("FORBIDDEN");
    expect((await r2.commit("task.completed", true, { policy: "policy.test.output" })).error?.code).toBe("POLICY_DENIED");
  });

  it("observers (token mode) may watch but never send; x-macp-agent-id is refused when tokens are configured", async () => {
    const tokens = await startTestRuntime({
      MACP_AUTH_TOKENS_JSON: JSON.stringify({
        tokens: [
          { token: "tok-alice", sender: "alice" },
          { token: "tok-bob", sender: "bob" },
          { token: "tok-watch", sender: "console", is_observer: true },
        ],
      }),
    });
    try {
      const sid = newSessionId();
      const alice = agent(tokens, "tok-alice", sid);
      expect((await alice.start(["alice", "bob"])).ok).toBe(true);
      const watcher = clientFor(tokens, "tok-watch");
      expect((await watcher.getSession({ sessionId: sid })).metadata?.initiator).toBe("alice");
      expect(await collectEnvelopes(watcher, sid, 1)).toHaveLength(1);
      const env = buildEnvelope({
        mode: HANDOFF_MODE,
        messageType: "HandoffOffer",
        sessionId: sid,
        payload: { handoffId: "h", targetParticipant: "bob" },
      });
      expect((await watcher.send({ envelope: env })).ack?.error?.code).toBe("FORBIDDEN");
      expect((await clientFor(tokens, "alice", "agent-id").send({ envelope: env })).ack?.error?.code).toBe("UNAUTHENTICATED");
      expect((await clientFor(tokens, "tok-nope").send({ envelope: env })).ack?.error?.code).toBe("UNAUTHENTICATED");
      await expectCode(
        clientFor(tokens, "tok-bob").registerPolicy({ policyDescriptor: { policyId: "p.x", mode: "*", rules: "{}", schemaVersion: 1 } }),
        Code.PermissionDenied,
      );
    } finally {
      await tokens.close();
    }
  });

  it("rate-limits per identity", async () => {
    const limited = await startTestRuntime({ MACP_MESSAGE_LIMIT_PER_MINUTE: "3" });
    try {
      const sid = newSessionId();
      const o = agent(limited, "o", sid);
      await o.start(["o", "t"]);
      const codes: string[] = [];
      for (let i = 0; i < 5; i++) codes.push((await o.send("HandoffContext", { handoffId: "x" })).error?.code ?? "OK");
      expect(codes.slice(0, 3)).toEqual(["INVALID_ENVELOPE", "INVALID_ENVELOPE", "INVALID_ENVELOPE"]);
      expect(codes.slice(3)).toEqual(["RATE_LIMITED", "RATE_LIMITED"]);
    } finally {
      await limited.close();
    }
  });
});
