// The console's catalog against real runtimes over gRPC (issue 9), on the
// history path (tests/integration/console-rows.test.ts covers the list-row
// feed):
// - backfill from an external runtime PROCESS holding a few thousand sessions,
//   its list-row feed switched off (MACP_LIST_ROWS=off, as a plain MACP
//   runtime answers UNIMPLEMENTED), so the console folds histories:
//   it completes, reports progress (CatalogStatus and the log), and
//   ListSessionPage answers while it runs;
// - paging and full-text search over the RPC return the right rows;
// - a console restart resumes from its catalog file: closed sessions are not
//   read again (counted on the feeder's upstream reads), open ones are;
// - the per-person stream cap, and a browser that never reads its
//   SubscribeSession stream is cut off and everything is released.
import fs from "node:fs";
import http from "node:http";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConsoleService, type CatalogStatus } from "@/lib/gen/baton/v1/console_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { DEFAULT_CONFIGURATION_VERSION, HANDOFF_MODE, MODE_VERSION } from "@/lib/macp/constants";
import { buildEnvelope } from "@/lib/macp/payloads";
import { loadConsoleConfig } from "@/lib/server/config";
import { startConsole, type RunningConsole } from "@/lib/server/console";
import { signedIn, startTestConsole, type TestConsole } from "./actions-harness";
import { capturingLogger, OBSERVER, OWNER, seed, spawnRuntime, TARGET, type RuntimeProcess } from "./catalog-harness";
import { clientFor, newSessionId, tempDir, waitFor } from "./harness";

const SESSIONS = 2_500;

let runtime: RuntimeProcess;
let seeded: { ids: string[]; open: Set<string> };
const folders: string[] = [];
const consoleDir = tempDir("baton-catalog-console-");
folders.push(consoleDir);

async function externalConsole(lines: string[], extra: Record<string, string> = {}): Promise<RunningConsole> {
  const env = {
    PORT: "0",
    BATON_REQUIRE_SIGN_IN: "0",
    MACP_RUNTIME_URL: runtime.url,
    MACP_RUNTIME_TOKEN: OBSERVER,
    BATON_DATA_DIR: consoleDir,
    BATON_CATALOG_CONCURRENCY: "4",
    ...extra,
  };
  return startConsole({ config: loadConsoleConfig(env, ["--no-ui"], process.cwd()), env, logger: capturingLogger(lines) });
}

const browserOf = (c: { url: string }) => createClient(ConsoleService, createConnectTransport({ baseUrl: c.url, httpVersion: "1.1" }));

beforeAll(async () => {
  const dir = tempDir("baton-catalog-runtime-");
  folders.push(dir);
  runtime = await spawnRuntime(dir, { MACP_LIST_ROWS: "off" });
  seeded = await seed(runtime, SESSIONS);
}, 300_000);

afterAll(async () => {
  await runtime?.stop();
  for (const d of folders) fs.rmSync(d, { recursive: true, force: true });
});

