// History at scale (see __fixtures__/runtime-scale-kit.ts): a subscriber that stops reading holds a
// bounded buffer and is cut off past it.
import http2 from "node:http2";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { StreamSessionRequestSchema, StreamSessionResponseSchema } from "@/lib/gen/macp/v1/core_pb";
import { agent, clientFor, FrameQueue, newSessionId, tempDir, waitFor } from "./harness";
import { cleanUp, dirs, start } from "./__fixtures__/runtime-scale-kit";

afterEach(cleanUp);

/** A raw HTTP/2 gRPC StreamSession subscriber that subscribes and then does not read. */
function stalledSubscriber(url: string, identity: string, sessionId: string, afterSequence = 0) {
  const session = http2.connect(url);
  session.on("error", () => undefined);
  const req = session.request({
    ":method": "POST",
    ":path": "/macp.v1.MACPRuntimeService/StreamSession",
    "content-type": "application/grpc+proto",
    te: "trailers",
    authorization: `Bearer ${identity}`,
  });
  const msg = toBinary(
    StreamSessionRequestSchema,
    create(StreamSessionRequestSchema, { subscribeSessionId: sessionId, afterSequence: BigInt(afterSequence) }),
  );
  const frame = Buffer.alloc(5 + msg.length);
  frame.writeUInt32BE(msg.length, 1);
  Buffer.from(msg).copy(frame, 5);
  req.write(frame);
  req.pause();
  req.on("error", () => undefined); // reset by leave() or by the runtime's shutdown
  let buf = Buffer.alloc(0);
  let envelopes = 0;
  const trailers = new Promise<{ status: string; message: string }>((resolve) => {
    req.on("trailers", (t) => resolve({ status: String(t["grpc-status"]), message: decodeURIComponent(String(t["grpc-message"] ?? "")) }));
  });
  req.on("data", (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 5 && buf.length >= 5 + buf.readUInt32BE(1)) {
      const len = buf.readUInt32BE(1);
      if (fromBinary(StreamSessionResponseSchema, buf.subarray(5, 5 + len)).response.case === "envelope") envelopes++;
      buf = buf.subarray(5 + len);
    }
  });
  return {
    async resumeAndFinish() {
      req.resume();
      const t = await trailers;
      req.close();
      session.close();
      return { ...t, envelopes };
    },
    leave() {
      req.close();
      session.destroy();
    },
  };
}

describe.each(["grpc-js", "connect"])("a subscriber that stops reading (%s server)", (server) => {
  const MiB = 1_048_576;
  const context = new Uint8Array(1_000_000).fill(66);

  it("holds one history page while it does not read, and nothing once it leaves", async () => {
    const dataDir = tempDir("baton-stall-");
    dirs.push(dataDir);
    const rt = await start({ MACP_MEMORY_ONLY: "0", MACP_DATA_DIR: dataDir, MACP_GRPC_SERVER: server });
    const sid = newSessionId();
    const o = agent(rt, "o", sid);
    await o.start(["o", "t"]);
    await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" });
    for (let i = 0; i < 20; i++)
      expect((await o.send("HandoffContext", { handoffId: "h1", contentType: "text/plain", context })).ok).toBe(true);
    const before = rt.kernel.stats().historyRecords;
    const stalled = Array.from({ length: 4 }, () => stalledSubscriber(rt.url, "o", sid));
    await waitFor(() => rt.subscriptions.stats().streams === 4, 5_000, "subscribed");
    await waitFor(() => rt.kernel.stats().historyRecords - before >= 4 * 3, 5_000, "first pages read");
    await new Promise((r) => setTimeout(r, 300)); // give a runaway reader the chance to read on
    // Per subscriber: the first page (start, offer, one 1 MB context) and at most the next one; never the 20 MB history.
    const read = rt.kernel.stats().historyRecords - before;
    expect(read).toBeLessThanOrEqual(4 * 5);
    expect(rt.subscriptions.stats().bufferedBytes).toBe(0); // history is not queued, it waits in storage
    for (const s of stalled) s.leave();
    await waitFor(() => rt.subscriptions.stats().streams === 0, 5_000, "streams released");
    expect(rt.kernel.stats().sessionSubscribers).toBe(0);
  });

  it("is cut off past its buffer's bytes with RESOURCE_EXHAUSTED and a resume hint; nothing stays held", async () => {
    const rt = await start({ MACP_SUBSCRIBER_BUFFER_BYTES: String(4 * MiB), MACP_GRPC_SERVER: server });
    const sid = newSessionId();
    const o = agent(rt, "o", sid);
    await o.start(["o", "t"]);
    await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" });
    const stalled = stalledSubscriber(rt.url, "o", sid);
    await waitFor(() => rt.kernel.stats().sessionSubscribers === 1, 5_000, "live");
    let peak = 0;
    for (let i = 0; i < 12; i++) {
      expect((await o.send("HandoffContext", { handoffId: "h1", contentType: "text/plain", context })).ok).toBe(true);
      peak = Math.max(peak, rt.subscriptions.stats().bufferedBytes);
    }
    await waitFor(() => rt.kernel.stats().sessionSubscribers === 0, 5_000, "cut off");
    // Never more than the byte bound (one envelope may cross it), although 12 MB were sent.
    expect(peak).toBeLessThanOrEqual(4 * MiB + 1.1 * MiB);
    // Cut off: its queue is dropped. The stream itself ends once the peer reads up to the status.
    expect(rt.subscriptions.stats()).toMatchObject({ streams: 1, bufferedBytes: 0, bufferedItems: 0 });
    const end = await stalled.resumeAndFinish();
    await waitFor(() => rt.subscriptions.stats().streams === 0, 5_000, "stream ended");
    expect(end.status).toBe(String(Code.ResourceExhausted));
    const m = /after_sequence=(\d+)/.exec(end.message);
    expect(m, end.message).not.toBeNull();
    const resumeFrom = Number(m![1]);
    expect(resumeFrom).toBe(end.envelopes);
    expect(resumeFrom).toBeLessThan(14);
    // Resuming from the hint delivers exactly the rest, from storage.
    const rest: string[] = [];
    const frames = new FrameQueue();
    frames.push({ subscribeSessionId: sid, afterSequence: BigInt(resumeFrom) });
    const ac = new AbortController();
    for await (const r of clientFor(rt, "o").streamSession(frames, { signal: ac.signal })) {
      if (r.response.case === "envelope") rest.push(r.response.value.messageType);
      if (rest.length === 14 - resumeFrom) break;
    }
    ac.abort();
    expect(rest).toHaveLength(14 - resumeFrom);
  });
});
