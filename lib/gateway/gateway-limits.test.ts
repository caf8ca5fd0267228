// The per-person stream cap, GetSessionSummary and the gateway's counters, against an in-memory fake runtime.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { FakeRuntime } from "./testing/fake-runtime";
import { handoffScript } from "./testing/scenario";
import { cleanUp, run, settled, setup, waitFor } from "./__fixtures__/gateway-kit";

afterEach(cleanUp);

describe("per-person stream cap", () => {
  it("refuses a person's streams past the cap with RESOURCE_EXHAUSTED, and frees slots as streams end", async () => {
    const rt = new FakeRuntime();
    const a = handoffScript();
    rt.start(a.start(), [a.owner, a.target]);
    const { gw, client } = setup(rt, { maxStreamsPerPerson: 2, person: "alice" });
    await settled(gw, 1);
    const s1 = run((signal) => client.subscribeSession({ sessionId: a.sessionId }, { signal }));
    const s2 = run((signal) => client.watchSessionChanges({}, { signal }));
    await waitFor(() => s1.items.length > 0 && s2.items.length > 0, "two streams");
    const third = run((signal) => client.watchSessionChanges({}, { signal }));
    await third.done;
    const err = ConnectError.from(third.error);
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.rawMessage).toContain("BATON_MAX_STREAMS_PER_PERSON=2");
    // Unary reads are not streams: still answered.
    expect((await client.listSessionPage({})).total).toBe(1n);
    await s1.stop();
    await waitFor(() => gw.caps.count("alice") === 1, "slot freed");
    const fourth = run((signal) => client.subscribeSession({ sessionId: a.sessionId }, { signal }));
    await waitFor(() => fourth.items.length > 0, "fourth stream served");
    await fourth.stop();
    await s2.stop();
    await waitFor(() => gw.caps.count("alice") === 0, "all slots freed");
  });
});

describe("GetSessionSummary and stats", () => {
  it("folds a session on demand and reports gateway counters", async () => {
    const rt = new FakeRuntime();
    const s = handoffScript();
    rt.start(s.start("rota"), [s.owner, s.target]);
    rt.append(s.offer("h1", "pager"));
    const { gw, client } = setup(rt);
    const res = await client.getSessionSummary({ sessionId: s.sessionId });
    expect(res.summary?.phase).toBe("OfferPending");
    expect(res.summary?.intent).toBe("rota");
    expect(res.summary?.scope).toBe("pager");
    expect(res.summary?.eventCount).toBe(2n);
    await settled(gw, 1);
    const stats = await client.getGatewayStats({});
    // The catalog's WatchSessions and the open session it follows.
    expect(stats).toMatchObject({ upstreamSubscriptions: 2, browserStreams: 0, runtimeKind: "embedded", runtimeAddress: "fake:0" });
  });
});
