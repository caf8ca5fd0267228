// The console gateway end to end: the real console server (HTTP/1.1, Connect)
// on a loopback port with the real embedded runtime (memory only) started
// in-process exactly as `npm start` does, a browser-like Connect client, and
// scripted agents sending over gRPC.
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ConsoleService,
  type SessionEvent,
  type SessionSummary,
  type SubscribeSessionResponse,
  type WatchSessionChangesResponse,
} from "@/lib/gen/baton/v1/console_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { loadConsoleConfig } from "@/lib/server/config";
import { startConsole, type RunningConsole } from "@/lib/server/console";
import { agent, clientFor, collectEnvelopes, newSessionId, waitFor } from "./harness";

const OWNER = "agent://owner";
const TARGET = "agent://target";

let consoleServer: RunningConsole;
let runtimeUrl: string;
let browser: Client<typeof ConsoleService>;

beforeAll(async () => {
  const env = {
    MACP_BIND_ADDR: "127.0.0.1:0",
    MACP_MEMORY_ONLY: "1",
    MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
    MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
    PORT: "0",
    BATON_STREAM_GRACE_MS: "0",
    // No accounts here: reads are open.
    BATON_REQUIRE_SIGN_IN: "0",
  };
  const config = loadConsoleConfig(env, ["--no-ui"], process.cwd());
  consoleServer = await startConsole({ config, env, logger: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }) });
  if (!consoleServer.runtime) throw new Error("expected the embedded runtime");
  runtimeUrl = consoleServer.runtime.url;
  browser = createClient(ConsoleService, createConnectTransport({ baseUrl: consoleServer.url, httpVersion: "1.1" }));
});

afterAll(async () => {
  await consoleServer?.close();
});

/** A scripted handoff between OWNER and TARGET over real gRPC. */
async function handoffSession(opts: { offer?: boolean; accept?: boolean; commit?: boolean } = {}) {
  const sessionId = newSessionId();
  const owner = agent({ url: runtimeUrl }, OWNER, sessionId);
  const target = agent({ url: runtimeUrl }, TARGET, sessionId);
  const ok = (ack: { ok: boolean; error?: { code: string; message: string } }) => {
    if (!ack.ok) throw new Error(`rejected: ${ack.error?.code} ${ack.error?.message}`);
  };
  const s = {
    sessionId,
    start: async () => ok(await owner.start([OWNER, TARGET], { intent: "hand over the pager" })),
    offer: async (handoffId = "h1") =>
      ok(await owner.send("HandoffOffer", { handoffId, targetParticipant: TARGET, scope: "pager", reason: "shift change" })),
    context: async (n: number) =>
      ok(
        await owner.send("HandoffContext", { handoffId: "h1", contentType: "text/plain", context: new TextEncoder().encode(`note ${n}`) }),
      ),
    accept: async () => ok(await target.send("HandoffAccept", { handoffId: "h1", acceptedBy: TARGET, reason: "on it" })),
    commit: async () => ok(await owner.commit("handoff.accepted", true)),
  };
  await s.start();
  if (opts.offer) await s.offer();
  if (opts.accept) await s.accept();
  if (opts.commit) await s.commit();
  return s;
}

/** The session's full history as a participant sees it directly from the runtime. */
async function runtimeHistory(sessionId: string, count: number): Promise<Envelope[]> {
  return collectEnvelopes(clientFor({ url: runtimeUrl }, OWNER), sessionId, count);
}

function background<T>(start: (signal: AbortSignal) => AsyncIterable<T>) {
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
    abort: async () => {
      ac.abort();
      await done;
    },
  };
}

/** Rows of the sessions, as one ListSessionPage over them (a browser's window). */
async function rows(...sessionIds: string[]): Promise<Map<string, SessionSummary>> {
  const page = await browser.listSessionPage({ limit: 500 });
  return new Map(
    page.sessions.filter((r) => sessionIds.includes(r.metadata?.sessionId ?? "")).map((r) => [r.metadata?.sessionId ?? "", r]),
  );
}

const noticed = (items: WatchSessionChangesResponse[], sid: string) =>
  items.some((i) => i.item.case === "change" && i.item.value.sessionIds.includes(sid));

const events = (items: SubscribeSessionResponse[]): SessionEvent[] => items.flatMap((i) => (i.item.case === "event" ? [i.item.value] : []));

