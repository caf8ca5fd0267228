// The embedded runtime over real gRPC on loopback: discovery, auth and admission rules.
import http2 from "node:http2";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { buildEnvelope } from "@/lib/macp/payloads";
import { agent, clientFor, collectEnvelopes, newSessionId } from "./harness";
import { expectCode, rt, useTestRuntime } from "./__fixtures__/runtime-kit";

useTestRuntime();

describe("discovery", () => {
  it("Initialize negotiates 1.0 and advertises handoff and task", async () => {
    const c = clientFor(rt, "a");
    const res = await c.initialize({ supportedProtocolVersions: ["1.0"], clientInfo: { name: "test" } });
    expect(res.selectedProtocolVersion).toBe("1.0");
    expect(res.supportedModes).toEqual([HANDOFF_MODE, TASK_MODE]);
    expect(res.capabilities?.sessions?.watchSessions).toBe(true);
    await expectCode(c.initialize({ supportedProtocolVersions: [] }), Code.InvalidArgument);
    const e = await expectCode(c.initialize({ supportedProtocolVersions: ["2.0"] }), Code.FailedPrecondition);
    expect(e.message).toContain("UNSUPPORTED_PROTOCOL_VERSION");
  });

  it("ListModes, GetManifest, ListRoots, and UNIMPLEMENTED for what is not built", async () => {
    const c = clientFor(rt, "a");
    const modes = await c.listModes({});
    expect(modes.modes.map((m) => m.mode)).toEqual([TASK_MODE, HANDOFF_MODE]);
    expect(modes.modes.find((m) => m.mode === HANDOFF_MODE)?.participantModel).toBe("delegated");
    expect((await c.getManifest({ agentId: "" })).manifest?.supportedModes).toContain(HANDOFF_MODE);
    await expectCode(c.getManifest({ agentId: "someone-else" }), Code.NotFound);
    expect((await c.listRoots({})).roots).toEqual([]);
    await expectCode(c.registerExtMode({ modeDescriptor: { mode: "ext.x.v1" } }), Code.Unimplemented);
  });
});

describe("identity", () => {
  it("accepts both dev headers: Bearer (Python SDK) and x-macp-agent-id (TypeScript SDK)", async () => {
    const sid = newSessionId();
    const owner = agent(rt, "agent://owner", sid, HANDOFF_MODE, "agent-id");
    const target = agent(rt, "agent://target", sid, HANDOFF_MODE, "bearer");
    expect((await owner.start(["agent://owner", "agent://target"])).ok).toBe(true);
    expect((await owner.send("HandoffOffer", { handoffId: "h1", targetParticipant: "agent://target", scope: "s" })).ok).toBe(true);
    expect((await target.send("HandoffAccept", { handoffId: "h1" })).ok).toBe(true);
    const history = await collectEnvelopes(owner.client, sid, 3);
    expect(history.map((e) => e.sender)).toEqual(["agent://owner", "agent://owner", "agent://target"]);
  });

  it("rejects missing credentials and spoofed senders with UNAUTHENTICATED", async () => {
    const sid = newSessionId();
    const anon = agent(rt, "", sid, HANDOFF_MODE, "none");
    const ack = await anon.start(["x", "y"]);
    expect(ack.ok).toBe(false);
    expect(ack.error?.code).toBe("UNAUTHENTICATED");

    const mallory = clientFor(rt, "mallory");
    const env = buildEnvelope({
      mode: HANDOFF_MODE,
      messageType: "SessionStart",
      sessionId: sid,
      sender: "alice",
      payload: { participants: ["alice", "bob"], modeVersion: "1.0.0", configurationVersion: "c", ttlMs: 1000n },
    });
    const spoof = (await mallory.send({ envelope: env })).ack;
    expect(spoof?.error?.code).toBe("UNAUTHENTICATED");
    await expectCode(clientFor(rt, "", "none").listSessions({}), Code.Unauthenticated);
  });
});

