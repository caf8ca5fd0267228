// The embedded runtime over real gRPC on loopback: WatchSessions and the session lifecycle.
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { agent, clientFor, newSessionId, waitFor } from "./harness";
import { expectCode, rt, useTestRuntime, watch } from "./__fixtures__/runtime-kit";

useTestRuntime();

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
