// SubscribeSession against an in-memory fake runtime: numbering, dedupe, resume, lifecycle
// metadata, bounded buffers and what it reports to the console's collector.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { SessionLifecycleEvent_EventType as EventType } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { FakeRuntime } from "./testing/fake-runtime";
import { handoffScript } from "./testing/scenario";
import { cleanUp, code, events, run, settled, setup, waitFor } from "./__fixtures__/gateway-kit";

afterEach(cleanUp);

describe("SubscribeSession", () => {
  it("sends metadata, history from after_sequence, CaughtUp, then live events without duplicates", async () => {
    const rt = new FakeRuntime();
    rt.duplicateAroundReplay = true;
    const s = handoffScript();
    rt.start(s.start(), [s.owner, s.target]);
    rt.append(s.offer());
    rt.append(s.context());
    const { gw, client } = setup(rt);
    await settled(gw, 1);
    const base = rt.openStreams;
    const sub = run((signal) => client.subscribeSession({ sessionId: s.sessionId, afterSequence: 1n }, { signal }));
    await waitFor(() => sub.items.some((i) => i.item.case === "caughtUp"), "caught up");
    rt.append(s.accept());
    await waitFor(() => events(sub.items).length === 3, "live accept");
    const kinds = sub.items.filter((i) => i.item.case !== "heartbeat").map((i) => i.item.case);
    expect(kinds).toEqual(["metadata", "event", "event", "caughtUp", "event"]);
    expect(events(sub.items).map((e) => Number(e.sequence))).toEqual([2, 3, 4]);
    expect(events(sub.items).map((e) => e.envelope?.messageType)).toEqual(["HandoffOffer", "HandoffContext", "HandoffAccept"]);
    const caught = sub.items.find((i) => i.item.case === "caughtUp");
    expect(caught?.item.case === "caughtUp" && caught.item.value.headSequence).toBe(3n);
    await sub.stop();
    await waitFor(() => rt.openStreams === base, "upstream closed");
  });

  it("re-sends metadata on lifecycle changes, after the envelopes that caused them", async () => {
    const rt = new FakeRuntime();
    const s = handoffScript();
    rt.start(s.start(), [s.owner, s.target]);
    rt.append(s.offer());
    rt.append(s.accept());
    const { gw, client } = setup(rt);
    await settled(gw, 1);
    const base = rt.openStreams;
    const sub = run((signal) => client.subscribeSession({ sessionId: s.sessionId, afterSequence: 0n }, { signal }));
    await waitFor(() => sub.items.some((i) => i.item.case === "caughtUp"), "caught up");
    await waitFor(() => rt.openStreams === base + 1, "subscription");
    // The lifecycle event reaches the gateway before the Commitment envelope does.
    const broadcast = rt.appendHeld(s.commit());
    rt.setState(s.sessionId, SessionState.RESOLVED, EventType.RESOLVED);
    await new Promise((r) => setTimeout(r, 20));
    expect(sub.items.filter((i) => i.item.case === "metadata")).toHaveLength(1);
    broadcast();
    await waitFor(() => sub.items.filter((i) => i.item.case === "metadata").length === 2, "second metadata");
    const tail = sub.items.filter((i) => i.item.case === "event" || i.item.case === "metadata").slice(-2);
    expect(tail[0]?.item.case === "event" && tail[0].item.value.envelope?.messageType).toBe("Commitment");
    expect(tail[1]?.item.case === "metadata" && tail[1].item.value.state).toBe(SessionState.RESOLVED);
    // Terminal and complete: nothing upstream is needed any more (the catalog let go of it too).
    await waitFor(() => rt.openStreams === 1, "upstream released for a finished session");
    await sub.stop();
  });

  it("resumes after an aborted stream with every event exactly once", async () => {
    const rt = new FakeRuntime();
    const s = handoffScript();
    rt.start(s.start(), [s.owner, s.target]);
    rt.append(s.offer());
    const { gw, client } = setup(rt);
    await settled(gw, 1);
    const base = rt.openStreams;
    const first = run((signal) => client.subscribeSession({ sessionId: s.sessionId, afterSequence: 0n }, { signal }));
    await waitFor(() => events(first.items).length === 2, "first two");
    await first.stop();
    const last = events(first.items).at(-1)?.sequence ?? 0n;
    rt.append(s.context());
    const second = run((signal) => client.subscribeSession({ sessionId: s.sessionId, afterSequence: last }, { signal }));
    rt.append(s.accept());
    await waitFor(() => events(second.items).length === 2, "resumed events");
    const all = [...events(first.items), ...events(second.items)];
    expect(all.map((e) => Number(e.sequence))).toEqual([1, 2, 3, 4]);
    expect(all.map((e) => e.envelope?.messageType)).toEqual(["SessionStart", "HandoffOffer", "HandoffContext", "HandoffAccept"]);
    await second.stop();
    await waitFor(() => rt.openStreams === base, "upstream closed");
  });

  it("validates input and reports unknown sessions and impossible positions", async () => {
    const rt = new FakeRuntime();
    const s = handoffScript();
    rt.start(s.start(), [s.owner, s.target]);
    const { client } = setup(rt);
    expect(await code(client.subscribeSession({ sessionId: "" }))).toBe(Code.InvalidArgument);
    expect(await code(client.subscribeSession({ sessionId: "not a session" }))).toBe(Code.InvalidArgument);
    expect(await code(client.subscribeSession({ sessionId: "0190AAAA-0000-7000-8000-000000000000" }))).toBe(Code.InvalidArgument);
    expect(await code(client.subscribeSession({ sessionId: crypto.randomUUID() }))).toBe(Code.NotFound);
    expect(await code(client.subscribeSession({ sessionId: s.sessionId, afterSequence: 5n }))).toBe(Code.OutOfRange);
    await expect(client.getSessionSummary({ sessionId: crypto.randomUUID() })).rejects.toMatchObject({ code: Code.NotFound });
    await expect(client.getSessionSummary({ sessionId: "x" })).rejects.toMatchObject({ code: Code.InvalidArgument });
  });

  it("ends with a resumable error when the upstream subscription fails", async () => {
    const rt = new FakeRuntime();
    const s = handoffScript();
    rt.start(s.start(), [s.owner, s.target]);
    const { gw, client } = setup(rt);
    await settled(gw, 1);
    const sub = run((signal) => client.subscribeSession({ sessionId: s.sessionId }, { signal }));
    await waitFor(() => sub.items.some((i) => i.item.case === "caughtUp"), "caught up");
    const watchers = rt.calls.subscribe;
    rt.failSubscriptions(s.sessionId);
    await sub.done;
    const err = ConnectError.from(sub.error);
    expect(err.code).toBe(Code.Unavailable);
    expect(err.rawMessage).toContain("after_sequence=1");
    expect(rt.calls.subscribe).toBeGreaterThanOrEqual(watchers);
    await waitFor(() => gw.stats().browserStreams === 0, "browser stream ended");
  });
});

