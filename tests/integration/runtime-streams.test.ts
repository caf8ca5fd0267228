// The embedded runtime over real gRPC on loopback: StreamSession and its slow subscribers.
import http2 from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { HANDOFF_MODE } from "@/lib/macp/constants";
import { StreamSessionRequestSchema, StreamSessionResponseSchema } from "@/lib/gen/macp/v1/core_pb";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { buildEnvelope } from "@/lib/macp/payloads";
import { agent, clientFor, collectEnvelopes, FrameQueue, newSessionId, startTestRuntime, waitFor } from "./harness";
import { rt, useTestRuntime } from "./__fixtures__/runtime-kit";

useTestRuntime();

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
