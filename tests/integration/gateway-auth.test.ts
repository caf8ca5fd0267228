// How the console authenticates to the runtime: an external runtime with
// static tokens (MACP_RUNTIME_URL + an observer's MACP_RUNTIME_TOKEN), the
// embedded runtime with user-configured tokens (the console adds its own
// observer token), a rejected credential, and graceful shutdown.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { ConsoleService, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import type { RunningRuntime } from "@/lib/runtime";
import { loadConsoleConfig } from "@/lib/server/config";
import { startConsole, type RunningConsole } from "@/lib/server/console";
import { agent, newSessionId, startTestRuntime, waitFor } from "./harness";

const OWNER = "agent://owner";
const TARGET = "agent://target";
// Static tokens equal to the identities keep the scripted agents unchanged.
const TOKENS = JSON.stringify([
  { token: OWNER, sender: OWNER },
  { token: TARGET, sender: TARGET },
  { token: "ops-observer-secret", sender: "ops:console", is_observer: true, can_start_sessions: false },
  { token: "not-an-observer", sender: "someone" },
]);
const quiet = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

async function consoleWith(env: Record<string, string>): Promise<RunningConsole> {
  // No accounts here: reads are open.
  const full = { PORT: "0", BATON_STREAM_GRACE_MS: "0", BATON_REQUIRE_SIGN_IN: "0", BATON_CATALOG_PATH: "memory", ...env };
  const c = await startConsole({ config: loadConsoleConfig(full, ["--no-ui"], process.cwd()), env: full, logger: quiet });
  cleanups.push(() => c.close());
  return c;
}

function browserFor(c: RunningConsole) {
  return createClient(ConsoleService, createConnectTransport({ baseUrl: c.url, httpVersion: "1.1" }));
}

async function offeredSession(runtimeUrl: string): Promise<string> {
  const sid = newSessionId();
  const owner = agent({ url: runtimeUrl }, OWNER, sid);
  const start = await owner.start([OWNER, TARGET]);
  expect(start.ok).toBe(true);
  const offer = await owner.send("HandoffOffer", { handoffId: "h1", targetParticipant: TARGET, scope: "pager", reason: "r" });
  expect(offer.ok).toBe(true);
  return sid;
}

/** The session's list row, once the console's catalog has it (and `ready` says it is complete). */
async function rowOf(c: RunningConsole, sid: string, ready: (s: SessionSummary) => boolean = () => true): Promise<SessionSummary> {
  let found: SessionSummary | undefined;
  await waitFor(
    async () => {
      const page = await browserFor(c).listSessionPage({ query: { text: sid } });
      found = page.sessions.find((s) => s.metadata?.sessionId === sid);
      return found !== undefined && ready(found);
    },
    5_000,
    `list row of ${sid}`,
  );
  return found as SessionSummary;
}

describe("console ↔ runtime credentials", () => {
  it("reads an external runtime with an observer token", async () => {
    const rt: RunningRuntime = await startTestRuntime({ MACP_AUTH_TOKENS_JSON: TOKENS });
    cleanups.push(() => rt.close());
    const sid = await offeredSession(rt.url);
    const c = await consoleWith({ MACP_RUNTIME_URL: rt.url, MACP_RUNTIME_TOKEN: "ops-observer-secret" });
    expect(c.runtime).toBeNull();
    expect((await rowOf(c, sid, (s) => s.phase !== "")).phase).toBe("OfferPending");
    const stats = await browserFor(c).getGatewayStats({});
    expect(stats.runtimeKind).toBe("external");
    expect(stats.runtimeAddress).toBe(rt.url);
  });

  it("adds its own observer token to the embedded runtime's static tokens", async () => {
    const c = await consoleWith({
      MACP_BIND_ADDR: "127.0.0.1:0",
      MACP_MEMORY_ONLY: "1",
      MACP_ALLOW_INSECURE: "1",
      MACP_AUTH_TOKENS_JSON: TOKENS,
    });
    if (!c.runtime) throw new Error("expected the embedded runtime");
    expect(c.runtime.authMode).toBe("tokens");
    const sid = await offeredSession(c.runtime.url);
    expect((await rowOf(c, sid, (s) => s.phase !== "")).phase).toBe("OfferPending");
    const summary = await browserFor(c).getSessionSummary({ sessionId: sid });
    expect(summary.summary?.currentTarget).toBe(TARGET);
  });

  it("reports a rejected console credential as the runtime being unavailable, with the reason", async () => {
    const rt = await startTestRuntime({ MACP_AUTH_TOKENS_JSON: TOKENS });
    cleanups.push(() => rt.close());
    const c = await consoleWith({ MACP_RUNTIME_URL: rt.url, MACP_RUNTIME_TOKEN: "wrong-token" });
    // The list still answers (from the catalog), and says why it is not current.
    let message = "";
    await waitFor(
      async () => {
        const page = await browserFor(c).listSessionPage({});
        message = page.status?.message ?? "";
        // "connecting to the runtime" until the runtime has answered the feed.
        return message !== "" && message !== "connecting to the runtime";
      },
      5_000,
      "catalog status",
    );
    expect(message).toContain("MACP_RUNTIME_TOKEN");
    // A read of one session reports the rejected credential as the runtime being unavailable.
    const err = await browserFor(c)
      .getSessionSummary({ sessionId: newSessionId() })
      .then(
        () => null,
        (e: unknown) => ConnectError.from(e),
      );
    expect(err?.code).toBe(Code.Unavailable);
    expect(err?.rawMessage).toContain("MACP_RUNTIME_TOKEN");
  });

  it("shows metadata-only rows when the console's identity is not an observer", async () => {
    const rt = await startTestRuntime({ MACP_AUTH_TOKENS_JSON: TOKENS });
    cleanups.push(() => rt.close());
    const sid = await offeredSession(rt.url);
    const c = await consoleWith({ MACP_RUNTIME_URL: rt.url, MACP_RUNTIME_TOKEN: "not-an-observer" });
    await rowOf(c, sid);
    // The read was refused (and put off): the row keeps the metadata only.
    await waitFor(
      async () => c.gateway.feeder.followedCount === 0 && (c.gateway.catalog.nextDeferred() ?? 0) > Date.now(),
      5_000,
      "refused read put off",
    );
    const row = await rowOf(c, sid);
    expect(row?.phase).toBe("");
    expect(row?.metadata?.initiator).toBe(OWNER);
    await expect(browserFor(c).getSessionSummary({ sessionId: sid })).rejects.toMatchObject({ code: Code.PermissionDenied });
  });
});

describe("shutdown", () => {
  it("ends open browser streams and releases the runtime when the console closes", async () => {
    const c = await consoleWith({ MACP_BIND_ADDR: "127.0.0.1:0", MACP_MEMORY_ONLY: "1" });
    if (!c.runtime) throw new Error("expected the embedded runtime");
    const sid = await offeredSession(c.runtime.url);
    const browser = browserFor(c);
    const ended: unknown[] = [];
    const run = async (it: AsyncIterable<unknown>) => {
      try {
        for await (const _ of it) void _;
        ended.push("ok");
      } catch (e) {
        ended.push(e);
      }
    };
    const streams = [run(browser.watchSessionChanges({})), run(browser.subscribeSession({ sessionId: sid }))];
    await waitFor(async () => (await browser.getGatewayStats({})).browserStreams === 2, 5_000, "streams open");
    const t0 = Date.now();
    await c.close();
    await Promise.all(streams);
    expect(Date.now() - t0).toBeLessThan(900);
    expect(ended).toHaveLength(2);
    expect(c.gateway.stats().upstreamSubscriptions).toBe(0);
  });
});
