// The embedded runtime over real gRPC on loopback: discovery, auth, admission
// rules, streams, lifecycle and policies.
import http2 from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import {
  SessionLifecycleEvent_EventType as EventType,
  StreamSessionRequestSchema,
  StreamSessionResponseSchema,
  type SessionLifecycleEvent,
} from "@/lib/gen/macp/v1/core_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { buildEnvelope } from "@/lib/macp/payloads";
import type { RunningRuntime } from "@/lib/runtime";
import { agent, clientFor, collectEnvelopes, FrameQueue, newSessionId, startTestRuntime, waitFor } from "./harness";

let rt: RunningRuntime;
beforeAll(async () => {
  rt = await startTestRuntime({ MACP_MAX_PAYLOAD_BYTES: "4096", MACP_EXPIRY_SWEEP_MS: "50" });
});
afterAll(async () => {
  await rt?.close();
});

async function expectCode(p: Promise<unknown>, code: Code) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  expect((err as ConnectError).code).toBe(code);
  return err as ConnectError;
}

/** Runs a WatchSessions stream in the background and records its events. */
function watch(identity = "watcher") {
  const events: SessionLifecycleEvent[] = [];
  const ac = new AbortController();
  const done = (async () => {
    try {
      for await (const r of clientFor(rt, identity).watchSessions({}, { signal: ac.signal })) if (r.event) events.push(r.event);
    } catch {
      /* aborted */
    }
  })();
  return {
    events,
    of: (sid: string) => events.filter((e) => e.session?.sessionId === sid).map((e) => EventType[e.eventType]),
    stop: async () => {
      ac.abort();
      await done;
    },
  };
}

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

