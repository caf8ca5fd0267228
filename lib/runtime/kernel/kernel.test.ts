// Kernel residency: closed sessions leave memory once their terminal record is
// durable, and the cache of recently closed sessions stays within its bounds
// (count and bytes). Driven through Kernel.send over the in-memory store.
import { fromBinary } from "@bufbuild/protobuf";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { SessionSummarySchema } from "@/lib/gen/baton/v1/console_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { DEFAULT_CONFIGURATION_VERSION, DEFAULT_POLICY_ID, HANDOFF_MODE, MODE_VERSION } from "@/lib/macp/constants";
import { newSessionId } from "@/lib/macp/ids";
import { buildEnvelope } from "@/lib/macp/payloads";
import type { Identity } from "../auth";
import { loadConfig } from "../config";
import { Kernel } from ".";
import { openMemoryStore } from "../store";

const silent = pino({ level: "silent" });
const who = (sender: string): Identity => ({
  sender,
  canStartSessions: true,
  allowedModes: [],
  canManageRegistry: false,
  isObserver: false,
});

async function kernel(env: Record<string, string>) {
  const store = openMemoryStore();
  const config = loadConfig({
    MACP_ALLOW_INSECURE: "1",
    MACP_MESSAGE_LIMIT_PER_MINUTE: "0",
    MACP_SESSION_START_LIMIT_PER_MINUTE: "0",
    ...env,
  });
  return { store, k: await Kernel.open({ store, config, logger: silent }) };
}

async function resolvedSession(k: Kernel, participants = ["o", "t"]): Promise<string> {
  const sid = newSessionId();
  const send = async (as: string, messageType: string, payload: Record<string, unknown>) => {
    const ack = await k.send(who(as), buildEnvelope({ mode: HANDOFF_MODE, messageType, sessionId: sid, payload }));
    if (!ack.ok) throw new Error(`${ack.error?.code} ${ack.error?.message}`);
  };
  await send("o", "SessionStart", {
    participants,
    modeVersion: MODE_VERSION,
    configurationVersion: DEFAULT_CONFIGURATION_VERSION,
    ttlMs: 60_000n,
  });
  await send("o", "HandoffOffer", { handoffId: "h1", targetParticipant: "t" });
  await send("t", "HandoffDecline", { handoffId: "h1", reason: "no" });
  await send("o", "Commitment", {
    commitmentId: "c1",
    action: "handoff.declined",
    authorityScope: "x",
    reason: "x",
    modeVersion: MODE_VERSION,
    configurationVersion: DEFAULT_CONFIGURATION_VERSION,
    policyVersion: DEFAULT_POLICY_ID,
    outcomePositive: false,
  });
  return sid;
}

describe("kernel residency", () => {
  it("drops a session from memory once its Commitment is durable, and reads it back from storage", async () => {
    const { store, k } = await kernel({ MACP_CLOSED_SESSION_CACHE: "0" });
    const sid = await resolvedSession(k);
    expect(k.stats()).toMatchObject({ resident: 0, open: 0, closedCached: 0 });
    const before = store.readStats().indexRows;
    expect(k.getSession(sid)?.metadata.state).toBe(SessionState.RESOLVED);
    expect(k.getSession(sid)?.metadata.state).toBe(SessionState.RESOLVED);
    expect(store.readStats().indexRows - before).toBe(2); // no cache: every read goes to the index
    await k.close();
  });

  it("keeps at most MACP_CLOSED_SESSION_CACHE closed sessions, most recently used last out", async () => {
    const { store, k } = await kernel({ MACP_CLOSED_SESSION_CACHE: "2" });
    const [a, b, c] = [await resolvedSession(k), await resolvedSession(k), await resolvedSession(k)];
    expect(k.stats().closedCached).toBe(2);
    const reads = () => store.readStats().indexRows;
    let n = reads();
    k.getSession(c as string);
    k.getSession(b as string);
    expect(reads() - n).toBe(0); // both still cached
    k.getSession(a as string); // evicted when c closed: read, and now cached in place of c
    expect(reads() - n).toBe(1);
    n = reads();
    k.getSession(c as string);
    expect(reads() - n).toBe(1);
    expect(k.stats().closedCached).toBe(2);
    await k.close();
  });

  it("bounds the cache by approximate bytes too", async () => {
    const many = Array.from({ length: 200 }, (_, i) => `participant-with-a-long-identifier-${i}`);
    const { k } = await kernel({ MACP_CLOSED_SESSION_CACHE: "100", MACP_CLOSED_SESSION_CACHE_BYTES: "100000" });
    for (let i = 0; i < 6; i++) await resolvedSession(k, ["o", "t", ...many]);
    const s = k.stats();
    expect(s.closedCachedBytes).toBeLessThanOrEqual(100_000);
    expect(s.closedCached).toBeGreaterThan(0);
    expect(s.closedCached).toBeLessThan(6);
    await k.close();
  });
});