describe("SubscribeSession toward a browser that never reads", () => {
  it("reads at most its byte buffer ahead, then cuts the browser off and lets go of the upstream", async () => {
    const rt = new FakeRuntime();
    const s = handoffScript();
    rt.start(s.start(), [s.owner, s.target]);
    rt.append(s.offer());
    const big = "x".repeat(200_000);
    for (let i = 0; i < 40; i++) rt.append(s.context("h1", big));
    const { gw, client } = setup(rt, { streamBufferBytes: 65_536, streamStallMs: 300 });
    await settled(gw, 1);
    const base = rt.openStreams;
    const stream = client.subscribeSession({ sessionId: s.sessionId })[Symbol.asyncIterator]();
    expect((await stream.next()).value?.item.case).toBe("metadata");
    expect((await stream.next()).value?.item.case).toBe("event");
    // Never read again: the upstream pauses at the buffer, then the stream is cut off.
    await waitFor(() => rt.openStreams === base + 1, "upstream open");
    await waitFor(() => rt.openStreams === base, "upstream released after the stall", 5_000);
    expect(gw.stats().browserStreams).toBe(1);
    let got: Code | null = null;
    try {
      for (;;) {
        const r = await stream.next();
        if (r.done) break;
      }
    } catch (e) {
      got = ConnectError.from(e).code;
    }
    expect(got).toBe(Code.ResourceExhausted);
    await waitFor(() => gw.stats().browserStreams === 0, "browser stream counted out");
  });
});

describe("SubscribeSession tells the console's collector what it sent", () => {
  it("reports each envelope's payload bytes as the browser takes it, and nothing it did not take", async () => {
    const rt = new FakeRuntime();
    const s = handoffScript();
    rt.start(s.start(), [s.owner, s.target]);
    rt.append(s.offer());
    for (const n of [1_000, 50_000, 200_000]) rt.append(s.context("h1", "x".repeat(n)));
    const sent: number[] = [];
    const { gw, client } = setup(rt, { browserStreamSent: (bytes) => sent.push(bytes) });
    await settled(gw, 1);
    const payloads: number[] = [];
    for await (const res of client.subscribeSession({ sessionId: s.sessionId })) {
      if (res.item.case === "event") payloads.push(res.item.value.envelope?.payload.length ?? -1);
      if (res.item.case === "caughtUp") break;
    }
    expect(payloads).toHaveLength(5); // start, offer, three contexts
    expect(payloads.slice(2).every((n, i) => n > [1_000, 50_000, 200_000][i]!)).toBe(true);
    // Every event the browser took was counted once, with its payload's size; the last one
    // is counted when the stream resumes after it, which the browser's leaving may cut short.
    expect(sent.length === payloads.length || sent.length === payloads.length - 1).toBe(true);
    expect(sent).toEqual(payloads.slice(0, sent.length));
  });
});
