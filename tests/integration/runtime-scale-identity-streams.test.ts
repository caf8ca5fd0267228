// History at scale (see __fixtures__/runtime-scale-kit.ts): each identity holds a limited number of
// streams.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { agent, clientFor, FrameQueue, newSessionId, waitFor, type RuntimeClient } from "./harness";
import { cleanUp, start } from "./__fixtures__/runtime-scale-kit";

afterEach(cleanUp);

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
