// The catalog behind ListSessionPage and WatchSessionChanges (and the WatchSessionList it
// still serves), against an in-memory fake runtime: the feeder's upstream accounting and restart.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Code } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { SessionLifecycleEvent_EventType as EventType } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { SqliteCatalog } from "./catalog/sqlite";
import { FakeRuntime } from "./testing/fake-runtime";
import { handoffScript, TARGET } from "./testing/scenario";
import { changes, cleanUp, code, dirs, rows, run, settled, setup, snapshotComplete, waitFor } from "./__fixtures__/gateway-kit";

afterEach(cleanUp);

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
