// The gateway against an in-memory fake runtime, through the Connect routes
// mounted in createRouterTransport: list snapshot/upserts, SubscribeSession
// numbering/dedupe/resume, lifecycle metadata, and upstream accounting.
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import {
  ConsoleService,
  type SessionSummary,
  type SubscribeSessionResponse,
  type WatchSessionListResponse,
} from "@/lib/gen/baton/v1/console_pb";
import { SessionLifecycleEvent_EventType as EventType } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { createGateway, type Gateway } from "./gateway";
import { consoleRoutes } from "./routes";
import { FakeRuntime } from "./testing/fake-runtime";
import { handoffScript, TARGET } from "./testing/scenario";

let gateway: Gateway | null = null;
afterEach(() => {
  gateway?.close();
  gateway = null;
});

function setup(rt: FakeRuntime, opts: { heartbeatMs?: number; concurrency?: number; graceMs?: number } = {}) {
  gateway = createGateway({
    runtime: rt,
    graceMs: opts.graceMs ?? 0,
    flushMs: 5,
    heartbeatMs: opts.heartbeatMs ?? 60_000,
    concurrency: opts.concurrency,
  });
  const client = createClient(ConsoleService, createRouterTransport(consoleRoutes(gateway)));
  return { gw: gateway, client };
}