describe("the console catalog against an external runtime process with history", () => {
  it("backfills in the background, reports progress, answers ListSessionPage meanwhile, and pages and searches the right rows", async () => {
    const lines: string[] = [];
    const c = await externalConsole(lines);
    try {
      const browser = browserOf(c);
      const seen: CatalogStatus[] = [];
      let answeredWhileBackfilling = false;
      await waitFor(
        async () => {
          const page = await browser.listSessionPage({ limit: 20 });
          if (page.status) seen.push(page.status);
          if (page.status?.backfilling && page.total > 0n) answeredWhileBackfilling = true;
          return page.status?.backfilling === false && page.status.sessionsKnown === BigInt(SESSIONS);
        },
        240_000,
        "backfill complete",
      );
      expect(answeredWhileBackfilling).toBe(true);
      // Progress went up as histories were read.
      const partial = seen.filter((s) => s.backfilling && s.sessionsIndexed < s.sessionsKnown);
      expect(partial.length).toBeGreaterThan(0);
      expect(lines.some((l) => /session catalog: \d+ of \d+ sessions indexed/.test(l))).toBe(true);
      expect(lines.some((l) => l.includes("session catalog complete"))).toBe(true);
      expect(c.gateway.feeder.mode).toBe("histories");
      expect(lines.some((l) => l.includes("the runtime has no list-row feed"))).toBe(true);
      // Histories were read with bounded concurrency: at most 4 catch-up reads plus the open sessions followed.
      expect(c.gateway.feeder.readsStarted).toBeGreaterThanOrEqual(SESSIONS);

      // Paging: every session exactly once, in start order.
      const ids: string[] = [];
      for (let offset = 0; ; offset += 500) {
        const page = await browser.listSessionPage({ query: { sort: "started", ascending: true }, offset, limit: 500 });
        expect(page.total).toBe(BigInt(SESSIONS));
        ids.push(...page.sessions.map((s) => s.metadata?.sessionId ?? ""));
        const started = page.sessions.map((s) => Number(s.metadata?.startedAtUnixMs));
        expect(started).toEqual([...started].sort((a, b) => a - b));
        if (page.sessions.length < 500) break;
      }
      expect(ids).toHaveLength(SESSIONS);
      expect(new Set(ids)).toEqual(new Set(seeded.ids));

      // Filters and search.
      const openPage = await browser.listSessionPage({ query: { state: "open" }, limit: 500 });
      expect(new Set(openPage.sessions.map((s) => s.metadata?.sessionId))).toEqual(seeded.open);
      expect(openPage.sessions.every((s) => s.phase === "OfferPending")).toBe(true);
      const committed = await browser.listSessionPage({ query: { state: "resolved", phase: "Committed" }, limit: 1 });
      expect(committed.total).toBe(BigInt(SESSIONS - seeded.open.size));
      const one = await browser.listSessionPage({ query: { text: "Pager 01234" } });
      expect(one.sessions.map((s) => s.metadata?.sessionId)).toEqual([seeded.ids[1234]]);
      expect(one.sessions[0]).toMatchObject({ intent: "rotate pager 01234", scope: "day shift", currentOwner: TARGET });
      const ten = await browser.listSessionPage({ query: { text: "pager 0123", sort: "intent", ascending: true } });
      expect(ten.sessions.map((s) => s.intent)).toEqual(Array.from({ length: 10 }, (_, k) => `rotate pager 0123${k}`));
      const byId = await browser.listSessionPage({ query: { text: (seeded.ids[42] ?? "").slice(9, 23) } });
      expect(byId.sessions.map((s) => s.metadata?.sessionId)).toEqual([seeded.ids[42]]);
      const night = await browser.listSessionPage({ query: { text: "night", state: "open" }, limit: 500 });
      expect(night.total).toBe(BigInt([...seeded.open].filter((sid) => seeded.ids.indexOf(sid) % 2 === 1).length));
      expect((await browser.listSessionPage({ query: { participant: "target" }, limit: 1 })).total).toBe(BigInt(SESSIONS));
    } finally {
      await c.close();
    }
  }, 300_000);

  it("survives a restart and resumes: closed sessions are not read again, open ones are", async () => {
    const lines: string[] = [];
    const c = await externalConsole(lines);
    try {
      const browser = browserOf(c);
      // The stored rows answer at once, before anything is read again.
      const first = await browser.listSessionPage({ query: { state: "resolved" }, limit: 5 });
      expect(first.total).toBe(BigInt(SESSIONS - seeded.open.size));
      expect(first.sessions.every((s) => s.phase === "Committed")).toBe(true);
      await waitFor(
        async () => (await browser.listSessionPage({ limit: 1 })).status?.backfilling === false,
        60_000,
        "open sessions followed again",
      );
      // Give anything that would re-read closed sessions the chance to.
      await new Promise((r) => setTimeout(r, 500));
      expect(c.gateway.feeder.readsStarted).toBe(seeded.open.size);
      // A new session after the restart is picked up incrementally.
      const [sid] = (await seed(runtime, 1)).ids;
      // (Session 0 of a seeding is one of those left open.)
      await waitFor(
        async () => (await browser.listSessionPage({ query: { text: sid?.slice(0, 18) ?? "" } })).sessions[0]?.phase === "OfferPending",
        10_000,
        "new session",
      );
      expect(c.gateway.feeder.readsStarted).toBe(seeded.open.size + 1);
    } finally {
      await c.close();
    }
  }, 120_000);
});

