import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { InboxItemKind } from "@/lib/gen/baton/v1/actions_pb";
import { SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { SqliteCatalog } from "./catalog/sqlite";
import { closedNewsFor, NEWS_MAX, NEWS_WINDOW_MS, newsFor, RECENT_CLOSED_REFRESH_MS, RecentClosed } from "./inbox-news";

const NOW = 1_800_000_000_000;
const names: Record<string, string> = { "human:alice": "Alice Ng", "human:bob": "Bob Ito" };
const nameOf = (id: string) => names[id] ?? id;
const alice = { role: "operator" as const, participantId: "human:alice" };

function row(
  id: string,
  init: { state: SessionState; at: number; initiator?: string; mode?: string; outcome?: string; owner?: string },
): SessionSummary {
  return create(SessionSummarySchema, {
    metadata: create(SessionMetadataSchema, {
      sessionId: id,
      mode: init.mode ?? HANDOFF_MODE,
      state: init.state,
      initiator: init.initiator ?? "human:alice",
      participants: ["human:alice", "human:bob"],
      startedAtUnixMs: BigInt(init.at - 60_000),
    }),
    intent: "weekly rotation",
    scope: "payments on-call",
    currentOwner: init.owner ?? "",
    outcome: init.outcome ?? "",
    lastActivityUnixMs: BigInt(init.at),
    phase: init.state === SessionState.OPEN ? "OfferPending" : "Committed",
  });
}

describe("closedNewsFor", () => {
  it("tells the one who started the session how it ended, in words", () => {
    const say = (r: SessionSummary) => closedNewsFor(alice, r, nameOf)?.summary;
    expect(say(row("s1", { state: SessionState.RESOLVED, at: NOW, outcome: "positive", owner: "human:bob" }))).toBe(
      "Bob Ito now holds payments on-call: the handoff is committed.",
    );
    expect(say(row("s2", { state: SessionState.RESOLVED, at: NOW, outcome: "negative", owner: "human:alice" }))).toBe(
      "payments on-call stays with you: the handoff was committed without a change of owner.",
    );
    expect(say(row("s3", { state: SessionState.EXPIRED, at: NOW }))).toBe("payments on-call expired before anyone committed it.");
    expect(say(row("s4", { state: SessionState.CANCELLED, at: NOW }))).toBe("payments on-call was cancelled.");
    expect(say(row("s5", { state: SessionState.RESOLVED, at: NOW, mode: TASK_MODE, outcome: "negative" }))).toBe(
      '"payments on-call" was committed as not done.',
    );
    const item = closedNewsFor(
      alice,
      row("s1", { state: SessionState.RESOLVED, at: NOW, outcome: "positive", owner: "human:bob" }),
      nameOf,
    );
    expect(item).toMatchObject({
      kind: InboxItemKind.CLOSED,
      sessionId: "s1",
      subjectId: "s1",
      fromParticipant: "human:bob",
      sinceUnixMs: BigInt(NOW),
    });
  });

  it("is nothing for open sessions and for sessions someone else started", () => {
    expect(closedNewsFor(alice, row("s1", { state: SessionState.OPEN, at: NOW }), nameOf)).toBeUndefined();
    expect(closedNewsFor(alice, row("s2", { state: SessionState.EXPIRED, at: NOW, initiator: "human:bob" }), nameOf)).toBeUndefined();
  });
});

describe("newsFor", () => {
  it("keeps the last day only, newest first, at most NEWS_MAX", () => {
    const rows = Array.from({ length: NEWS_MAX + 5 }, (_, i) => row(`s${i}`, { state: SessionState.CANCELLED, at: NOW - i * 60_000 }));
    rows.push(row("old", { state: SessionState.CANCELLED, at: NOW - NEWS_WINDOW_MS - 1 }));
    const news = newsFor(alice, [], rows, nameOf, NOW);
    expect(news.map((n) => n.sessionId)).toEqual(Array.from({ length: NEWS_MAX }, (_, i) => `s${i}`));
  });
});

describe("RecentClosed", () => {
  const catalogs: SqliteCatalog[] = [];
  afterEach(() => {
    for (const c of catalogs.splice(0)) c.close();
  });
  const write = (c: SqliteCatalog, rows: SessionSummary[]) =>
    c.write(
      rows.map((summary) => ({
        summary,
        folded: 1,
        final: summary.metadata?.state !== SessionState.OPEN,
        needsRead: false,
        nextActors: [],
      })),
    );

  it("reads the closed sessions of the last day from the catalog, newest first, again only when it changed and not more than once a second", () => {
    const c = new SqliteCatalog({ path: ":memory:" });
    catalogs.push(c);
    let now = NOW;
    write(c, [
      row("open", { state: SessionState.OPEN, at: NOW - 1_000 }),
      row("done", { state: SessionState.RESOLVED, at: NOW - 2_000, outcome: "positive" }),
      row("gone", { state: SessionState.EXPIRED, at: NOW - 3_000 }),
      row("last-week", { state: SessionState.CANCELLED, at: NOW - 7 * NEWS_WINDOW_MS }),
    ]);
    const recent = new RecentClosed(c, () => now);
    expect(recent.read()).toEqual({ rows: expect.any(Array), staleForMs: 0 });
    expect(recent.read().rows.map((r) => r.metadata?.sessionId)).toEqual(["done", "gone"]);

    // A change right after a read waits for the next allowed read, and says how long.
    now += 100;
    write(c, [row("now-cancelled", { state: SessionState.CANCELLED, at: now })]);
    const throttled = recent.read();
    expect(throttled.rows.map((r) => r.metadata?.sessionId)).toEqual(["done", "gone"]);
    expect(throttled.staleForMs).toBe(RECENT_CLOSED_REFRESH_MS - 100);
    now += RECENT_CLOSED_REFRESH_MS;
    expect(recent.read()).toMatchObject({ staleForMs: 0 });
    expect(recent.read().rows.map((r) => r.metadata?.sessionId)).toEqual(["now-cancelled", "done", "gone"]);
  });
});
