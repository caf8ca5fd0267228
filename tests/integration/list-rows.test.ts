// The list-row feed (baton.v1.RuntimeCatalogService.WatchListRows) over real
// gRPC: rows equal folding the same history with the shared fold; a cursor
// resumes exactly; a cursor of another store restarts from 0; a watcher that
// stops reading is ended with RESOURCE_EXHAUSTED and a resume from its last
// change loses nothing; only observers may watch; MACP_LIST_ROWS=off answers
// UNIMPLEMENTED, as a plain MACP runtime would.
import { toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { SessionSummarySchema } from "@/lib/gen/baton/v1/console_pb";
import { RuntimeCatalogService, type ListRowChange, type WatchListRowsResponse } from "@/lib/gen/baton/v1/runtime_catalog_pb";
import { TASK_MODE } from "@/lib/macp/constants";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { historyCount, isTerminalState, leanEnvelope, nextActors, SessionFold, toSummary } from "@/lib/macp/projections/summary";
import type { RunningRuntime } from "@/lib/runtime";
import { agent, authInterceptor, clientFor, collectEnvelopes, newSessionId, startTestRuntime, tempDir, waitFor } from "./harness";

const OBSERVER = "agent://console";
const OWNER = "agent://owner";
const TARGET = "agent://target";
const enc = new TextEncoder();

const running: RunningRuntime[] = [];
afterEach(async () => {
  for (const rt of running.splice(0)) await rt.close();
});

async function start(env: Record<string, string> = {}): Promise<RunningRuntime> {
  const rt = await startTestRuntime({ MACP_DEV_OBSERVERS: OBSERVER, ...env });
  running.push(rt);
  return rt;
}

function catalog(rt: { url: string }, identity = OBSERVER): Client<typeof RuntimeCatalogService> {
  return createClient(RuntimeCatalogService, createGrpcTransport({ baseUrl: rt.url, interceptors: [authInterceptor(identity, "bearer")] }));
}

const must = async (p: Promise<{ ok: boolean; error?: { code: string; message: string } }>) => {
  const a = await p;
  if (!a.ok) throw new Error(`${a.error?.code} ${a.error?.message}`);
};

/** Read a watch until it is caught up; returns the responses and an iterator to keep reading live rows. */
async function catchUp(rt: RunningRuntime, req: { afterChange?: bigint; storeId?: string; maxRows?: number }, ac: AbortController) {
  const it = catalog(rt).watchListRows(req, { signal: ac.signal })[Symbol.asyncIterator]();
  const responses: WatchListRowsResponse[] = [];
  for (;;) {
    const r = await it.next();
    if (r.done) throw new Error("the watch ended before catching up");
    responses.push(r.value);
    if (r.value.caughtUp) return { responses, it };
  }
}

const rowsOf = (responses: readonly WatchListRowsResponse[]): ListRowChange[] => responses.flatMap((r) => r.rows);

/** Each session's newest row. */
function latest(rows: readonly ListRowChange[]): Map<string, ListRowChange> {
  const out = new Map<string, ListRowChange>();
  for (const r of rows) out.set(r.summary?.metadata?.sessionId ?? "", r);
  return out;
}

/** The row a console folds from the session's history with the shared fold. */
async function folded(rt: RunningRuntime, sessionId: string) {
  const reader = clientFor(rt, OBSERVER);
  const meta = (await reader.getSession({ sessionId })).metadata;
  if (!meta) throw new Error(`no metadata for ${sessionId}`);
  const fold = new SessionFold(sessionId, meta.mode);
  for (const env of await collectEnvelopes(reader, sessionId, historyCount(meta))) fold.add(leanEnvelope(env));
  expect(fold.count).toBe(historyCount(meta));
  return { summary: toSummary(meta, fold.view, fold.count), nextActors: nextActors(meta, fold.view) };
}

async function expectRowsEqualFold(rt: RunningRuntime, rows: Map<string, ListRowChange>, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    const row = rows.get(id);
    expect(row, id).toBeDefined();
    const want = await folded(rt, id);
    expect(toJson(SessionSummarySchema, row!.summary!), id).toEqual(toJson(SessionSummarySchema, want.summary));
    expect(row!.nextActors, id).toEqual(want.nextActors);
    expect(row!.final, id).toBe(isTerminalState(want.summary.metadata?.state ?? SessionState.UNSPECIFIED));
  }
}