async function stats() {
  return browser.getGatewayStats({});
}

describe("the session list over the real runtime (ListSessionPage + WatchSessionChanges)", () => {
  it("pages folded rows, then notices live changes with the right phases as an agent works", async () => {
    const resolved = await handoffSession({ offer: true, accept: true, commit: true });
    const live = await handoffSession({ offer: true });

    const watch = background((signal) => browser.watchSessionChanges({}, { signal }));
    await waitFor(() => watch.items.some((i) => i.item.case === "change"), 5_000, "first change message");
    const phase = async (sid: string) => (await rows(sid)).get(sid)?.phase ?? "";
    await waitFor(
      async () => (await phase(resolved.sessionId)) === "Committed" && (await phase(live.sessionId)) === "OfferPending",
      5_000,
      "rows folded",
    );
    const snap = await rows(resolved.sessionId, live.sessionId);
    expect(snap.get(resolved.sessionId)).toMatchObject({ phase: "Committed", outcome: "positive", currentOwner: TARGET, eventCount: 4n });
    expect(snap.get(resolved.sessionId)?.metadata?.state).toBe(SessionState.RESOLVED);
    expect(snap.get(live.sessionId)).toMatchObject({
      phase: "OfferPending",
      intent: "hand over the pager",
      currentOwner: OWNER,
      currentTarget: TARGET,
      scope: "pager",
      eventCount: 2n,
    });

    const before = watch.items.length;
    await live.accept();
    await waitFor(() => noticed(watch.items.slice(before), live.sessionId), 5_000, "accept noticed");
    expect(await phase(live.sessionId)).toBe("Accepted");
    await live.commit();
    await waitFor(
      async () =>
        (await rows(live.sessionId)).get(live.sessionId)?.metadata?.state === SessionState.RESOLVED &&
        (await phase(live.sessionId)) === "Committed",
      5_000,
      "Committed + RESOLVED",
    );
    expect((await rows(live.sessionId)).get(live.sessionId)).toMatchObject({ currentOwner: TARGET, outcome: "positive", eventCount: 4n });

    const fresh = await handoffSession();
    await waitFor(() => noticed(watch.items, fresh.sessionId), 5_000, "new session noticed");
    await fresh.offer();
    await waitFor(async () => (await phase(fresh.sessionId)) === "OfferPending", 5_000, "offer folded");
    // Search and filters run on the server.
    const found = await browser.listSessionPage({ query: { text: fresh.sessionId.slice(0, 13) } });
    expect(found.sessions.map((r) => r.metadata?.sessionId)).toEqual([fresh.sessionId]);
    const open = await browser.listSessionPage({ query: { state: "open", phase: "OfferPending" } });
    expect(open.sessions.map((r) => r.metadata?.sessionId)).toContain(fresh.sessionId);
    expect(open.sessions.map((r) => r.metadata?.sessionId)).not.toContain(live.sessionId);
    const last = watch.items.filter((i) => i.item.case === "change").at(-1);
    expect(last?.item.case === "change" && Number(last.item.value.total)).toBeGreaterThanOrEqual(3);
    expect(watch.error).toBeNull();
    await watch.abort();
  });
});

