import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { SessionListQuerySchema } from "@/lib/gen/baton/v1/console_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { TASK_MODE } from "@/lib/macp/constants";
import {
  applyListQuery,
  DEFAULT_LIST_QUERY,
  hasActiveFilters,
  offersWaitingOnMe,
  parseListQuery,
  serializeListQuery,
  toSessionListQuery,
} from "@/lib/views/list-query";
import { summary } from "@/lib/views/test/fixtures";

const P = (s: string) => new URLSearchParams(s);

describe("parseListQuery / serializeListQuery", () => {
  it("defaults when empty", () => {
    expect(parseListQuery(P(""))).toEqual(DEFAULT_LIST_QUERY);
    expect(serializeListQuery(DEFAULT_LIST_QUERY)).toBe("");
  });

  it("round-trips valid values", () => {
    const q = parseListQuery(P("mode=task&state=open&phase=InProgress&participant=bob&q=keys&sort=ttl&dir=desc&waiting=human:zoe&stuck=1"));
    expect(q).toEqual({
      mode: "task",
      state: "open",
      phase: "InProgress",
      participant: "bob",
      q: "keys",
      sort: "ttl",
      dir: "desc",
      waiting: "human:zoe",
      stuck: true,
    });
    expect(parseListQuery(P(serializeListQuery(q).slice(1)))).toEqual(q);
  });

  it("rejects unknown values", () => {
    const q = parseListQuery(P("mode=quorum&state=weird&phase=__proto__&sort=evil&dir=sideways"));
    expect(q).toEqual(DEFAULT_LIST_QUERY);
    expect(parseListQuery(P("phase=constructor")).phase).toBeUndefined();
    expect(parseListQuery(P("mode=__proto__")).mode).toBeUndefined();
  });

  it("takes v0.1 file handoffs as a mode (?mode=file), sent to the catalog as such", () => {
    const q = parseListQuery(P("mode=file&q=3f2a"));
    expect(q.mode).toBe("file");
    expect(serializeListQuery(q)).toBe("?mode=file&q=3f2a");
    expect(toSessionListQuery(q).mode).toBe("file");
  });

  it("cleans free text", () => {
    const q = parseListQuery(P(`q=${encodeURIComponent("  a\u0000b  ")}&participant=${"x".repeat(500)}`));
    expect(q.q).toBe("ab");
    expect(q.participant).toHaveLength(200);
  });

  it("omits the default direction for the chosen sort", () => {
    expect(serializeListQuery({ ...DEFAULT_LIST_QUERY, sort: "intent", dir: "asc" })).toBe("?sort=intent");
    expect(serializeListQuery({ ...DEFAULT_LIST_QUERY, sort: "intent", dir: "desc" })).toBe("?sort=intent&dir=desc");
    expect(parseListQuery(P("sort=intent")).dir).toBe("asc");
  });

  it("knows when filters are active", () => {
    expect(hasActiveFilters(DEFAULT_LIST_QUERY)).toBe(false);
    expect(hasActiveFilters({ ...DEFAULT_LIST_QUERY, q: "x" })).toBe(true);
    expect(hasActiveFilters({ ...DEFAULT_LIST_QUERY, stuck: true })).toBe(true);
  });

  it("reads ?stuck=1 and nothing else as the stuck filter, and writes it back as 1", () => {
    expect(parseListQuery(P("stuck=1")).stuck).toBe(true);
    for (const other of ["stuck=0", "stuck=true", "stuck=yes", "stuck=", "stuck=11", "stuck= 1", "x=1"])
      expect(parseListQuery(P(other)).stuck, other).toBe(false);
    expect(serializeListQuery({ ...DEFAULT_LIST_QUERY, stuck: true })).toBe("?stuck=1");
    expect(serializeListQuery({ ...DEFAULT_LIST_QUERY, stuck: true, waiting: "human:bob" })).toBe("?waiting=human%3Abob&stuck=1");
    expect(toSessionListQuery(parseListQuery(P("stuck=1"))).stuck).toBe(true);
    expect(create(SessionListQuerySchema, toSessionListQuery(parseListQuery(P("stuck=1")))).stuck).toBe(true);
  });

  it("offers Waiting on me to people who can be asked to act, never to a viewer", () => {
    expect(offersWaitingOnMe({ role: "viewer", participantId: "human:wendy" })).toBe(false);
    for (const role of ["operator", "approver", "admin"] as const)
      expect(offersWaitingOnMe({ role, participantId: "human:bob" }), role).toBe(true);
    expect(offersWaitingOnMe({ role: "operator", participantId: "" })).toBe(false);
    expect(offersWaitingOnMe(null)).toBe(false);
    expect(offersWaitingOnMe(undefined)).toBe(false);
  });
});