async function handoffFlow(rt: RunningRuntime, sid = newSessionId(), close = true): Promise<string> {
  const o = agent(rt, OWNER, sid);
  const t = agent(rt, TARGET, sid);
  await must(o.start([OWNER, TARGET], { intent: "hand over the pager" }));
  await must(o.send("HandoffOffer", { handoffId: "h1", targetParticipant: TARGET, scope: "pager", reason: "shift change" }));
  await must(
    o.send("HandoffContext", { handoffId: "h1", contentType: "text/markdown", context: enc.encode("# Runbook\n" + "x".repeat(50_000)) }),
  );
  await must(t.send("HandoffAccept", { handoffId: "h1", reason: "on it" }));
  if (close) await must(o.commit("handoff.accepted", true));
  return sid;
}

async function taskFlow(rt: RunningRuntime, sid = newSessionId(), close = true): Promise<string> {
  const o = agent(rt, OWNER, sid, TASK_MODE);
  const t = agent(rt, TARGET, sid, TASK_MODE);
  await must(o.start([OWNER, TARGET], { intent: "drain node 7" }));
  await must(o.send("TaskRequest", { taskId: "t1", title: "drain node", instructions: "cordon first", requestedAssignee: TARGET }));
  await must(t.send("TaskAccept", { taskId: "t1", assignee: TARGET }));
  await must(t.send("TaskUpdate", { taskId: "t1", status: "running", progress: 0.5, message: "half" }));
  if (close) {
    await must(t.send("TaskComplete", { taskId: "t1", assignee: TARGET, summary: "done" }));
    await must(o.commit("task.completed", true));
  }
  return sid;
}

