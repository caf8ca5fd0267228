// The gateway against an in-memory fake runtime, through the Connect routes
// mounted in createRouterTransport: the catalog behind ListSessionPage and
// WatchSessionChanges (and the WatchSessionList it still serves), the feeder's
// upstream accounting and restart, SubscribeSession numbering/dedupe/resume,
// lifecycle metadata, bounded buffers and the per-person stream cap.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Code, ConnectError, createClient, createRouterTransport, type Interceptor } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import {
  ConsoleService,
  type SessionSummary,
  type SubscribeSessionResponse,
  type WatchSessionChangesResponse,
  type WatchSessionListResponse,
} from "@/lib/gen/baton/v1/console_pb";
import { SessionLifecycleEvent_EventType as EventType } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { SqliteCatalog } from "./catalog/sqlite";
import { createGateway, type Gateway, type GatewayOptions } from "./gateway";
import type { Authenticated } from "@/lib/accounts/accounts";
import type { Principal } from "@/lib/accounts/logins";
import { kSignedIn } from "./request-auth";
import { consoleRoutes } from "./routes";
import { FakeRuntime } from "./testing/fake-runtime";
import { handoffScript, TARGET } from "./testing/scenario";

const gateways: Gateway[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const g of gateways.splice(0)) g.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function setup(rt: FakeRuntime, opts: Partial<GatewayOptions> & { person?: string } = {}) {
  const { person, ...rest } = opts;
  const gw = createGateway({ runtime: rt, flushMs: 5, heartbeatMs: 60_000, ...rest });
  gateways.push(gw);
  // The reader the console's access interceptor would have signed in (request-auth.ts).
  const interceptors: Interceptor[] = person ? [(next) => (req) => next((req.contextValues.set(kSignedIn, signedIn(person)), req))] : [];
  const client = createClient(ConsoleService, createRouterTransport(consoleRoutes(gw), { router: { interceptors } }));
  return { gw, client };
}

function signedIn(username: string): Authenticated {
  const user: Principal = {
    username,
    displayName: username,
    role: "viewer",
    participantId: `human:${username}`,
    authMethod: "password",
    ephemeral: false,
  };
  return {
    login: {
      id: `login-${username}`,
      key: `key-${username}`,
      principal: user,
      csrfToken: "",
      createdAt: 0,
      lastSeenAt: 0,
      expiresAt: Number.MAX_SAFE_INTEGER,
    },
    user,
    mustChangePassword: false,
  };
}

