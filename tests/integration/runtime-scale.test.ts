// History at scale: what the runtime holds and reads is bounded by what is in
// use, not by history. Restart reads only open sessions; history is replayed
// from storage page by page with no gap before live delivery; a subscriber
// that stops reading holds a bounded buffer and is cut off past it; each
// identity holds a limited number of streams. Assertions are on behaviour and
// counts (what the store was asked to read, what buffers hold), not on time.
import fs from "node:fs";
import http2 from "node:http2";
import { create, fromBinary, toBinary, toJson } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { SessionMetadataSchema, StreamSessionRequestSchema, StreamSessionResponseSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { DEFAULT_CONFIGURATION_VERSION, DEFAULT_POLICY_ID, HANDOFF_MODE, MODE_VERSION, TASK_MODE } from "@/lib/macp/constants";
import { buildEnvelope } from "@/lib/macp/payloads";
import type { RunningRuntime } from "@/lib/runtime";
import type { Identity } from "@/lib/runtime/auth";
import { HISTORY_PAGE_RECORDS } from "@/lib/runtime/kernel";
import { agent, clientFor, FrameQueue, newSessionId, startTestRuntime, tempDir, waitFor, type RuntimeClient } from "./harness";

const dirs: string[] = [];
const running: RunningRuntime[] = [];
afterEach(async () => {
  for (const rt of running.splice(0)) await rt.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function start(env: Record<string, string> = {}): Promise<RunningRuntime> {
  const rt = await startTestRuntime(env);
  running.push(rt);
  return rt;
}

async function stop(rt: RunningRuntime): Promise<void> {
  running.splice(running.indexOf(rt), 1);
  await rt.close();
}

const who = (sender: string): Identity => ({
  sender,
  canStartSessions: true,
  allowedModes: [],
  canManageRegistry: false,
  isObserver: false,
});

/** Admit envelopes in-process (the same admission path as Send, without the transport), many at a time. */
async function sendAll(rt: RunningRuntime, items: { as: string; env: Envelope }[]): Promise<void> {
  const acks = await Promise.all(items.map((i) => rt.kernel.send(who(i.as), i.env)));
  const bad = acks.find((a) => !a.ok);
  if (bad) throw new Error(`${bad.error?.code}: ${bad.error?.message}`);
}

function startEnv(sessionId: string, mode: string, participants: string[], messageId: string): Envelope {
  return buildEnvelope({
    mode,
    messageType: "SessionStart",
    sessionId,
    messageId,
    payload: {
      intent: "scale",
      participants,
      modeVersion: MODE_VERSION,
      configurationVersion: DEFAULT_CONFIGURATION_VERSION,
      ttlMs: 3_600_000n,
    },
  });
}

function commitEnv(sessionId: string, mode: string, action: string, positive: boolean): Envelope {
  return buildEnvelope({
    mode,
    messageType: "Commitment",
    sessionId,
    payload: {
      commitmentId: `c-${sessionId}`,
      action,
      authorityScope: "scale",
      reason: "done",
      modeVersion: MODE_VERSION,
      configurationVersion: DEFAULT_CONFIGURATION_VERSION,
      policyVersion: DEFAULT_POLICY_ID,
      outcomePositive: positive,
    },
  });
}

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

/** Open a StreamSession subscription; resolves once the first response (or the error) arrived. */
async function subscription(client: RuntimeClient, sessionId: string) {
  const frames = new FrameQueue();
  frames.push({ subscribeSessionId: sessionId });
  const ac = new AbortController();
  const it = client.streamSession(frames, { signal: ac.signal })[Symbol.asyncIterator]();
  let error: ConnectError | null = null;
  try {
    await it.next();
  } catch (e) {
    error = ConnectError.from(e);
  }
  return { error, close: () => (frames.end(), ac.abort()) };
}

async function watcher(client: RuntimeClient) {
  const ac = new AbortController();
  const it = client.watchSessions({}, { signal: ac.signal })[Symbol.asyncIterator]();
  let error: ConnectError | null = null;
  try {
    await it.next();
  } catch (e) {
    error = ConnectError.from(e);
  }
  return { error, close: () => ac.abort() };
}

describe("restart with thousands of closed sessions", () => {
  it("reads only the open and suspended sessions, and answers the closed ones from storage exactly as before", async () => {
    const dataDir = tempDir("baton-scale-");
    dirs.push(dataDir);
    const env = { MACP_MEMORY_ONLY: "0", MACP_DATA_DIR: dataDir };
    const first = await start(env);
    const closed = Array.from({ length: 2_000 }, () => newSessionId());
    const open = Array.from({ length: 5 }, () => newSessionId());
    const suspended = Array.from({ length: 2 }, () => newSessionId());
    const O = "agent://o";
    const T = "agent://t";
    const modeOf = (i: number) => (i % 2 === 0 ? HANDOFF_MODE : TASK_MODE);
    // Five envelopes per closed session, handoff and task alternating, 250 sessions per step.
    for (let b = 0; b < closed.length; b += 250) {
      const batch = closed.slice(b, b + 250).map((sid, j) => ({ sid, mode: modeOf(b + j) }));
      await sendAll(
        first,
        batch.map(({ sid, mode }) => ({ as: O, env: startEnv(sid, mode, [O, T], `${sid}-start`) })),
      );
      await sendAll(
        first,
        batch.map(({ sid, mode }) => ({
          as: O,
          env:
            mode === HANDOFF_MODE
              ? buildEnvelope({ mode, messageType: "HandoffOffer", sessionId: sid, payload: { handoffId: "h1", targetParticipant: T } })
              : buildEnvelope({
                  mode,
                  messageType: "TaskRequest",
                  sessionId: sid,
                  payload: { taskId: "t1", title: "t", requestedAssignee: T },
                }),
        })),
      );
      await sendAll(
        first,
        batch.map(({ sid, mode }) => ({
          as: mode === HANDOFF_MODE ? O : T,
          env:
            mode === HANDOFF_MODE
              ? buildEnvelope({
                  mode,
                  messageType: "HandoffContext",
                  sessionId: sid,
                  payload: { handoffId: "h1", contentType: "text/plain", context: new TextEncoder().encode("runbook") },
                })
              : buildEnvelope({ mode, messageType: "TaskAccept", sessionId: sid, payload: { taskId: "t1", assignee: T } }),
        })),
      );
      await sendAll(
        first,
        batch.map(({ sid, mode }) => ({
          as: T,
          env:
            mode === HANDOFF_MODE
              ? buildEnvelope({
                  mode,
                  messageType: "HandoffAccept",
                  sessionId: sid,
                  messageId: `${sid}-accept`,
                  payload: { handoffId: "h1" },
                })
              : buildEnvelope({
                  mode,
                  messageType: "TaskComplete",
                  sessionId: sid,
                  messageId: `${sid}-accept`,
                  payload: { taskId: "t1", assignee: T, summary: "ok" },
                }),
        })),
      );
      await sendAll(
        first,
        batch.map(({ sid, mode }) => ({
          as: O,
          env: commitEnv(sid, mode, mode === HANDOFF_MODE ? "handoff.accepted" : "task.completed", true),
        })),
      );
    }
    for (const sid of [...open, ...suspended]) {
      await sendAll(first, [{ as: O, env: startEnv(sid, HANDOFF_MODE, [O, T], `${sid}-start`) }]);
    }
    for (const sid of open) {
      await sendAll(first, [
        {
          as: O,
          env: buildEnvelope({
            mode: HANDOFF_MODE,
            messageType: "HandoffOffer",
            sessionId: sid,
            payload: { handoffId: "h1", targetParticipant: T },
          }),
        },
      ]);
    }
    for (const sid of suspended) await first.kernel.control(who(O), "suspend", sid, "later");
    // Closed sessions left memory as they closed.
    expect(first.kernel.stats()).toMatchObject({ resident: open.length + suspended.length, open: open.length });
    const before = (await clientFor(first, O).listSessions({})).sessions.map((m) => toJson(SessionMetadataSchema, m));
    expect(before).toHaveLength(closed.length + open.length + suspended.length);
    await stop(first);

    const second = await start(env);
    const resident = open.length + suspended.length;
    // What the restart read: the resident rows of the session index and those sessions' records (start + offer, start + suspend).
    expect(second.kernel.loadReport).toMatchObject({ resident, open: open.length, indexRows: resident, records: 2 * resident, indexed: 0 });
    expect(second.kernel.storageReads()).toMatchObject({ indexRows: resident, records: 2 * resident, messageLookups: 0 });
    expect(second.kernel.stats()).toMatchObject({ resident, closedCached: 0 });

    // Every answer about the closed sessions is the same as before the restart, read from storage on demand.
    const c = clientFor(second, O);
    expect((await c.listSessions({})).sessions.map((m) => toJson(SessionMetadataSchema, m))).toEqual(before);
    // On grpc-js the answer is assembled from the stored summaries; it is the same list as built from messages.
    expect(second.kernel.listSessions().map((m) => toJson(SessionMetadataSchema, m))).toEqual(before);
    const oldest = closed[0] as string;
    expect((await c.getSession({ sessionId: oldest })).metadata?.state).toBe(SessionState.RESOLVED);
    const resend = await agent(second, T, oldest).send("HandoffAccept", { handoffId: "h1" }, { messageId: `${oldest}-accept` });
    expect(resend).toMatchObject({ ok: true, duplicate: true, sessionState: SessionState.RESOLVED });
    expect((await agent(second, T, oldest).send("HandoffAccept", { handoffId: "h1" })).error?.code).toBe("SESSION_NOT_OPEN");
    await expect(clientFor(second, "agent://stranger").getSession({ sessionId: oldest })).rejects.toMatchObject({
      code: Code.PermissionDenied,
    });
    // WatchSessions' snapshot pages through the index: every session once, in the order they started.
    const ac = new AbortController();
    const seen: string[] = [];
    for await (const r of clientFor(second, O).watchSessions({}, { signal: ac.signal })) {
      seen.push(r.event?.session?.sessionId ?? "");
      if (seen.length === before.length) break;
    }
    ac.abort();
    expect(seen).toEqual(before.map((m) => (m as { sessionId: string }).sessionId));
    // Reading a few closed sessions kept at most the configured number of them in memory.
    expect(second.kernel.stats().closedCached).toBeLessThanOrEqual(second.config.closedSessionCache);
  }, 60_000);
});

describe("history replay", () => {
  it("reads history in pages as the subscriber reads, then joins live delivery with no gap and no duplicate", async () => {
    const dataDir = tempDir("baton-replay-");
    dirs.push(dataDir);
    const rt = await start({ MACP_MEMORY_ONLY: "0", MACP_DATA_DIR: dataDir });
    const sid = newSessionId();
    const o = agent(rt, "o", sid);
    await o.start(["o", "t"], { messageId: "m0" });
    await o.send("HandoffOffer", { handoffId: "h1", targetParticipant: "t" }, { messageId: "m1" });
    const sent = ["m0", "m1"];
    const ctx = (i: number) =>
      o.send(
        "HandoffContext",
        { handoffId: "h1", contentType: "text/plain", context: new TextEncoder().encode(`c${i}`) },
        { messageId: `m${i}` },
      );
    const historyLength = 3 * HISTORY_PAGE_RECORDS;
    for (let i = 2; i < historyLength; i += 50) {
      const ids = Array.from({ length: Math.min(50, historyLength - i) }, (_, k) => i + k);
      await Promise.all(ids.map((n) => ctx(n)));
      sent.push(...ids.map((n) => `m${n}`));
    }
    const pagesBefore = rt.kernel.stats().historyPages;
    const got: string[] = [];
    const frames = new FrameQueue();
    frames.push({ subscribeSessionId: sid });
    const ac = new AbortController();
    const duringReplay = 100;
    const afterAttach = 20;
    const total = historyLength + duringReplay + afterAttach;
    let live = 0;
    const reader = (async () => {
      for await (const r of clientFor(rt, "t").streamSession(frames, { signal: ac.signal })) {
        if (r.response.case !== "envelope") continue;
        got.push(r.response.value.messageId);
        // A slow reader: while it reads the history, the session keeps going.
        if (got.length % 3 === 0 && live < duringReplay) {
          const n = historyLength + live++;
          sent.push(`m${n}`);
          await ctx(n);
        }
        if (got.length === total) break;
      }
    })();
    // Caught up: the subscription is now live. The next envelopes come from the live path.
    await waitFor(() => live === duringReplay && got.length === historyLength + duringReplay, 20_000, "replay caught up");
    await waitFor(() => rt.kernel.stats().sessionSubscribers === 1, 5_000, "live listener attached");
    for (let k = 0; k < afterAttach; k++) {
      const n = historyLength + duringReplay + k;
      sent.push(`m${n}`);
      await ctx(n);
    }
    await waitFor(() => got.length === total, 20_000, "all envelopes");
    ac.abort();
    await reader.catch(() => undefined);
    expect(got).toEqual(sent);
    expect(new Set(got).size).toBe(total);
    // The history was read from storage in several pages, not in one load.
    expect(rt.kernel.stats().historyPages - pagesBefore).toBeGreaterThanOrEqual(3);
  }, 60_000);
});

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

describe("subscriptions per identity", () => {
  it("caps StreamSession and WatchSessions streams per identity; observers are not capped by default", async () => {
    const rt = await start({ MACP_MAX_SUBSCRIPTIONS: "2", MACP_DEV_OBSERVERS: "baton:console" });
    const sid = newSessionId();
    await agent(rt, "o", sid).start(["o", "t"]);
    const o = clientFor(rt, "o");
    const a = await subscription(o, sid);
    const b = await watcher(o);
    expect([a.error, b.error]).toEqual([null, null]);
    const c = await subscription(o, sid);
    expect(c.error?.code).toBe(Code.ResourceExhausted);
    expect(c.error?.rawMessage).toMatch(/o already has 2 open subscriptions .* the limit is 2 \(MACP_MAX_SUBSCRIPTIONS/);
    expect((await watcher(o)).error?.code).toBe(Code.ResourceExhausted);
    // Another identity has its own allowance.
    const t = await subscription(clientFor(rt, "t"), sid);
    expect(t.error).toBeNull();
    // Closing one frees a place.
    a.close();
    await waitFor(() => rt.subscriptions.heldBy("o") === 1, 5_000, "released");
    const d = await subscription(o, sid);
    expect(d.error).toBeNull();
    // The console's observer identity holds as many as it needs.
    const consoleStreams = await Promise.all(Array.from({ length: 5 }, () => subscription(clientFor(rt, "baton:console"), sid)));
    expect(consoleStreams.map((s) => s.error)).toEqual([null, null, null, null, null]);
    expect(rt.subscriptions.stats()).toMatchObject({ refused: 2 });
    for (const s of [b, c, t, d, ...consoleStreams]) s.close();
    await waitFor(() => rt.subscriptions.stats().streams === 0, 5_000, "all released");
  });

  it("takes max_subscriptions from the identity's token, for observers too", async () => {
    const tokens = [
      { token: "tok-a", sender: "agent-a", max_subscriptions: 1 },
      { token: "tok-obs", sender: "auditor", is_observer: true, max_subscriptions: 1 },
      { token: "tok-console", sender: "baton:console", is_observer: true },
    ];
    const rt = await start({ MACP_AUTH_TOKENS_JSON: JSON.stringify(tokens), MACP_MAX_SUBSCRIPTIONS: "3" });
    const sid = newSessionId();
    const starter = agent(rt, "tok-a", sid);
    expect((await starter.start(["agent-a", "b"])).ok).toBe(true);
    const a = clientFor(rt, "tok-a");
    const first = await subscription(a, sid);
    expect(first.error).toBeNull();
    expect((await subscription(a, sid)).error?.code).toBe(Code.ResourceExhausted);
    const auditor = clientFor(rt, "tok-obs");
    const w = await watcher(auditor);
    expect(w.error).toBeNull();
    expect((await subscription(auditor, sid)).error?.rawMessage).toMatch(/auditor already has 1 .* limit is 1/);
    const consoleStreams = await Promise.all(Array.from({ length: 4 }, () => subscription(clientFor(rt, "tok-console"), sid)));
    expect(consoleStreams.every((s) => s.error === null)).toBe(true);
    for (const s of [first, w, ...consoleStreams]) s.close();
  });
});