describe("streams", () => {
  it("passive subscribe replays from a sequence, then delivers live to several subscribers", async () => {
    const sid = newSessionId();
    const o = agent(rt, "o", sid);
    const t = agent(rt, "t", sid);
    await o.start(["o", "t"], { messageId: "m1" });
    await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" }, { messageId: "m2" });
    await o.send(
      "HandoffContext",
      { handoffId: "h1", contentType: "text/markdown", context: new TextEncoder().encode("# Runbook") },
      { messageId: "m3" },
    );

    const subs = [0, 1, 2].map((after) => {
      const got: Envelope[] = [];
      const frames = new FrameQueue();
      frames.push({ subscribeSessionId: sid, afterSequence: BigInt(after) });
      const ac = new AbortController();
      const done = (async () => {
        try {
          for await (const r of clientFor(rt, after === 2 ? "t" : "o").streamSession(frames, { signal: ac.signal })) {
            if (r.response.case === "envelope") got.push(r.response.value);
          }
        } catch {
          /* aborted */
        }
      })();
      return { after, got, stop: () => (ac.abort(), done) };
    });
    await waitFor(() => subs.every((s) => s.got.length === 3 - s.after), 3000, "replay");
    await t.send("HandoffAccept", { handoffId: "h1" }, { messageId: "m4" });
    await o.commit("handoff.accepted", true, { messageId: "m5" });
    await waitFor(() => subs.every((s) => s.got.length === 5 - s.after), 3000, "live delivery");
    for (const s of subs) {
      expect(s.got.map((e) => e.messageId)).toEqual(["m1", "m2", "m3", "m4", "m5"].slice(s.after));
    }
    await Promise.all(subs.map((s) => s.stop()));
    await waitFor(() => rt.kernel.stats().sessionSubscribers === 0, 3000, "subscriptions released");
  });

  it("StreamSession: envelope frames echo to every subscriber; outsiders get an inline FORBIDDEN", async () => {
    const sid = newSessionId();
    const frames = new FrameQueue();
    const got: Envelope[] = [];
    const ac = new AbortController();
    const o = clientFor(rt, "o");
    const done = (async () => {
      for await (const r of o.streamSession(frames, { signal: ac.signal })) if (r.response.case === "envelope") got.push(r.response.value);
    })().catch(() => undefined);
    frames.push({
      envelope: buildEnvelope({
        mode: HANDOFF_MODE,
        messageType: "SessionStart",
        sessionId: sid,
        payload: { participants: ["o", "t"], modeVersion: "1.0.0", configurationVersion: "c", ttlMs: 60_000n },
      }),
    });
    await waitFor(() => got.length === 1, 3000, "echo of SessionStart");
    expect(got[0]?.sender).toBe("o");

    const outsider = new FrameQueue();
    outsider.push({ subscribeSessionId: sid });
    const ac2 = new AbortController();
    const first = await (async () => {
      for await (const r of clientFor(rt, "zed").streamSession(outsider, { signal: ac2.signal })) return r;
      return undefined;
    })();
    expect(first?.response.case).toBe("error");
    expect(first?.response.case === "error" && first.response.value.code).toContain("FORBIDDEN");
    ac2.abort();
    ac.abort();
    await done;
  });

  it("ends a stalled subscriber with RESOURCE_EXHAUSTED, releases it, and lets it resume from its last sequence", async () => {
    const small = await startTestRuntime({ MACP_SUBSCRIBER_BUFFER: "4" });
    try {
      const sid = newSessionId();
      const o = agent(small, "o", sid);
      await o.start(["o", "t"]);
      await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" });
      // A raw HTTP/2 gRPC client that subscribes and then stops reading, so
      // flow control really pushes back on the server.
      const stalled = rawStreamSession(small.url, "o", sid);
      await waitFor(() => small.kernel.stats().sessionSubscribers === 1, 3000, "subscribed");
      const big = new Uint8Array(100_000).fill(65);
      for (let i = 0; i < 30; i++)
        expect((await o.send("HandoffContext", { handoffId: "h1", contentType: "text/plain", context: big })).ok).toBe(true);
      // The laggard's subscription is dropped: its memory cannot grow further.
      await waitFor(() => small.kernel.stats().sessionSubscribers === 0, 5000, "slow subscriber released");
      const end = await stalled.resumeAndFinish();
      expect(end.status).toBe(String(Code.ResourceExhausted));
      const m = /after_sequence=(\d+)/.exec(end.message);
      expect(m, end.message).not.toBeNull();
      const resumeFrom = Number(m![1]);
      expect(resumeFrom).toBe(end.envelopes);
      expect(resumeFrom).toBeLessThan(32);
      const rest = await collectEnvelopes(clientFor(small, "o"), sid, 32 - resumeFrom, { afterSequence: resumeFrom });
      expect(rest).toHaveLength(32 - resumeFrom);
    } finally {
      await small.close();
    }
  }, 30_000);
});

/** Minimal gRPC-over-HTTP/2 StreamSession subscriber whose reading can be paused. */
function rawStreamSession(url: string, identity: string, sessionId: string) {
  const session = http2.connect(url);
  session.on("error", () => undefined); // closed by the runtime at shutdown
  const req = session.request({
    ":method": "POST",
    ":path": "/macp.v1.MACPRuntimeService/StreamSession",
    "content-type": "application/grpc+proto",
    te: "trailers",
    authorization: `Bearer ${identity}`,
  });
  const msg = toBinary(StreamSessionRequestSchema, create(StreamSessionRequestSchema, { subscribeSessionId: sessionId }));
  const frame = Buffer.alloc(5 + msg.length);
  frame.writeUInt32BE(msg.length, 1);
  Buffer.from(msg).copy(frame, 5);
  req.write(frame);
  req.pause();
  let buf = Buffer.alloc(0);
  let envelopes = 0;
  const trailers = new Promise<{ status: string; message: string }>((resolve) => {
    req.on("trailers", (t) => resolve({ status: String(t["grpc-status"]), message: decodeURIComponent(String(t["grpc-message"] ?? "")) }));
  });
  req.on("data", (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 5 && buf.length >= 5 + buf.readUInt32BE(1)) {
      const len = buf.readUInt32BE(1);
      const r = fromBinary(StreamSessionResponseSchema, buf.subarray(5, 5 + len));
      if (r.response.case === "envelope") envelopes++;
      buf = buf.subarray(5 + len);
    }
  });
  return {
    async resumeAndFinish() {
      req.resume();
      const t = await trailers;
      req.close(); // our request side was never ended; release the stream
      session.close();
      return { ...t, envelopes };
    },
  };
}