async function waitFor(cond: () => boolean, what: string, timeoutMs = 3_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The catalog has read every session it knows. */
async function settled(gw: Gateway, known: number): Promise<void> {
  await waitFor(() => {
    gw.feeder.flush();
    const st = gw.feeder.status();
    return Number(st.sessionsKnown) === known && !st.backfilling;
  }, `catalog of ${known} sessions`);
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

const snapshotComplete = (items: WatchSessionListResponse[]) => items.some((i) => i.item.case === "snapshot" && i.item.value.complete);

const changes = (items: WatchSessionChangesResponse[]) => items.flatMap((i) => (i.item.case === "change" ? [i.item.value] : []));

function events(items: SubscribeSessionResponse[]) {
  return items.flatMap((i) => (i.item.case === "event" ? [i.item.value] : []));
}

async function code(p: Promise<unknown> | AsyncIterable<unknown>): Promise<Code | null> {
  try {
    if (p instanceof Promise) await p;
    else for await (const _ of p) void _;
    return null;
  } catch (e) {
    return ConnectError.from(e).code;
  }
}

describe("the catalog: ListSessionPage and WatchSessionChanges", () => {
  it("pages folded rows, then notices live changes with version, total and ids", async () => {
    const rt = new FakeRuntime();
    const done = handoffScript();
    rt.start(done.start(), [done.owner, done.target]);
    for (const e of [done.offer(), done.accept(), done.commit()]) rt.append(e);
    rt.setState(done.sessionId, SessionState.RESOLVED, EventType.RESOLVED);
    const live = handoffScript();
    rt.start(live.start(), [live.owner, live.target]);

    const { gw, client } = setup(rt);
    await settled(gw, 2);
    const page = await client.listSessionPage({ limit: 10 });
    expect(page.total).toBe(2n);
    expect(page.status).toMatchObject({ backfilling: false, sessionsKnown: 2n, sessionsIndexed: 2n });
    const byId = new Map(page.sessions.map((s) => [s.metadata?.sessionId, s]));
    expect(byId.get(done.sessionId)).toMatchObject({ phase: "Committed", outcome: "positive", currentOwner: TARGET });
    expect(byId.get(live.sessionId)?.phase).toBe("Pending");
    // The terminal session was read once and let go: WatchSessions + the open session remain.
    await waitFor(() => rt.openStreams === 2, "terminal session closed upstream");

    const watch = run((signal) => client.watchSessionChanges({ query: { mode: "handoff" } }, { signal }));
    await waitFor(() => changes(watch.items).length === 1, "first change message");
    expect(changes(watch.items)[0]).toMatchObject({ total: 2n, sessionIds: [], version: page.version });
    rt.append(live.offer());
    await waitFor(() => changes(watch.items).some((c) => c.sessionIds.includes(live.sessionId)), "offer noticed");
    expect((await client.getSessionSummary({ sessionId: live.sessionId })).summary?.phase).toBe("OfferPending");
    const fresh = handoffScript();
    rt.start(fresh.start(), [fresh.owner, fresh.target]);
    await waitFor(() => changes(watch.items).at(-1)?.total === 3n, "new session counted");
    const last = changes(watch.items).at(-1);
    expect(Number(last?.version)).toBeGreaterThan(Number(page.version));
    const again = await client.listSessionPage({ query: { state: "open", sort: "started", ascending: true } });
    expect(again.sessions.map((s) => s.metadata?.sessionId)).toEqual(
      [live.sessionId, fresh.sessionId].sort((a, b) => {
        const sa = again.sessions.find((s) => s.metadata?.sessionId === a)?.metadata?.startedAtUnixMs ?? 0n;
        const sb = again.sessions.find((s) => s.metadata?.sessionId === b)?.metadata?.startedAtUnixMs ?? 0n;
        return sa === sb ? 0 : sa < sb ? -1 : 1;
      }),
    );
    expect(gw.stats().browserStreams).toBe(1);
    await watch.stop();
    await waitFor(() => gw.stats().browserStreams === 0, "browser stream counted out");
  });

  it("searches and filters on the server, and refuses bad queries with INVALID_ARGUMENT", async () => {
    const rt = new FakeRuntime();
    const a = handoffScript();
    rt.start(a.start("rotate the pager"), [a.owner, a.target]);
    const b = handoffScript();
    rt.start(b.start("renew the certificate"), [b.owner, b.target]);
    rt.append(b.offer("h1", "tls certs"));
    const { gw, client } = setup(rt);
    await settled(gw, 2);
    const ids = async (query: Record<string, unknown>) =>
      (await client.listSessionPage({ query })).sessions.map((s) => s.metadata?.sessionId);
    expect(await ids({ text: "PAGER" })).toEqual([a.sessionId]);
    expect(await ids({ text: "tls cert" })).toEqual([b.sessionId]);
    expect(await ids({ text: b.sessionId.slice(4, 20) })).toEqual([b.sessionId]);
    expect(await ids({ phase: "OfferPending" })).toEqual([b.sessionId]);
    expect(await ids({ text: '"*-' })).toEqual([]);
    expect((await client.listSessionPage({ query: { text: "the" }, offset: 1, limit: 1 })).sessions).toHaveLength(1);
    expect(await code(client.listSessionPage({ query: { sort: "nonsense" } }))).toBe(Code.InvalidArgument);
    expect(await code(client.listSessionPage({ query: { state: "closed" } }))).toBe(Code.InvalidArgument);
    expect(await code(client.watchSessionChanges({ query: { mode: "chat" } }))).toBe(Code.InvalidArgument);
  });

  it("coalesces a burst into one notice", async () => {
    const rt = new FakeRuntime();
    const a = handoffScript();
    rt.start(a.start(), [a.owner, a.target]);
    const { gw, client } = setup(rt, { flushMs: 100 });
    await settled(gw, 1);
    const w = run((signal) => client.watchSessionChanges({}, { signal }));
    await waitFor(() => changes(w.items).length === 1, "first");
    rt.append(a.offer());
    rt.append(a.context());
    rt.append(a.accept());
    await waitFor(() => changes(w.items).length >= 2, "notice");
    await new Promise((r) => setTimeout(r, 250));
    expect(changes(w.items).length).toBe(2);
    expect(changes(w.items)[1]?.sessionIds).toEqual([a.sessionId]);
    expect((await client.listSessionPage({})).sessions[0]).toMatchObject({ phase: "Accepted", eventCount: 4n });
    await w.stop();
  });

  it("bounds concurrent history reads", async () => {
    const rt = new FakeRuntime();
    rt.subscribeDelayMs = 10;
    for (let i = 0; i < 12; i++) {
      const s = handoffScript();
      rt.start(s.start(), [s.owner, s.target]);
      rt.setState(s.sessionId, SessionState.CANCELLED, EventType.CANCELLED);
    }
    const { gw } = setup(rt, { concurrency: 3 });
    await settled(gw, 12);
    // WatchSessions plus at most three history reads at once.
    expect(rt.maxOpenStreams).toBe(4);
    expect(gw.feeder.readsStarted).toBe(12);
  });

  it("reconnects WatchSessions after the runtime drops it, without ListSessions", async () => {
    const rt = new FakeRuntime();
    const a = handoffScript();
    rt.start(a.start(), [a.owner, a.target]);
    const { gw, client } = setup(rt);
    await settled(gw, 1);
    rt.dropWatchers();
    rt.setState(a.sessionId, SessionState.CANCELLED, EventType.CANCELLED); // lost: no watcher
    await waitFor(() => rt.calls.watchSessions >= 2, "reconnected", 5_000);
    await waitFor(() => gw.catalog.get(a.sessionId)?.summary.metadata?.state === SessionState.CANCELLED, "reconciled state", 5_000);
    expect((await client.listSessionPage({ query: { state: "cancelled" } })).total).toBe(1n);
    expect(rt.calls.listSessions).toBe(0);
  });

  it("shows rows with metadata only when the console may not read a session", async () => {
    const rt = new FakeRuntime();
    const a = handoffScript();
    rt.start(a.start(), [a.owner, a.target]);
    rt.forbidden.add(a.sessionId);
    const { gw, client } = setup(rt);
    await waitFor(() => gw.catalog.get(a.sessionId) !== undefined, "row");
    const page = await client.listSessionPage({});
    expect(page.sessions[0]?.phase).toBe("");
    expect(page.sessions[0]?.metadata?.sessionId).toBe(a.sessionId);
  });

  it("resumes after a restart: closed sessions are not read again, open ones are", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-gw-"));
    dirs.push(dir);
    const file = path.join(dir, "console.sqlite");
    const rt = new FakeRuntime();
    const closed = Array.from({ length: 5 }, () => handoffScript());
    for (const c of closed) {
      rt.start(c.start(), [c.owner, c.target]);
      rt.append(c.offer());
      rt.setState(c.sessionId, SessionState.CANCELLED, EventType.CANCELLED);
    }
    const open = handoffScript();
    rt.start(open.start(), [open.owner, open.target]);
    const first = setup(rt, { catalog: new SqliteCatalog({ path: file }) });
    await settled(first.gw, 6);
    expect(first.gw.feeder.readsStarted).toBe(6);
    first.gw.close();

    const second = setup(rt, { catalog: new SqliteCatalog({ path: file }) });
    await settled(second.gw, 6);
    await new Promise((r) => setTimeout(r, 50));
    // Only the open session is read again.
    expect(second.gw.feeder.readsStarted).toBe(1);
    expect((await second.client.listSessionPage({ query: { state: "cancelled" } })).sessions.every((s) => s.phase === "OfferPending")).toBe(
      true,
    );
  });

  it("sends heartbeats on change streams", async () => {
    const rt = new FakeRuntime();
    const { client } = setup(rt, { heartbeatMs: 20 });
    const w = run((signal) => client.watchSessionChanges({}, { signal }));
    await waitFor(() => w.items.filter((i) => i.item.case === "heartbeat").length >= 2, "heartbeats");
    expect(changes(w.items)[0]?.total).toBe(0n);
    await w.stop();
  });

  it("still serves WatchSessionList from the catalog: snapshot in chunks, then upserts", async () => {
    const rt = new FakeRuntime();
    const a = handoffScript();
    rt.start(a.start(), [a.owner, a.target]);
    const { gw, client } = setup(rt);
    await settled(gw, 1);
    const w = run((signal) => client.watchSessionList({}, { signal }));
    await waitFor(() => snapshotComplete(w.items), "snapshot");
    expect(rows(w.items).get(a.sessionId)?.phase).toBe("Pending");
    rt.append(a.offer());
    await waitFor(() => rows(w.items).get(a.sessionId)?.phase === "OfferPending", "upsert");
    await w.stop();
  });
});

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