describe("toSessionListQuery", () => {
  it("maps the URL's query to the catalog's, field by field", () => {
    expect(toSessionListQuery(DEFAULT_LIST_QUERY)).toEqual({
      mode: "",
      state: "",
      phase: "",
      participant: "",
      text: "",
      sort: "activity",
      ascending: false,
      waitingOn: "",
      stuck: false,
    });
    const q = parseListQuery(P("mode=handoff&state=resolved&phase=Committed&participant=bob&q=pager%20rotation&sort=intent"));
    expect(toSessionListQuery(q)).toEqual({
      mode: "handoff",
      state: "resolved",
      phase: "Committed",
      participant: "bob",
      text: "pager rotation",
      sort: "intent",
      ascending: true,
      waitingOn: "",
      stuck: false,
    });
    expect(toSessionListQuery(parseListQuery(P("waiting=human:zoe"))).waitingOn).toBe("human:zoe");
    // Not a participant id (spaces): dropped.
    expect(parseListQuery(P("waiting=two%20words")).waiting).toBe("");
    expect(toSessionListQuery(parseListQuery(P("sort=started&dir=asc"))).ascending).toBe(true);
  });

  it("is a valid SessionListQuery for the generated schema", () => {
    const msg = create(SessionListQuerySchema, toSessionListQuery(parseListQuery(P("mode=task&q=x&sort=ttl"))));
    expect(msg.mode).toBe("task");
    expect(msg.text).toBe("x");
    expect(msg.sort).toBe("ttl");
    expect(msg.ascending).toBe(true);
  });

  it("survives a URL round trip unchanged", () => {
    for (const qs of [
      "",
      "q=abc",
      "mode=task&state=open",
      "participant=dora&sort=owner&dir=desc",
      "phase=OfferPending&sort=activity&dir=asc",
    ]) {
      const q = parseListQuery(P(qs));
      const again = parseListQuery(P(serializeListQuery(q).replace(/^\?/, "")));
      expect(toSessionListQuery(again)).toEqual(toSessionListQuery(q));
    }
  });
});

describe("applyListQuery (the reference the catalog is tested against)", () => {
  const rows = [
    summary("a", { intent: "Pager handoff", activity: 3, phase: "OfferPending", participants: ["alice", "bob"] }),
    summary("b", {
      intent: "Rotate keys",
      mode: TASK_MODE,
      phase: "InProgress",
      activity: 5,
      owner: "dora",
      target: "erin",
      participants: ["dora", "erin"],
    }),
    summary("c", { intent: "DB migration", state: SessionState.RESOLVED, phase: "Committed", activity: 1, startedAt: 9 }),
  ];

  it("sorts by last activity, newest first, by default", () => {
    expect(applyListQuery(rows, DEFAULT_LIST_QUERY).map((r) => r.metadata?.sessionId)).toEqual(["b", "a", "c"]);
  });

  it("filters by mode, state, phase, participant and text", () => {
    const ids = (qs: string) => applyListQuery(rows, parseListQuery(P(qs))).map((r) => r.metadata?.sessionId);
    expect(ids("mode=task")).toEqual(["b"]);
    expect(ids("state=resolved")).toEqual(["c"]);
    expect(ids("phase=OfferPending")).toEqual(["a"]);
    expect(ids("participant=ERIN")).toEqual(["b"]);
    expect(ids("q=migration")).toEqual(["c"]);
    expect(ids("q=nothing-matches")).toEqual([]);
  });

  it("sorts by text columns ascending", () => {
    const q = parseListQuery(P("sort=intent"));
    expect(applyListQuery(rows, q).map((r) => r.intent)).toEqual(["DB migration", "Pager handoff", "Rotate keys"]);
  });

  it("sorts 10,000 rows newest activity first", () => {
    const many = Array.from({ length: 10_000 }, (_, i) => summary(`s${i}`, { activity: (i * 7919) % 10_007, intent: `intent ${i}` }));
    const out = applyListQuery(many, parseListQuery(P("q=intent")));
    expect(out).toHaveLength(10_000);
    for (let i = 1; i < out.length; i++) expect(out[i - 1]!.lastActivityUnixMs >= out[i]!.lastActivityUnixMs).toBe(true);
  });
});
