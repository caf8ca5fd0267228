// The load generator's fan-out job (runtime-load.ts): passive StreamSession
// subscribers on one handoff session (connect-node clients, or lean
// node:http2 gRPC readers), envelopes sent at a fixed rate, and each
// envelope's delivery latency to every subscriber.
import { setMaxListeners } from "node:events";
import http2 from "node:http2";
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { StreamSessionRequestSchema, StreamSessionResponseSchema } from "@/lib/gen/macp/v1/core_pb";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_TYPES } from "@/lib/macp/constants";
import { errorText, sleep, summarize, Samples, type FanoutJob, type FanoutResult } from "./runtime-common";
import { bearer, clientMeter, connection, contextPayload, envelope, openHandoff } from "./runtime-load-client";

type Frame = MessageInitShape<typeof StreamSessionRequestSchema>;

export async function runFanout(job: FanoutJob): Promise<FanoutResult> {
  const sender = connection(job.url);
  const owner = "fan-owner";
  const target = "fan-target";
  const run = Math.random().toString(36).slice(2, 8);
  const nConn = Math.max(1, Math.ceil(job.subscribers / job.subscribersPerConnection));
  const conns = job.subscriberClient === "connect" ? Array.from({ length: nConn }, () => connection(job.url)) : [];
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // one listener per subscriber stream
  const stopped = new Promise<void>((r) => stop.signal.addEventListener("abort", () => r(), { once: true }));

  // Per-envelope bookkeeping (only envelopes sent in the measured window).
  interface Tracked {
    sentAt: number;
    arrivals: number;
    last: number;
  }
  const tracked = new Map<string, Tracked>();
  const delivery = new Samples();
  const byTimestamp = new Samples();
  let deliveries = 0;
  let arrivals = 0;
  let streamErrors = 0;
  let firstError: string | undefined;
  const received = new Int32Array(job.subscribers);

  try {
    const sessionId = await openHandoff(sender.client, owner, target, run);
    const subHeaders = bearer(target);
    const tSub = performance.now();

    const onEnvelope = (i: number, env: Envelope) => {
      const t = performance.now();
      received[i]!++;
      arrivals++;
      const tr = tracked.get(env.messageId);
      if (tr) {
        delivery.push(t - tr.sentAt);
        byTimestamp.push(Date.now() - Number(env.timestampUnixMs));
        tr.arrivals++;
        tr.last = t;
        deliveries++;
      }
    };
    const onStreamError = (e: unknown) => {
      if (!stop.signal.aborted) {
        streamErrors++;
        firstError ??= errorText(e);
      }
    };
    let subs: Promise<void>[];
    if (job.subscriberClient === "connect") {
      subs = Array.from({ length: job.subscribers }, async (_, i) => {
        const frames = async function* (): AsyncGenerator<Frame> {
          yield { subscribeSessionId: sessionId, afterSequence: 0n };
          await stopped; // keep the request side open: a half-close ends the stream
        };
        try {
          for await (const res of conns[i % nConn]!.client.streamSession(frames(), { headers: subHeaders, signal: stop.signal })) {
            if (res.response.case === "envelope") onEnvelope(i, res.response.value);
          }
        } catch (e) {
          onStreamError(e);
        }
      });
    } else {
      subs = rawSubscribers(job.url, nConn, job.subscribers, sessionId, subHeaders.authorization, stop.signal, onEnvelope, onStreamError);
    }

    // Barrier: every subscriber has its history (SessionStart + offer).
    const setupDeadline = performance.now() + 60_000;
    for (;;) {
      let ready = 0;
      for (let i = 0; i < received.length; i++) if (received[i]! >= 2) ready++;
      if (ready === job.subscribers) break;
      if (streamErrors > 0) throw new Error(`subscriber failed during setup: ${firstError}`);
      if (performance.now() > setupDeadline) throw new Error(`only ${ready}/${job.subscribers} subscribers ready after 60 s`);
      await sleep(10);
    }
    const subscribeSetupMs = performance.now() - tSub;

    const payload = contextPayload(job.contextBytes);
    const headers = bearer(owner);
    const interval = 1000 / job.ratePerSecond;
    const warmupCount = Math.round((job.warmupMs / 1000) * job.ratePerSecond);
    const total = warmupCount + Math.round((job.durationMs / 1000) * job.ratePerSecond);
    const acks = new Samples();
    let sendFailures = 0;
    let sentInWindow = 0;
    let meterStop: null | (() => { cpuCores: number; eventLoopP99Ms: number }) = null;
    const sends: Promise<void>[] = [];
    const t0 = performance.now();
    for (let k = 0; k < total; k++) {
      const due = t0 + k * interval;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      if (k === warmupCount) meterStop = clientMeter();
      const measured = k >= warmupCount;
      const messageId = `${run}-fan-${k}`;
      const s = performance.now();
      if (measured) {
        tracked.set(messageId, { sentAt: s, arrivals: 0, last: 0 });
        sentInWindow++;
      }
      sends.push(
        sender.client.send({ envelope: envelope(sessionId, HANDOFF_TYPES.Context, messageId, payload) }, { headers }).then(
          (res) => {
            if (!res.ack?.ok) {
              sendFailures++;
              firstError ??= `send: ${res.ack?.error?.code}: ${res.ack?.error?.message}`;
            } else if (measured) acks.push(performance.now() - s);
          },
          (e) => {
            sendFailures++;
            firstError ??= `send: ${errorText(e)}`;
          },
        ),
      );
    }
    await Promise.all(sends);
    const expected = sentInWindow * job.subscribers;
    const drainDeadline = performance.now() + 5_000;
    while (deliveries < expected && performance.now() < drainDeadline && streamErrors === 0) await sleep(10);
    const clientStats = meterStop
      ? (meterStop as () => { cpuCores: number; eventLoopP99Ms: number })()
      : { cpuCores: NaN, eventLoopP99Ms: NaN };

    const last = new Samples();
    for (const tr of tracked.values()) if (tr.arrivals === job.subscribers) last.push(tr.last - tr.sentAt);
    stop.abort();
    await Promise.race([Promise.all(subs), sleep(2_000)]);
    return {
      subscribers: job.subscribers,
      connections: nConn,
      sentInWindow,
      sendFailures,
      expectedDeliveries: expected,
      deliveries,
      allArrivals: arrivals,
      missing: expected - deliveries,
      streamErrors,
      firstError,
      subscribeSetupMs,
      delivery: summarize(delivery.values()),
      lastSubscriber: summarize(last.values()),
      deliveryByTimestamp: summarize(byTimestamp.values()),
      ackLatency: summarize(acks.values()),
      client: clientStats,
    };
  } finally {
    stop.abort();
    for (const c of conns) c.manager.abort();
    sender.manager.abort();
  }
}

