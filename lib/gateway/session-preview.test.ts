// loadSessionPreview against the in-memory fake runtime: the folded first
// view, the size cap, a slow runtime, a missing session, and no upstream
// subscription left open afterwards.
import { describe, expect, it } from "vitest";
import { createGateway } from "./gateway";
import { loadSessionPreview } from "./session-preview";
import { FakeRuntime } from "./testing/fake-runtime";
import { handoffScript, OWNER, TARGET } from "./testing/scenario";

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
    for (let i = 0; i < 200 && (gw.feeder.followedCount < 1 || gw.feeder.status().backfilling); i++) await new Promise((r) => setTimeout(r, 5));
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
    const p = await loadSessionPreview(gw.streamDeps, s.sessionId, { maxEvents: 3 });
    expect(p).toEqual({ kind: "skipped", reason: "too-large", detail: "6 events" });
    expect(rt.calls.subscribe).toBe(0);
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