describe("admission", () => {
  it("validates SessionStart strictly", async () => {
    const a = (sid: string) => agent(rt, "o", sid);
    expect((await a("NOT-A-VALID-ID").start(["o", "t"])).error?.code).toBe("INVALID_SESSION_ID");
    expect((await a(newSessionId().toUpperCase()).start(["o", "t"])).error?.code).toBe("INVALID_SESSION_ID");
    const decision = agent(rt, "o", newSessionId(), "macp.mode.decision.v1");
    expect((await decision.start(["o", "t"])).error?.code).toBe("MODE_NOT_SUPPORTED");
    expect((await a(newSessionId()).start(["o", "t"], { ttlMs: 0 })).error?.code).toBe("INVALID_ENVELOPE");
    expect((await a(newSessionId()).start(["o", "t"], { ttlMs: 86_400_001 })).error?.code).toBe("INVALID_ENVELOPE");
    expect((await a(newSessionId()).start(["o"])).error?.code).toBe("INVALID_ENVELOPE");
    expect((await a(newSessionId()).start(["t", "u"])).error?.code).toBe("INVALID_ENVELOPE");
    expect((await a(newSessionId()).start(["o", "t", " t "])).error?.code).toBe("INVALID_ENVELOPE");
    expect((await a(newSessionId()).start(["o", "t"], { policy: "policy.nope" })).error?.code).toBe("UNKNOWN_POLICY_VERSION");
    const sid = newSessionId();
    expect((await a(sid).start(["o", "t"], { messageId: "s1" })).ok).toBe(true);
    const dup = await a(sid).start(["o", "t"], { messageId: "s1" });
    expect(dup.ok && dup.duplicate).toBe(true);
    expect((await a(sid).start(["o", "t"], { messageId: "s2" })).error?.code).toBe("SESSION_ALREADY_EXISTS");
  });

  it("rejects bad envelopes with clear codes and never crashes", async () => {
    const sid = newSessionId();
    const o = agent(rt, "o", sid);
    await o.start(["o", "t"]);
    const c = clientFor(rt, "o");
    const base = buildEnvelope({
      mode: HANDOFF_MODE,
      messageType: "HandoffOffer",
      sessionId: sid,
      payload: new Uint8Array([0xff, 0xff, 0xff]),
    });
    expect((await c.send({ envelope: base })).ack?.error?.code).toBe("INVALID_ENVELOPE");
    expect((await c.send({ envelope: { ...base, macpVersion: "1.0.0" } })).ack?.error?.code).toBe("UNSUPPORTED_PROTOCOL_VERSION");
    expect((await c.send({ envelope: { ...base, messageId: "" } })).ack?.error?.code).toBe("INVALID_ENVELOPE");
    expect((await c.send({ envelope: { ...base, payload: new Uint8Array(5000) } })).ack?.error?.code).toBe("PAYLOAD_TOO_LARGE");
    expect((await c.send({ envelope: { ...base, messageType: "Bogus" } })).ack?.error?.code).toBe("INVALID_ENVELOPE");
    expect((await c.send({ envelope: { ...base, messageType: "SessionCancel" } })).ack?.error?.code).toBe("INVALID_ENVELOPE");
    expect((await clientFor(rt, "stranger").send({ envelope: { ...base, messageType: "Bogus" } })).ack?.error?.code).toBe("FORBIDDEN");
    expect((await c.send({ envelope: { ...base, sessionId: newSessionId() } })).ack?.error?.code).toBe("SESSION_NOT_FOUND");
    expect((await c.send({ envelope: { ...base, mode: TASK_MODE } })).ack?.error?.code).toBe("INVALID_ENVELOPE");
    await expectCode(c.send({}), Code.InvalidArgument);
    // Still healthy afterwards.
    expect((await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" })).ok).toBe(true);
  });

  it("answers a malformed protobuf request with a gRPC error status and keeps serving", async () => {
    const session = http2.connect(rt.url);
    session.on("error", () => undefined); // the server may reset the connection after answering
    const req = session.request({
      ":method": "POST",
      ":path": "/macp.v1.MACPRuntimeService/Send",
      "content-type": "application/grpc",
      te: "trailers",
      authorization: "Bearer o",
    });
    const garbage = Buffer.from([0, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff]);
    req.end(garbage);
    const status = await new Promise<string>((resolve) => {
      req.on("response", (h) => h["grpc-status"] !== undefined && resolve(String(h["grpc-status"])));
      req.on("trailers", (t) => resolve(String(t["grpc-status"])));
      req.resume();
    });
    session.close();
    expect(status).not.toBe("0");
    expect((await clientFor(rt, "o").initialize({ supportedProtocolVersions: ["1.0"] })).selectedProtocolVersion).toBe("1.0");
  });

  it("de-duplicates by message_id, also after the session resolved", async () => {
    const sid = newSessionId();
    const o = agent(rt, "o", sid);
    const t = agent(rt, "t", sid);
    await o.start(["o", "t"]);
    const first = await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" }, { messageId: "offer-1" });
    const again = await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" }, { messageId: "offer-1" });
    expect(first.duplicate).toBe(false);
    expect(again.ok && again.duplicate).toBe(true);
    await t.send("HandoffAccept", { handoffId: "h1" });
    expect((await o.commit("handoff.accepted", true)).sessionState).toBe(SessionState.RESOLVED);
    const late = await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" }, { messageId: "offer-1" });
    expect(late.ok && late.duplicate).toBe(true);
    expect(late.sessionState).toBe(SessionState.RESOLVED);
    expect((await o.send("HandoffOffer", { handoffId: "h2", targetParticipant: "t" })).error?.code).toBe("SESSION_NOT_OPEN");
    const history = await collectEnvelopes(o.client, sid, 10, { timeoutMs: 500 });
    expect(history.filter((e) => e.messageId === "offer-1")).toHaveLength(1);
  });

  it("enforces handoff authority and commitment consistency", async () => {
    const sid = newSessionId();
    const o = agent(rt, "o", sid);
    const t = agent(rt, "t", sid);
    const u = agent(rt, "u", sid);
    await o.start(["o", "t", "u"]);
    expect((await t.send("HandoffOffer", { handoffId: "h1", targetParticipant: "u" })).error?.code).toBe("FORBIDDEN");
    expect((await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "o" })).error?.code).toBe("INVALID_ENVELOPE");
    expect((await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" })).ok).toBe(true);
    expect((await o.send("HandoffOffer", { handoffId: "h2", targetParticipant: "u" })).error?.code).toBe("INVALID_ENVELOPE");
    expect((await u.send("HandoffAccept", { handoffId: "h1" })).error?.code).toBe("FORBIDDEN");
    expect((await t.send("HandoffContext", { handoffId: "h1", contentType: "text/plain", context: new Uint8Array(1) })).error?.code).toBe(
      "FORBIDDEN",
    );
    expect((await o.commit("handoff.declined", false)).error?.code).toBe("INVALID_ENVELOPE"); // nothing answered yet
    expect((await t.send("HandoffDecline", { handoffId: "h1", declinedBy: "u" })).error?.code).toBe("INVALID_ENVELOPE");
    expect((await t.send("HandoffDecline", { handoffId: "h1", reason: "busy" })).ok).toBe(true);
    expect((await o.send("HandoffOffer", { handoffId: "h2", targetParticipant: "u" })).ok).toBe(true);
    expect((await u.send("HandoffAccept", { handoffId: "h2" })).ok).toBe(true);
    expect((await o.commit("handoff.accepted", false)).error?.code).toBe("INVALID_ENVELOPE");
    expect((await t.commit("handoff.accepted", true)).error?.code).toBe("FORBIDDEN");
    expect((await o.commit("handoff.accepted", true, { policy: "policy.other" })).error?.code).toBe("INVALID_ENVELOPE");
    expect((await o.commit("handoff.accepted", true, { policy: "" })).ok).toBe(true); // D1: "" equals policy.default
  });
});