describe("list rows", () => {
  it("writes a row with every record, final once closed, and tells listeners after the commit", async () => {
    const { store, k } = await kernel({});
    const seen: { change: number; final: boolean }[] = [];
    const stop = k.watchListRows((rows) => seen.push(...rows.map((r) => ({ change: r.change, final: r.final }))));
    const sid = await resolvedSession(k);
    stop();
    expect(seen.map((r) => r.change)).toEqual([1, 2, 3, 4]);
    expect(seen.map((r) => r.final)).toEqual([false, false, false, true]);
    expect(k.lastListChange()).toBe(4);
    const rows = k.readListRows(0, 10);
    expect(rows.map((r) => [r.sessionId, r.change, r.final])).toEqual([[sid, 4, true]]);
    // The session, and its fold, left memory with its terminal record.
    expect(k.stats().resident).toBe(0);
    await k.close();
    await store.close();
  });

  it("folds a failed commit's record out again: the next row follows the store, not the lost write", async () => {
    const { store, k } = await kernel({});
    const sid = newSessionId();
    const send = (as: string, messageType: string, payload: Record<string, unknown>) =>
      k.send(who(as), buildEnvelope({ mode: HANDOFF_MODE, messageType, sessionId: sid, payload }));
    expect(
      (
        await send("o", "SessionStart", {
          participants: ["o", "t"],
          modeVersion: MODE_VERSION,
          configurationVersion: DEFAULT_CONFIGURATION_VERSION,
          ttlMs: 60_000n,
        })
      ).ok,
    ).toBe(true);
    store.__failNextCommitForTests();
    expect((await send("o", "HandoffOffer", { handoffId: "h1", targetParticipant: "t" })).error?.code).toBe("INTERNAL_ERROR");
    expect(k.lastListChange()).toBe(1);
    expect((await send("o", "HandoffOffer", { handoffId: "h2", targetParticipant: "t", scope: "pager" })).ok).toBe(true);
    const [row] = k.readListRows(0, 10);
    const summary = fromBinary(SessionSummarySchema, row!.summary);
    expect(summary.eventCount).toBe(2n); // start + the second offer; the failed one is not in it
    expect(summary.scope).toBe("pager");
    expect(row!.nextActors).toEqual(["t"]);
    await k.close();
    await store.close();
  });
});

describe("open sessions per identity", () => {
  it("a capped identity may start up to its limit of open sessions; a closed one frees a place", async () => {
    const { k } = await kernel({});
    const capped: Identity = { ...who("o"), maxOpenSessions: 2 };
    const start = (as: Identity) =>
      k.send(
        as,
        buildEnvelope({
          mode: HANDOFF_MODE,
          messageType: "SessionStart",
          sessionId: newSessionId(),
          payload: {
            participants: [as.sender, "t"],
            modeVersion: MODE_VERSION,
            configurationVersion: DEFAULT_CONFIGURATION_VERSION,
            ttlMs: 60_000n,
          },
        }),
      );
    expect((await start(capped)).ok).toBe(true);
    expect((await start(who("other"))).ok).toBe(true); // another identity's sessions do not count
    expect((await start(capped)).ok).toBe(true);
    const refused = await start(capped);
    expect(refused.ok).toBe(false);
    expect(refused.error?.code).toBe("RATE_LIMITED");
    expect(refused.error?.message).toContain("already has 2 open sessions (limit 2)");
    await resolvedSession(k); // started by "o" and resolved: it does not count
    expect((await start(capped)).ok).toBe(false);
    await k.close();
  });
});
