// loadSessionPreview against the in-memory fake runtime: the folded first
// view, the size cap, a slow runtime, a missing session, and no upstream
// subscription left open afterwards.
import { describe, expect, it } from "vitest";
import type { SubscribeSessionResponse } from "@/lib/gen/baton/v1/console_pb";
import { decodeHandover, encodeHandover, windowForHandover } from "@/lib/views/session-handover";
import { applySubscribeBatch, beginConnection, eventCount, resumeAfterSequence } from "@/lib/views/session-stream-state";
import { createGateway } from "./gateway";
import { sessionStream } from "./session-stream";
import { loadSessionPreview, SessionPreviews } from "./session-preview";
import { FakeRuntime } from "./testing/fake-runtime";
import { handoffScript, OWNER, TARGET } from "./testing/scenario";

/** Waits until the gateway's catalog feeder follows the open sessions: its reads are the baseline. */
async function feederSettled(gw: ReturnType<typeof createGateway>, open = 1): Promise<void> {
  for (let i = 0; i < 400 && (gw.feeder.followedCount < open || gw.feeder.status().backfilling); i++)
    await new Promise((r) => setTimeout(r, 5));
}

function setup() {
  const rt = new FakeRuntime();
  const gw = createGateway({ runtime: rt, graceMs: 0, flushMs: 5, heartbeatMs: 60_000 });
  return { rt, gw };
}