describe("WatchListRows", () => {
  it("streams rows equal to folding each history with the shared fold, then live changes", async () => {
    const rt = await start();
    const ids = [
      await handoffFlow(rt),
      await taskFlow(rt),
      await handoffFlow(rt, newSessionId(), false),
      await taskFlow(rt, newSessionId(), false),
    ];
    const cancelled = await taskFlow(rt, newSessionId(), false);
    await clientFor(rt, OWNER).cancelSession({ sessionId: cancelled, reason: "not needed" });
    const suspended = await handoffFlow(rt, newSessionId(), false);
    await clientFor(rt, OWNER).suspendSession({ sessionId: suspended, reason: "pause" });
    ids.push(cancelled, suspended);

    const ac = new AbortController();
    try {
      const { responses, it } = await catchUp(rt, { maxRows: 4 }, ac);
      expect(responses[0]?.storeId).toBe(rt.kernel.storeId);
      expect(responses.every((r) => !r.restarted && r.rows.length <= 4)).toBe(true);
      const rows = rowsOf(responses);
      const changes = rows.map((r) => Number(r.change));
      expect(changes).toEqual([...changes].sort((a, b) => a - b));
      expect(new Set(changes).size).toBe(changes.length);
      // Stored rows: each session once, at its newest change.
      expect(rows).toHaveLength(ids.length);
      const byId = latest(rows);
      await expectRowsEqualFold(rt, byId, ids);
      expect(byId.get(ids[0]!)?.final).toBe(true);
      expect(byId.get(ids[2]!)?.nextActors).toEqual([OWNER]); // accepted: the owner commits next
      expect(byId.get(ids[3]!)?.nextActors).toEqual([TARGET]); // the assignee works
      expect(byId.get(cancelled)?.nextActors).toEqual([]);
      expect(byId.get(suspended)?.summary?.metadata?.state).toBe(SessionState.SUSPENDED);
      // The context's 50 KB never reach a row.
      expect(Math.max(...rows.map((r) => JSON.stringify(toJson(SessionSummarySchema, r.summary!)).length))).toBeLessThan(4_000);

      // Live: resume, commit and a new session arrive in order, folded the same.
      await clientFor(rt, OWNER).resumeSession({ sessionId: suspended, reason: "go" });
      await must(agent(rt, OWNER, ids[2]!).commit("handoff.accepted", true));
      const fresh = await handoffFlow(rt);
      const live: ListRowChange[] = [];
      while (!live.some((r) => r.summary?.metadata?.sessionId === fresh && r.final)) {
        const r = await it.next();
        if (r.done) throw new Error("ended");
        expect(r.value.caughtUp).toBe(false);
        live.push(...r.value.rows);
      }
      const liveChanges = live.map((r) => Number(r.change));
      expect(liveChanges[0]).toBeGreaterThan(Math.max(...changes));
      expect(liveChanges).toEqual([...liveChanges].sort((a, b) => a - b));
      expect(live.filter((r) => r.summary?.metadata?.sessionId === fresh)).toHaveLength(5); // one row per record
      await expectRowsEqualFold(rt, latest(live), [suspended, ids[2]!, fresh]);
      expect(latest(live).get(ids[2]!)?.final).toBe(true);
    } finally {
      ac.abort();
    }
  });

  it("resumes after a cursor with only later changes; a cursor of another store starts over", async () => {
    const rt = await start();
    await handoffFlow(rt);
    const ac = new AbortController();
    try {
      const first = rowsOf((await catchUp(rt, {}, ac)).responses);
      ac.abort();
      const cursor = first.at(-1)!.change;
      const b = await taskFlow(rt);
      const ac2 = new AbortController();
      const { responses } = await catchUp(rt, { afterChange: cursor, storeId: rt.kernel.storeId }, ac2);
      ac2.abort();
      expect(responses[0]?.restarted).toBe(false);
      const rows = rowsOf(responses);
      expect(rows.length).toBe(1);
      expect(rows.every((r) => r.change > cursor)).toBe(true);
      expect(rows[0]?.summary?.metadata?.sessionId).toBe(b);
      expect(responses.at(-1)?.head).toBe(rows.at(-1)?.change);

      // Resuming at the head: nothing stored to send, caught up at once.
      const ac3 = new AbortController();
      const atHead = await catchUp(rt, { afterChange: rows.at(-1)!.change, storeId: rt.kernel.storeId }, ac3);
      ac3.abort();
      expect(atHead.responses).toHaveLength(1);
      expect(atHead.responses[0]).toMatchObject({ rows: [], caughtUp: true, restarted: false });

      for (const wrong of [
        { storeId: "00000000-0000-4000-8000-000000000000", afterChange: cursor },
        { storeId: "", afterChange: cursor },
        { storeId: rt.kernel.storeId, afterChange: 1_000_000n },
      ]) {
        const ac4 = new AbortController();
        const again = await catchUp(rt, wrong, ac4);
        ac4.abort();
        expect(
          again.responses[0]?.restarted,
          JSON.stringify(wrong, (_k, v) => (typeof v === "bigint" ? String(v) : v)),
        ).toBe(true);
        expect(again.responses.slice(1).every((r) => !r.restarted)).toBe(true);
        expect(rowsOf(again.responses).map((r) => r.change)).toEqual([first.at(-1)!.change, rows[0]!.change]);
      }
    } finally {
      ac.abort();
    }
  });

  it("ends a watcher that stops reading with RESOURCE_EXHAUSTED; a resume from its last change loses nothing", async () => {
    const rt = await start({ MACP_SUBSCRIBER_BUFFER: "4" });
    const ac = new AbortController();
    const it = catalog(rt).watchListRows({ maxRows: 1 }, { signal: ac.signal })[Symbol.asyncIterator]();
    const firstResponse = await it.next();
    expect(firstResponse.value?.caughtUp).toBe(true);
    // The watcher reads nothing more while many sessions run (rows made large by their intents).
    const ids: string[] = [];
    const intent = "i".repeat(16_000);
    for (let batch = 0; batch < 5; batch++) {
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          const sid = newSessionId();
          ids.push(sid);
          const o = agent(rt, OWNER, sid);
          await must(o.start([OWNER, TARGET], { intent }));
          await must(o.send("HandoffOffer", { handoffId: "h1", targetParticipant: TARGET, scope: "s" }));
          await must(agent(rt, TARGET, sid).send("HandoffAccept", { handoffId: "h1" }));
          await must(o.commit("handoff.accepted", true));
        }),
      );
    }
    // Now read what the transport held, up to the error.
    const finals = new Set<string>();
    let last = 0n;
    let code: Code | undefined;
    try {
      for (;;) {
        const r = await it.next();
        if (r.done) break;
        for (const row of r.value.rows) {
          expect(row.change).toBeGreaterThan(last);
          last = row.change;
          if (row.final) finals.add(row.summary?.metadata?.sessionId ?? "");
        }
      }
    } catch (e) {
      code = ConnectError.from(e).code;
      expect(ConnectError.from(e).rawMessage).toMatch(/fell too far behind.*after_change=/);
    } finally {
      ac.abort();
    }
    expect(code).toBe(Code.ResourceExhausted);
    expect(last).toBeLessThan(BigInt(rt.kernel.lastListChange()));
    expect(finals.size).toBeLessThan(ids.length);
    // Resume from the last change received: every other session's final row arrives.
    const ac2 = new AbortController();
    const { responses } = await catchUp(rt, { afterChange: last, storeId: rt.kernel.storeId, maxRows: 1000 }, ac2);
    ac2.abort();
    expect(responses[0]?.restarted).toBe(false);
    for (const r of rowsOf(responses)) {
      expect(r.change).toBeGreaterThan(last);
      if (r.final) finals.add(r.summary?.metadata?.sessionId ?? "");
    }
    expect(ids.filter((id) => !finals.has(id))).toEqual([]);
    await waitFor(() => rt.subscriptions.stats().streams === 0, 5_000, "the watchers' slots to be released");
  }, 60_000);

  it("counts under the observer's subscription cap", async () => {
    const rt = await start({ MACP_OBSERVER_MAX_SUBSCRIPTIONS: "1" });
    const ac = new AbortController();
    try {
      await catchUp(rt, {}, ac);
      const second = new AbortController();
      await expect(catchUp(rt, {}, second)).rejects.toMatchObject({ code: Code.ResourceExhausted });
      second.abort();
    } finally {
      ac.abort();
    }
    await waitFor(() => rt.subscriptions.stats().streams === 0, 5_000, "the slot to be released");
    const again = new AbortController();
    await catchUp(rt, {}, again);
    again.abort();
  });

  it("refuses a non-observer and a caller without credentials", async () => {
    const rt = await start();
    const ac = new AbortController();
    const err = await (async () => {
      try {
        for await (const _ of catalog(rt, OWNER).watchListRows({}, { signal: ac.signal })) break;
      } catch (e) {
        return ConnectError.from(e);
      }
      return null;
    })();
    expect(err?.code).toBe(Code.PermissionDenied);
    expect(err?.rawMessage).toMatch(/not an observer/);
    const anon = createClient(RuntimeCatalogService, createGrpcTransport({ baseUrl: rt.url }));
    await expect(
      (async () => {
        for await (const _ of anon.watchListRows({})) break;
      })(),
    ).rejects.toMatchObject({ code: Code.Unauthenticated });
  });

  it("answers UNIMPLEMENTED with MACP_LIST_ROWS=off (on both gRPC servers)", async () => {
    for (const server of ["grpc-js", "connect"]) {
      const rt = await start({ MACP_LIST_ROWS: "off", MACP_GRPC_SERVER: server });
      await expect(
        (async () => {
          for await (const _ of catalog(rt).watchListRows({})) break;
        })(),
      ).rejects.toMatchObject({ code: Code.Unimplemented });
      // The MACP service itself is unaffected.
      await expect(handoffFlow(rt)).resolves.toBeTruthy();
    }
  });

  it("serves the feed on the connect-node server too", async () => {
    const rt = await start({ MACP_GRPC_SERVER: "connect" });
    const sid = await taskFlow(rt);
    const ac = new AbortController();
    const { responses } = await catchUp(rt, {}, ac);
    ac.abort();
    await expectRowsEqualFold(rt, latest(rowsOf(responses)), [sid]);
  });

  it("keeps rows across a restart and folds open sessions on from their stored records", async () => {
    const dir = tempDir("baton-list-rows-");
    const env = { MACP_MEMORY_ONLY: "0", MACP_DATA_DIR: dir };
    const rt1 = await start(env);
    const storeId = rt1.kernel.storeId;
    const done = await handoffFlow(rt1);
    const open = await taskFlow(rt1, newSessionId(), false);
    const head = BigInt(rt1.kernel.lastListChange());
    await rt1.close();
    running.splice(running.indexOf(rt1), 1);
    const rt2 = await start(env);
    expect(rt2.kernel.storeId).toBe(storeId);
    expect(BigInt(rt2.kernel.lastListChange())).toBe(head);
    const t = agent(rt2, TARGET, open, TASK_MODE);
    await must(t.send("TaskComplete", { taskId: "t1", assignee: TARGET, summary: "done after restart" }));
    const ac = new AbortController();
    const { responses } = await catchUp(rt2, { afterChange: head - 1n, storeId }, ac);
    ac.abort();
    const rows = rowsOf(responses);
    expect(rows.map((r) => r.summary?.metadata?.sessionId)).toEqual([open]);
    await expectRowsEqualFold(rt2, latest(rows), [open]);
    expect(rows[0]?.nextActors).toEqual([OWNER]); // report in: the requester decides
    const all = latest(rowsOf((await catchUp(rt2, {}, new AbortController())).responses));
    await expectRowsEqualFold(rt2, all, [done, open]);
  });
});