describe("lifecycle", () => {
  it("WatchSessions: initial sync, then CREATED, SUSPENDED, RESUMED, CANCELLED, RESOLVED and EXPIRED", async () => {
    const existing = newSessionId();
    await agent(rt, "o", existing).start(["o", "t"]);
    const w = watch();
    await waitFor(() => w.of(existing).length > 0, 3000, "initial sync");
    expect(w.of(existing)).toEqual(["CREATED"]);

    const a = newSessionId();
    const o = agent(rt, "o", a);
    await o.start(["o", "t"]);
    const c = clientFor(rt, "o");
    expect((await c.suspendSession({ sessionId: a, reason: "pause" })).ack?.sessionState).toBe(SessionState.SUSPENDED);
    expect((await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" })).error?.code).toBe("SESSION_NOT_OPEN");
    expect((await c.suspendSession({ sessionId: a })).ack?.error?.code).toBe("SESSION_NOT_OPEN");
    expect((await c.resumeSession({ sessionId: a })).ack?.sessionState).toBe(SessionState.OPEN);
    expect((await c.cancelSession({ sessionId: a, reason: "done" })).ack?.sessionState).toBe(SessionState.CANCELLED);
    expect((await c.cancelSession({ sessionId: a })).ack?.ok).toBe(true); // idempotent
    await expectCode(clientFor(rt, "t").cancelSession({ sessionId: existing }), Code.PermissionDenied);
    await expectCode(c.cancelSession({ sessionId: newSessionId() }), Code.NotFound);

    const b = newSessionId();
    const ob = agent(rt, "o", b);
    await ob.start(["o", "t"]);
    await ob.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" });
    await agent(rt, "t", b).send("HandoffDecline", { handoffId: "h1", reason: "no" });
    await ob.commit("handoff.declined", false);

    const e = newSessionId();
    await agent(rt, "o", e).start(["o", "t"], { ttlMs: 200 });
    await waitFor(() => w.of(a).length === 4 && w.of(b).length === 2 && w.of(e).includes("EXPIRED"), 5000, "lifecycle events");
    expect(w.of(a)).toEqual(["CREATED", "SUSPENDED", "RESUMED", "CANCELLED"]);
    expect(w.of(b)).toEqual(["CREATED", "RESOLVED"]);
    expect(w.of(e)).toEqual(["CREATED", "EXPIRED"]);
    await w.stop();
    await waitFor(() => rt.kernel.stats().lifecycleSubscribers === 0, 3000, "watcher released");
  });

  it("expires a session with no traffic within a second of its deadline", async () => {
    const sid = newSessionId();
    const t0 = Date.now();
    await agent(rt, "o", sid).start(["o", "t"], { ttlMs: 300 });
    const c = clientFor(rt, "o");
    await waitFor(
      async () => (await c.listSessions({})).sessions.find((s) => s.sessionId === sid)?.state === SessionState.EXPIRED,
      3000,
      "expiry",
    );
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it("banks the remaining TTL while suspended", async () => {
    const sid = newSessionId();
    const o = agent(rt, "o", sid);
    await o.start(["o", "t"], { ttlMs: 800 });
    const c = clientFor(rt, "o");
    const before = Number((await c.getSession({ sessionId: sid })).metadata?.expiresAtUnixMs);
    await c.suspendSession({ sessionId: sid });
    await new Promise((r) => setTimeout(r, 1000)); // longer than the whole TTL
    expect((await c.getSession({ sessionId: sid })).metadata?.state).toBe(SessionState.SUSPENDED);
    await c.resumeSession({ sessionId: sid });
    const after = Number((await c.getSession({ sessionId: sid })).metadata?.expiresAtUnixMs);
    expect(after - before).toBeGreaterThanOrEqual(950);
    expect((await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" })).ok).toBe(true);
  });
});

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