describe("SubscribeSession over the real runtime", () => {
  it("replays from sequence N, then goes live with no gap and no duplicate", async () => {
    const s = await handoffSession({ offer: true });
    await s.context(1);
    const sub = background((signal) => browser.subscribeSession({ sessionId: s.sessionId, afterSequence: 1n }, { signal }));
    await waitFor(() => sub.items.some((i) => i.item.case === "caughtUp"), 5_000, "CaughtUp");
    await s.accept();
    await s.commit();
    await waitFor(() => events(sub.items).length === 4, 5_000, "live events");
    await waitFor(() => sub.items.filter((i) => i.item.case === "metadata").length === 2, 5_000, "RESOLVED metadata");

    const kinds = sub.items.filter((i) => i.item.case !== "heartbeat").map((i) => i.item.case);
    expect(kinds).toEqual(["metadata", "event", "event", "caughtUp", "event", "event", "metadata"]);
    const caught = sub.items.find((i) => i.item.case === "caughtUp");
    expect(caught?.item.case === "caughtUp" && caught.item.value.headSequence).toBe(3n);
    const last = sub.items.filter((i) => i.item.case === "metadata").at(-1);
    expect(last?.item.case === "metadata" && last.item.value.state).toBe(SessionState.RESOLVED);

    const history = await runtimeHistory(s.sessionId, 5);
    const got = events(sub.items);
    expect(got.map((e) => Number(e.sequence))).toEqual([2, 3, 4, 5]);
    expect(got.map((e) => e.envelope?.messageId)).toEqual(history.slice(1).map((e) => e.messageId));
    expect(got.every((e) => e.sessionId === s.sessionId && e.observedAtUnixMs > 0n)).toBe(true);
    await sub.abort();
  });

  it("resumes after an aborted browser stream: the concatenation is the full history exactly once", async () => {
    const s = await handoffSession({ offer: true });
    const total = 2 + 40;
    // The agent keeps sending while the browser stream is killed and resumed.
    const sending = (async () => {
      for (let i = 1; i <= 40; i++) {
        await s.context(i);
        if (i % 5 === 0) await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const first = background((signal) => browser.subscribeSession({ sessionId: s.sessionId, afterSequence: 0n }, { signal }));
    await waitFor(() => events(first.items).length >= 8, 5_000, "first events");
    await first.abort();
    const seen = events(first.items);
    const lastSeen = seen.at(-1)?.sequence ?? 0n;

    const second = background((signal) => browser.subscribeSession({ sessionId: s.sessionId, afterSequence: lastSeen }, { signal }));
    await sending;
    await waitFor(() => seen.length + events(second.items).length >= total, 10_000, "all events after resume");
    await new Promise((r) => setTimeout(r, 50)); // nothing extra may trail in
    const all = [...seen, ...events(second.items)];
    expect(all.map((e) => Number(e.sequence))).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const history = await runtimeHistory(s.sessionId, total);
    expect(all.map((e) => e.envelope?.messageId)).toEqual(history.map((e) => e.messageId));
    expect(new Set(all.map((e) => e.envelope?.messageId)).size).toBe(total);
    await second.abort();
  });

  it("rejects bad ids and reports unknown sessions", async () => {
    const code = async (it: AsyncIterable<unknown>) => {
      try {
        for await (const _ of it) void _;
        return null;
      } catch (e) {
        return ConnectError.from(e).code;
      }
    };
    expect(await code(browser.subscribeSession({ sessionId: "nope" }))).toBe(Code.InvalidArgument);
    expect(await code(browser.subscribeSession({ sessionId: newSessionId() }))).toBe(Code.NotFound);
    await expect(browser.getSessionSummary({ sessionId: newSessionId() })).rejects.toMatchObject({ code: Code.NotFound });
    const s = await handoffSession({ offer: true });
    const res = await browser.getSessionSummary({ sessionId: s.sessionId });
    expect(res.summary).toMatchObject({ phase: "OfferPending", eventCount: 2n });
  });
});

describe("upstream accounting", () => {
  it("returns to the catalog's own upstream streams once every browser stream is gone", async () => {
    const a = await handoffSession({ offer: true });
    const b = await handoffSession({ offer: true, accept: true, commit: true });
    const gw = consoleServer.gateway;
    // The catalog holds one WatchSessions stream and one subscription per open session it follows.
    const own = () => 1 + gw.feeder.followedCount;
    const streams = [
      background((signal) => browser.watchSessionChanges({}, { signal })),
      background((signal) => browser.watchSessionChanges({ query: { state: "open" } }, { signal })),
      background((signal) => browser.subscribeSession({ sessionId: a.sessionId }, { signal })),
      background((signal) => browser.subscribeSession({ sessionId: a.sessionId, afterSequence: 1n }, { signal })),
      background((signal) => browser.subscribeSession({ sessionId: b.sessionId }, { signal })),
    ];
    await waitFor(
      async () => {
        const s = await stats();
        return s.browserStreams === 5 && s.upstreamSubscriptions > own();
      },
      5_000,
      "streams open",
    );
    const open = await stats();
    expect(open.runtimeKind).toBe("embedded");
    expect(open.runtimeAddress).toBe(consoleServer.runtimeAddress);
    await Promise.all(streams.map((s) => s.abort()));
    await waitFor(
      async () => {
        const s = await stats();
        return s.browserStreams === 0 && s.upstreamSubscriptions === own();
      },
      5_000,
      "upstream back to the catalog's own",
    );
    expect(streams.every((s) => s.error === null)).toBe(true);
  });
});