describe("loadSessionPreview", () => {
  it("folds the whole history with the shared reducers and stops at caught_up", async () => {
    const { rt, gw } = setup();
    const s = handoffScript();
    rt.start(s.start("hand over payments"), [OWNER, TARGET]);
    rt.append(s.offer());
    rt.append(s.context());
    rt.append(s.accept());
    // The catalog follows the open session: that (and its WatchSessions) is the baseline.
    for (let i = 0; i < 200 && (gw.feeder.followedCount < 1 || gw.feeder.status().backfilling); i++)
      await new Promise((r) => setTimeout(r, 5));
    const base = rt.openStreams;
    const p = await loadSessionPreview(gw.streamDeps, s.sessionId, { timeoutMs: 2_000 });
    expect(p.kind).toBe("ready");
    if (p.kind !== "ready") return;
    expect(p.state.events.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
    expect(p.state.view.intent).toBe("hand over payments");
    expect(p.state.view.phase).toBe("Accepted");
    expect(p.state.caughtUp).toBe(true);
    expect(p.state.metadata?.sessionId).toBe(s.sessionId);
    // The upstream passive subscription is released at once.
    await new Promise((r) => setTimeout(r, 20));
    expect(rt.openStreams).toBe(base);
    gw.close();
  });

  it("skips sessions above the event cap without reading their history", async () => {
    const { rt, gw } = setup();
    const s = handoffScript();
    rt.start(s.start(), [OWNER, TARGET]);
    for (let i = 0; i < 5; i++) rt.append(s.context("h1", `step ${i}`));
    await feederSettled(gw);
    const base = rt.calls.subscribe;
    const p = await loadSessionPreview(gw.streamDeps, s.sessionId, { maxEvents: 3 });
    expect(p).toEqual({ kind: "skipped", reason: "too-large", detail: "6 events" });
    expect(rt.calls.subscribe).toBe(base);
    gw.close();
  });

  it("is off with a cap of 0, without asking the runtime", async () => {
    const { rt, gw } = setup();
    const s = handoffScript();
    rt.start(s.start(), [OWNER, TARGET]);
    expect(await loadSessionPreview(gw.streamDeps, s.sessionId, { maxEvents: 0 })).toEqual({ kind: "skipped", reason: "disabled" });
    expect(rt.calls.getSession).toBe(0);
    gw.close();
  });

  it("gives up when the runtime is slower than the time budget", async () => {
    const { rt, gw } = setup();
    const s = handoffScript();
    rt.start(s.start(), [OWNER, TARGET]);
    rt.getSessionDelayMs = 500;
    const p = await loadSessionPreview(gw.streamDeps, s.sessionId, { timeoutMs: 30 });
    expect(p).toEqual({ kind: "skipped", reason: "timeout" });
    gw.close();
  });

  it("reports a session the runtime does not know", async () => {
    const { gw } = setup();
    const p = await loadSessionPreview(gw.streamDeps, "0b1c2d3e-0000-4000-8000-000000000000");
    expect(p.kind).toBe("not-found");
    gw.close();
  });
});

describe("SessionPreviews (kept folds)", () => {
  /** Records the after_sequence of every upstream subscription. */
  function spied() {
    const { rt, gw } = setup();
    const after: number[] = [];
    const inner = rt.subscribeSession.bind(rt);
    rt.subscribeSession = (sessionId: string, afterSequence: number, signal: AbortSignal) => {
      after.push(afterSequence);
      return inner(sessionId, afterSequence, signal);
    };
    return { rt, gw, after };
  }

  it("resumes a kept fold from its last sequence: only new events are read, the result equals a full fold", async () => {
    const { rt, gw, after } = spied();
    const s = handoffScript();
    rt.start(s.start("hand over payments"), [OWNER, TARGET]);
    rt.append(s.offer());
    await feederSettled(gw);
    after.length = 0;
    const baseStreams = rt.openStreams;
    const previews = new SessionPreviews(gw.streamDeps, { timeoutMs: 2_000 });
    const first = await previews.load(s.sessionId);
    expect(first.kind).toBe("ready");
    rt.append(s.context("h1", "one"));
    rt.append(s.accept());
    const second = await previews.load(s.sessionId);
    expect(after).toEqual([0, 2]);
    const full = await loadSessionPreview(gw.streamDeps, s.sessionId, { timeoutMs: 2_000 });
    if (second.kind !== "ready" || full.kind !== "ready") throw new Error("expected both ready");
    expect(second.state.events.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
    // (lastActivityMs is when the gateway saw the last event: it differs per read.)
    expect({ ...second.state.view, lastActivityMs: 0 }).toEqual({ ...full.state.view, lastActivityMs: 0 });
    expect(second.state.lastSequence).toBe(4);
    expect(second.state.caughtUp).toBe(true);
    // Nothing new: a third view reads no events at all.
    const third = await previews.load(s.sessionId);
    expect(after).toEqual([0, 2, 0]); // (the 0 is the full fold above; the kept one subscribes to nothing)
    expect(third.kind === "ready" && third.state.events.length).toBe(4);
    // Every preview subscription is released (what stays open is the catalog feeder's).
    for (let i = 0; i < 100 && rt.openStreams > baseStreams; i++) await new Promise((r) => setTimeout(r, 10));
    expect(rt.openStreams).toBe(baseStreams);
    gw.close();
  });

  it("finishes a slow first fold in the background, so the next view is ready", async () => {
    const { rt, gw } = setup();
    const s = handoffScript();
    rt.start(s.start(), [OWNER, TARGET]);
    rt.getSessionDelayMs = 80;
    const previews = new SessionPreviews(gw.streamDeps, { timeoutMs: 20 });
    expect(await previews.load(s.sessionId)).toEqual({ kind: "skipped", reason: "timeout" });
    // (Polled: a busy machine may take a while.)
    for (let i = 0; i < 250 && previews.held.sessions === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(previews.held.sessions).toBe(1);
    rt.getSessionDelayMs = 0;
    expect((await previews.load(s.sessionId)).kind).toBe("ready");
    gw.close();
  });

  it("keeps what a fold cut short by its time bound had read, and resumes from there", async () => {
    const { rt, gw, after } = spied();
    const s = handoffScript();
    rt.start(s.start(), [OWNER, TARGET]);
    for (let i = 0; i < 30; i++) rt.append(s.context("h1", `step ${i}`));
    // A runtime that hands out one event every 4 ms.
    const inner = rt.subscribeSession;
    rt.subscribeSession = async function* (sessionId: string, afterSequence: number, signal: AbortSignal) {
      for await (const env of inner(sessionId, afterSequence, signal)) {
        await new Promise((r) => setTimeout(r, 4));
        yield env;
      }
    };
    await feederSettled(gw);
    after.length = 0;
    const previews = new SessionPreviews(gw.streamDeps, { timeoutMs: 5, foldTimeoutMs: 40 });
    let ready = null;
    for (let i = 0; i < 400 && !ready; i++) {
      const r = await previews.load(s.sessionId);
      if (r.kind === "ready") ready = r;
      else await new Promise((res) => setTimeout(res, 50));
    }
    if (!ready) throw new Error("never ready");
    expect(ready.state.events.map((e) => e.sequence)).toEqual(Array.from({ length: 31 }, (_, i) => i + 1));
    // Several folds, each starting where the last one stopped.
    expect(after.length).toBeGreaterThan(1);
    expect(after[0]).toBe(0);
    for (let i = 1; i < after.length; i++) expect(after[i]).toBeGreaterThan(after[i - 1] ?? 0);
    gw.close();
  });

  it("keeps at most its byte budget, least recently viewed out first", async () => {
    const { rt, gw } = setup();
    const sessions = [handoffScript(), handoffScript(), handoffScript()];
    for (const s of sessions) {
      rt.start(s.start(), [OWNER, TARGET]);
      rt.append(s.context("h1", "x".repeat(1_000)));
    }
    // Room for two of these sessions (about 1.5 KB each), not three.
    const previews = new SessionPreviews(gw.streamDeps, { timeoutMs: 2_000, cacheBytes: 3_500 });
    for (const s of sessions) expect((await previews.load(s.sessionId)).kind).toBe("ready");
    expect(previews.held.sessions).toBe(2);
    expect(previews.held.bytes).toBeLessThanOrEqual(3_500);
    // A session larger than the whole budget gets no first view (the fold stops reading).
    const big = handoffScript();
    rt.start(big.start(), [OWNER, TARGET]);
    rt.append(big.context("h1", "y".repeat(5_000)));
    rt.append(big.context("h1", "z"));
    expect(await previews.load(big.sessionId)).toEqual({ kind: "skipped", reason: "too-large", detail: "more than 3 KiB of payloads" });
    expect(previews.held.sessions).toBe(2);
    gw.close();
  });

  it("answers disabled, too large and not found like loadSessionPreview", async () => {
    const { rt, gw } = setup();
    const s = handoffScript();
    rt.start(s.start(), [OWNER, TARGET]);
    for (let i = 0; i < 5; i++) rt.append(s.context("h1", `step ${i}`));
    expect(await new SessionPreviews(gw.streamDeps, { maxEvents: 0 }).load(s.sessionId)).toEqual({ kind: "skipped", reason: "disabled" });
    expect(await new SessionPreviews(gw.streamDeps, { maxEvents: 3 }).load(s.sessionId)).toEqual({
      kind: "skipped",
      reason: "too-large",
      detail: "6 events",
    });
    expect((await new SessionPreviews(gw.streamDeps).load("0b1c2d3e-0000-4000-8000-000000000000")).kind).toBe("not-found");
    gw.close();
  });
});

describe("the first view's hand-over to the live stream (one fold)", () => {
  it("resumes the gateway's stream after the handed state: an event written in between arrives once, nothing is replayed", async () => {
    const { rt, gw } = setup();
    const s = handoffScript();
    rt.start(s.start("hand over payments"), [OWNER, TARGET]);
    rt.append(s.offer());
    for (let i = 0; i < 12; i++) rt.append(s.context("h1", `note ${i}`));
    await feederSettled(gw);
    const previews = new SessionPreviews(gw.streamDeps, { timeoutMs: 2_000 });
    const first = await previews.load(s.sessionId);
    if (first.kind !== "ready") throw new Error(`expected a first view, got ${first.kind}`);
    // What the page carries: a window of the last 5 events, through text.
    const handed = decodeHandover(encodeHandover(windowForHandover(first.state, { events: 5 })), s.sessionId);
    expect(handed.heldFrom).toBe(10);
    expect(handed.lastSequence).toBe(14);
    // Between the server's render and the browser's stream.
    rt.append(s.context("h1", "late note"));
    rt.append(s.accept());
    const ac = new AbortController();
    const messages: SubscribeSessionResponse[] = [];
    for await (const m of sessionStream(gw.streamDeps, s.sessionId, Number(resumeAfterSequence(handed)), ac.signal)) {
      messages.push(m);
      if (m.item.case === "caughtUp") break;
    }
    ac.abort();
    const sequences = messages.flatMap((m) => (m.item.case === "event" ? [Number(m.item.value.sequence)] : []));
    expect(sequences).toEqual([15, 16]);
    const live = applySubscribeBatch(beginConnection(handed), messages).state;
    expect(live.events.map((e) => e.sequence)).toEqual([10, 11, 12, 13, 14, 15, 16]);
    expect(live.duplicatesDropped).toBe(0);
    expect(eventCount(live)).toBe(16);
    // The same view as one fold of the whole history, but for the lists the window left out.
    const whole = await loadSessionPreview(gw.streamDeps, s.sessionId, { timeoutMs: 2_000 });
    if (whole.kind !== "ready") throw new Error("expected the whole fold");
    expect(live.view.phase).toBe(whole.state.view.phase);
    expect(live.view.events).toBe(whole.state.view.events);
    const h1 = live.view.handoff?.offers[0];
    expect((h1?.contexts.length ?? 0) + (live.omitted?.contexts.h1?.count ?? 0)).toBe(whole.state.view.handoff?.offers[0]?.contexts.length);
    gw.close();
  });
});