async function waitFor(cond: () => boolean, what: string, timeoutMs = 3_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Runs a browser stream in the background, collecting its messages. */
function run<T>(start: (signal: AbortSignal) => AsyncIterable<T>) {
  const items: T[] = [];
  const ac = new AbortController();
  let error: unknown = null;
  const done = (async () => {
    try {
      for await (const m of start(ac.signal)) items.push(m);
    } catch (e) {
      if (!ac.signal.aborted) error = e;
    }
  })();
  return {
    items,
    get error() {
      return error;
    },
    stop: async () => {
      ac.abort();
      await done;
    },
    done,
  };
}

function rows(items: WatchSessionListResponse[]): Map<string, SessionSummary> {
  const m = new Map<string, SessionSummary>();
  for (const it of items) {
    if (it.item.case === "snapshot") for (const s of it.item.value.sessions) m.set(s.metadata?.sessionId ?? "", s);
    if (it.item.case === "upsert") m.set(it.item.value.metadata?.sessionId ?? "", it.item.value);
  }
  return m;
}

const snapshotComplete = (items: WatchSessionListResponse[]) =>
  items.some((i) => i.item.case === "snapshot" && i.item.value.complete);

function events(items: SubscribeSessionResponse[]) {
  return items.flatMap((i) => (i.item.case === "event" ? [i.item.value] : []));
}

describe("WatchSessionList", () => {
  it("sends a complete snapshot with folded phases, then live upserts", async () => {
    const rt = new FakeRuntime();
    const done = handoffScript();
    rt.start(done.start(), [done.owner, done.target]);
    for (const e of [done.offer(), done.accept(), done.commit()]) rt.append(e);
    rt.setState(done.sessionId, SessionState.RESOLVED, EventType.RESOLVED);
    const live = handoffScript();
    rt.start(live.start(), [live.owner, live.target]);

    const { gw, client } = setup(rt);
    const list = run((signal) => client.watchSessionList({}, { signal }));
    await waitFor(() => snapshotComplete(list.items), "snapshot");
    const first = list.items.findIndex((i) => i.item.case === "snapshot" && i.item.value.complete);
    expect(list.items.slice(0, first + 1).every((i) => i.item.case === "snapshot")).toBe(true);
    const snap = rows(list.items);
    expect(snap.get(done.sessionId)?.phase).toBe("Committed");
    expect(snap.get(done.sessionId)?.outcome).toBe("positive");
    expect(snap.get(done.sessionId)?.currentOwner).toBe(TARGET);
    expect(snap.get(live.sessionId)?.phase).toBe("Pending");

    // The terminal session's upstream is closed; WatchSessions + the open session remain.
    await waitFor(() => rt.openStreams === 2, "terminal session closed upstream");

    rt.append(live.offer());
    await waitFor(() => rows(list.items).get(live.sessionId)?.phase === "OfferPending", "offer upsert");
    rt.append(live.accept());
    await waitFor(() => rows(list.items).get(live.sessionId)?.phase === "Accepted", "accept upsert");
    const fresh = handoffScript();
    rt.start(fresh.start(), [fresh.owner, fresh.target]);
    await waitFor(() => rows(list.items).get(fresh.sessionId)?.phase === "Pending", "new session upsert");
    expect(list.items.slice(first + 1).every((i) => i.item.case !== "snapshot")).toBe(true);

    expect(gw.stats().browserStreams).toBe(1);
    await list.stop();
    await waitFor(() => rt.openStreams === 0, "upstream closed after the last watcher left");
    expect(gw.stats().browserStreams).toBe(0);
  });

  it("shares one upstream per session between watchers and caches terminal summaries", async () => {
    const rt = new FakeRuntime();
    const a = handoffScript();
    rt.start(a.start(), [a.owner, a.target]);
    rt.append(a.offer());
    const { client } = setup(rt);
    const w1 = run((signal) => client.watchSessionList({}, { signal }));
    const w2 = run((signal) => client.watchSessionList({}, { signal }));
    await waitFor(() => snapshotComplete(w1.items) && snapshotComplete(w2.items), "both snapshots");
    expect(rt.openStreams).toBe(2); // one WatchSessions + one StreamSession
    expect(rt.calls.watchSessions).toBe(1);

    rt.append(a.accept());
    rt.append(a.commit());
    rt.setState(a.sessionId, SessionState.RESOLVED, EventType.RESOLVED);
    await waitFor(() => rows(w2.items).get(a.sessionId)?.metadata?.state === SessionState.RESOLVED, "resolved upsert");
    expect(rows(w1.items).get(a.sessionId)?.phase).toBe("Committed");
    await waitFor(() => rt.openStreams === 1, "terminal subscription closed");
    await w1.stop();
    await w2.stop();
    await waitFor(() => rt.openStreams === 0, "all upstream closed");

    // A later watcher gets the cached terminal summary without reading history again.
    const subscribes = rt.calls.subscribe;
    const w3 = run((signal) => client.watchSessionList({}, { signal }));
    await waitFor(() => snapshotComplete(w3.items), "third snapshot");
    expect(rows(w3.items).get(a.sessionId)?.phase).toBe("Committed");
    expect(rt.calls.subscribe).toBe(subscribes);
    await w3.stop();
  });

  it("coalesces a burst into the latest row per session", async () => {
    const rt = new FakeRuntime();
    const a = handoffScript();
    rt.start(a.start(), [a.owner, a.target]);
    const { client } = setup(rt);
    const w = run((signal) => client.watchSessionList({}, { signal }));
    await waitFor(() => snapshotComplete(w.items), "snapshot");
    const before = w.items.length;
    rt.append(a.offer());
    rt.append(a.context());
    rt.append(a.accept());
    await waitFor(() => rows(w.items).get(a.sessionId)?.phase === "Accepted", "final row");
    const upserts = w.items.slice(before).filter((i) => i.item.case === "upsert");
    expect(upserts.length).toBeLessThan(3);
    expect(rows(w.items).get(a.sessionId)?.eventCount).toBe(4n);
    await w.stop();
  });

  it("bounds concurrent catch-up reads", async () => {
    const rt = new FakeRuntime();
    rt.getSessionDelayMs = 10;
    for (let i = 0; i < 12; i++) {
      const s = handoffScript();
      rt.start(s.start(), [s.owner, s.target]);
    }
    const { client } = setup(rt, { concurrency: 3 });
    const w = run((signal) => client.watchSessionList({}, { signal }));
    await waitFor(() => snapshotComplete(w.items), "snapshot");
    expect(rows(w.items).size).toBe(12);
    expect(rt.maxConcurrentGets).toBeLessThanOrEqual(3);
    await w.stop();
  });

  it("reconnects WatchSessions after the runtime drops it and reconciles", async () => {
    const rt = new FakeRuntime();
    const a = handoffScript();
    rt.start(a.start(), [a.owner, a.target]);
    const { client } = setup(rt);
    const w = run((signal) => client.watchSessionList({}, { signal }));
    await waitFor(() => snapshotComplete(w.items), "snapshot");
    rt.dropWatchers();
    rt.setState(a.sessionId, SessionState.CANCELLED, EventType.CANCELLED); // lost: no watcher
    await waitFor(() => rows(w.items).get(a.sessionId)?.metadata?.state === SessionState.CANCELLED, "reconciled state", 5_000);
    expect(rt.calls.listSessions).toBeGreaterThanOrEqual(2);
    await w.stop();
  });

  it("shows rows with metadata only when the console may not read a session", async () => {
    const rt = new FakeRuntime();
    const a = handoffScript();
    rt.start(a.start(), [a.owner, a.target]);
    rt.forbidden.add(a.sessionId);
    const { client } = setup(rt);
    const w = run((signal) => client.watchSessionList({}, { signal }));
    await waitFor(() => snapshotComplete(w.items), "snapshot");
    const row = rows(w.items).get(a.sessionId);
    expect(row?.phase).toBe("");
    expect(row?.metadata?.sessionId).toBe(a.sessionId);
    await w.stop();
  });

  it("keeps upstream streams through the grace period and reuses them", async () => {
    const rt = new FakeRuntime();
    const a = handoffScript();
    rt.start(a.start(), [a.owner, a.target]);
    const { client } = setup(rt, { graceMs: 150 });
    const w1 = run((signal) => client.watchSessionList({}, { signal }));
    await waitFor(() => snapshotComplete(w1.items), "snapshot");
    await w1.stop();
    expect(rt.openStreams).toBe(2);
    const w2 = run((signal) => client.watchSessionList({}, { signal }));
    await waitFor(() => snapshotComplete(w2.items), "second snapshot");
    expect(rows(w2.items).get(a.sessionId)?.phase).toBe("Pending");
    expect(rt.calls.watchSessions).toBe(1);
    expect(rt.calls.subscribe).toBe(1);
    await w2.stop();
    await waitFor(() => rt.openStreams === 0, "upstream closed after the grace period");
  });

  it("joins a WatchSessions stream already held for a session subscriber", async () => {
    const rt = new FakeRuntime();
    const a = handoffScript();
    rt.start(a.start(), [a.owner, a.target]);
    const { client } = setup(rt);
    const sub = run((signal) => client.subscribeSession({ sessionId: a.sessionId }, { signal }));
    await waitFor(() => rt.openStreams === 2, "hub + subscription");
    const w = run((signal) => client.watchSessionList({}, { signal }));
    await waitFor(() => snapshotComplete(w.items), "snapshot from the running hub");
    expect(rows(w.items).has(a.sessionId)).toBe(true);
    expect(rt.calls.watchSessions).toBe(1);
    await w.stop();
    await sub.stop();
    await waitFor(() => rt.openStreams === 0, "all closed");
  });

  it("sends heartbeats", async () => {
    const rt = new FakeRuntime();
    const { client } = setup(rt, { heartbeatMs: 20 });
    const w = run((signal) => client.watchSessionList({}, { signal }));
    await waitFor(() => w.items.filter((i) => i.item.case === "heartbeat").length >= 2, "heartbeats");
    expect(snapshotComplete(w.items)).toBe(true);
    await w.stop();
  });
});

describe("SubscribeSession", () => {
  it("sends metadata, history from after_sequence, CaughtUp, then live events without duplicates", async () => {
    const rt = new FakeRuntime();
    rt.duplicateAroundReplay = true;
    const s = handoffScript();
    rt.start(s.start(), [s.owner, s.target]);
    rt.append(s.offer());
    rt.append(s.context());
    const { client } = setup(rt);
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
    await waitFor(() => rt.openStreams === 0, "upstream closed");
  });

  it("re-sends metadata on lifecycle changes, after the envelopes that caused them", async () => {
    const rt = new FakeRuntime();
    const s = handoffScript();
    rt.start(s.start(), [s.owner, s.target]);
    rt.append(s.offer());
    rt.append(s.accept());
    const { client } = setup(rt);
    const sub = run((signal) => client.subscribeSession({ sessionId: s.sessionId, afterSequence: 0n }, { signal }));
    await waitFor(() => sub.items.some((i) => i.item.case === "caughtUp"), "caught up");
    await waitFor(() => rt.openStreams === 2, "hub + subscription");
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
    // Terminal and complete: nothing upstream is needed any more.
    await waitFor(() => rt.openStreams === 0, "upstream released for a finished session");
    await sub.stop();
  });

  it("resumes after an aborted stream with every event exactly once", async () => {
    const rt = new FakeRuntime();
    const s = handoffScript();
    rt.start(s.start(), [s.owner, s.target]);
    rt.append(s.offer());
    const { client } = setup(rt);
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
    await waitFor(() => rt.openStreams === 0, "upstream closed");
  });

  it("validates input and reports unknown sessions and impossible positions", async () => {
    const rt = new FakeRuntime();
    const s = handoffScript();
    rt.start(s.start(), [s.owner, s.target]);
    const { client } = setup(rt);
    const code = async (p: AsyncIterable<unknown>) => {
      try {
        for await (const _ of p) void _;
        return null;
      } catch (e) {
        return ConnectError.from(e).code;
      }
    };
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
    const { client } = setup(rt);
    const sub = run((signal) => client.subscribeSession({ sessionId: s.sessionId }, { signal }));
    await waitFor(() => sub.items.some((i) => i.item.case === "caughtUp"), "caught up");
    rt.failSubscriptions(s.sessionId);
    await sub.done;
    const err = ConnectError.from(sub.error);
    expect(err.code).toBe(Code.Unavailable);
    expect(err.rawMessage).toContain("after_sequence=1");
    await waitFor(() => rt.openStreams === 0, "upstream closed");
  });
});

describe("GetSessionSummary and stats", () => {
  it("folds a session on demand and reports gateway counters", async () => {
    const rt = new FakeRuntime();
    const s = handoffScript();
    rt.start(s.start("rota"), [s.owner, s.target]);
    rt.append(s.offer("h1", "pager"));
    const { client } = setup(rt);
    const res = await client.getSessionSummary({ sessionId: s.sessionId });
    expect(res.summary?.phase).toBe("OfferPending");
    expect(res.summary?.intent).toBe("rota");
    expect(res.summary?.scope).toBe("pager");
    expect(res.summary?.eventCount).toBe(2n);
    const stats = await client.getGatewayStats({});
    expect(stats).toMatchObject({ upstreamSubscriptions: 0, browserStreams: 0, runtimeKind: "embedded", runtimeAddress: "fake:0" });
  });
});