describe("console streams of one person", () => {
  let tc: TestConsole;
  let runtimeUrl: string;
  beforeAll(async () => {
    tc = await startTestConsole([{ username: "vera", role: "viewer", name: "Vera" }], {
      BATON_MAX_STREAMS_PER_PERSON: "3",
      BATON_STREAM_BUFFER_BYTES: "1048576",
      BATON_STREAM_STALL_MS: "1000",
    });
    if (!tc.console.runtime) throw new Error("expected the embedded runtime");
    runtimeUrl = tc.console.runtime.url;
  });
  afterAll(async () => {
    await tc?.close();
  });

  it("caps concurrent streams per signed-in person with RESOURCE_EXHAUSTED", async () => {
    const vera = await signedIn(tc, "vera");
    const other = await signedIn(tc, "vera"); // a second sign-in of the same person shares the allowance
    const acs = [new AbortController(), new AbortController(), new AbortController()];
    const drain = async (it: AsyncIterable<unknown>) => {
      try {
        for await (const _ of it) void _;
        return null;
      } catch (e) {
        return ConnectError.from(e);
      }
    };
    const held = [
      drain(vera.console().watchSessionChanges({}, { signal: acs[0]?.signal })),
      drain(vera.console().watchSessionChanges({ query: { state: "open" } }, { signal: acs[1]?.signal })),
      drain(other.console().watchSessionChanges({}, { signal: acs[2]?.signal })),
    ];
    await waitFor(() => tc.console.gateway.caps.count("vera") === 3, 5_000, "three streams");
    const refused = await drain(other.console().watchSessionChanges({}));
    expect(refused?.code).toBe(Code.ResourceExhausted);
    expect(refused?.rawMessage).toContain("BATON_MAX_STREAMS_PER_PERSON=3");
    const inbox = await drain(vera.actions().watchInbox({}));
    expect(inbox?.code).toBe(Code.ResourceExhausted);
    // Reads that are not streams are still answered.
    expect((await vera.console().listSessionPage({})).status).toBeDefined();
    acs[0]?.abort();
    await waitFor(() => tc.console.gateway.caps.count("vera") === 2, 5_000, "a slot freed");
    const ac = new AbortController();
    const again = drain(vera.console().watchSessionChanges({}, { signal: ac.signal }));
    await waitFor(() => tc.console.gateway.caps.count("vera") === 3, 5_000, "slot taken again");
    ac.abort();
    for (const a of acs) a.abort();
    await Promise.all([...held, again]);
    await waitFor(() => tc.console.gateway.caps.count("vera") === 0, 5_000, "all slots freed");
  });

  it("cuts off a browser that never reads its SubscribeSession stream, and lets go of everything", async () => {
    // A session with 30 contexts of 700 KB (21 MB).
    const sid = newSessionId();
    const owner = clientFor({ url: runtimeUrl }, OWNER);
    const send = async (messageType: string, payload: Record<string, unknown>) => {
      const res = await owner.send({ envelope: buildEnvelope({ mode: HANDOFF_MODE, messageType, sessionId: sid, payload }) });
      if (!res.ack?.ok) throw new Error(`${messageType}: ${res.ack?.error?.message}`);
    };
    await send("SessionStart", {
      intent: "big",
      participants: [OWNER, TARGET],
      modeVersion: MODE_VERSION,
      configurationVersion: DEFAULT_CONFIGURATION_VERSION,
      policyVersion: "",
      ttlMs: 3_600_000n,
    });
    await send("HandoffOffer", { handoffId: "h1", targetParticipant: TARGET, scope: "big", reason: "r" });
    const context = new Uint8Array(700_000).fill(97);
    for (let i = 0; i < 30; i++) await send("HandoffContext", { handoffId: "h1", contentType: "text/plain", context });
    const gw = tc.console.gateway;
    await waitFor(() => gw.catalog.get(sid)?.needsRead === false, 10_000, "catalog caught up");
    // The embedded runtime feeds the catalog its list rows: no history read for the list.
    expect(gw.feeder.mode).toBe("rows");
    expect(gw.feeder.readsStarted).toBe(0);
    const vera = await signedIn(tc, "vera");
    const ownUpstream = gw.stats().upstreamSubscriptions;

    // A Connect server-stream request whose response is never read.
    const body = Buffer.from(JSON.stringify({ sessionId: sid }));
    const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), body]);
    frame.writeUInt32BE(body.length, 1);
    const connections = () =>
      new Promise<number>((resolve, reject) => tc.console.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    const before = await connections();
    const agentless = new http.Agent({ keepAlive: false });
    const req = http.request(`${tc.url}/baton.v1.ConsoleService/SubscribeSession`, {
      method: "POST",
      agent: agentless,
      headers: { ...vera.headers(), "content-type": "application/connect+json", "connect-protocol-version": "1" },
    });
    const responded = new Promise<http.IncomingMessage>((resolve, reject) => {
      req.on("response", (res) => {
        res.pause(); // never read
        resolve(res);
      });
      req.on("error", reject);
    });
    req.end(frame);
    const res = await responded;
    expect(res.statusCode).toBe(200);
    await waitFor(() => gw.stats().browserStreams === 1 && gw.caps.count("vera") === 1, 5_000, "stream open");
    expect(await connections()).toBe(before + 1);
    // The server stops at its buffer, waits BATON_STREAM_STALL_MS, then closes the connection and lets go.
    const t0 = Date.now();
    await waitFor(() => gw.stats().browserStreams === 0 && gw.caps.count("vera") === 0, 15_000, "stream released");
    expect(Date.now() - t0).toBeLessThan(15_000);
    await waitFor(async () => (await connections()) <= before, 5_000, "connection closed by the server");
    await waitFor(() => gw.stats().upstreamSubscriptions === ownUpstream, 5_000, "upstream released");
    res.destroy();
    agentless.destroy();
    expect(gw.catalog.get(sid)?.summary.metadata?.state).toBe(SessionState.OPEN);
  });
});