/**
 * Lean passive subscribers: plain node:http2 streams speaking gRPC framing,
 * every response fully decoded with the generated StreamSessionResponse
 * schema. A connect-node client costs ~25 µs of client CPU per received
 * message; with 1,000 subscribers co-located in one process at 20 envelopes/s
 * that alone would saturate the client's core and add its own queueing to the
 * measured latency (in production each subscriber has its own process).
 */
function rawSubscribers(
  url: string,
  nConn: number,
  count: number,
  sessionId: string,
  authorization: string,
  stop: AbortSignal,
  onEnvelope: (i: number, env: Envelope) => void,
  onError: (e: unknown) => void,
): Promise<void>[] {
  const sessions = Array.from({ length: nConn }, () => {
    const s = http2.connect(url);
    s.on("error", onError);
    return s;
  });
  stop.addEventListener("abort", () => sessions.forEach((s) => s.destroy()), { once: true });
  const hello = toBinary(
    StreamSessionRequestSchema,
    create(StreamSessionRequestSchema, { subscribeSessionId: sessionId, afterSequence: 0n }),
  );
  const helloFrame = Buffer.alloc(5 + hello.length);
  helloFrame.writeUInt32BE(hello.length, 1);
  helloFrame.set(hello, 5);
  return Array.from(
    { length: count },
    (_, i) =>
      new Promise<void>((resolve) => {
        const st = sessions[i % nConn]!.request({
          ":method": "POST",
          ":path": "/macp.v1.MACPRuntimeService/StreamSession",
          "content-type": "application/grpc+proto",
          te: "trailers",
          authorization,
        });
        st.write(helloFrame); // and keep the request side open
        let buf: Buffer = Buffer.alloc(0);
        st.on("data", (chunk: Buffer) => {
          buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
          while (buf.length >= 5) {
            const len = buf.readUInt32BE(1);
            if (buf.length < 5 + len) break;
            const res = fromBinary(StreamSessionResponseSchema, buf.subarray(5, 5 + len));
            buf = buf.subarray(5 + len);
            if (res.response.case === "envelope") onEnvelope(i, res.response.value);
            else if (res.response.case === "error") onError(new Error(`inline error ${res.response.value.code}`));
          }
        });
        st.on("trailers", (t) => {
          if (t["grpc-status"] !== "0") onError(new Error(`stream ended: grpc-status ${t["grpc-status"]} ${t["grpc-message"] ?? ""}`));
        });
        st.on("error", (e) => onError(e));
        st.on("close", () => resolve());
      }),
  );
}
