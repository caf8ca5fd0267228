import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { SessionListQuerySchema } from "@/lib/gen/baton/v1/console_pb";
import { DEFAULT_LIST_QUERY, hasActiveFilters, parseListQuery, serializeListQuery, toSessionListQuery } from "./list-query";

const P = (s: string) => new URLSearchParams(s);

describe("parseListQuery / serializeListQuery", () => {
  it("defaults when empty", () => {
    expect(parseListQuery(P(""))).toEqual(DEFAULT_LIST_QUERY);
    expect(serializeListQuery(DEFAULT_LIST_QUERY)).toBe("");
  });

  it("round-trips valid values", () => {
    const q = parseListQuery(P("mode=task&state=open&phase=InProgress&participant=bob&q=keys&sort=ttl&dir=desc"));
    expect(q).toEqual({ mode: "task", state: "open", phase: "InProgress", participant: "bob", q: "keys", sort: "ttl", dir: "desc" });
    expect(parseListQuery(P(serializeListQuery(q).slice(1)))).toEqual(q);
  });

  it("rejects unknown values", () => {
    const q = parseListQuery(P("mode=quorum&state=weird&phase=__proto__&sort=evil&dir=sideways"));
    expect(q).toEqual(DEFAULT_LIST_QUERY);
    expect(parseListQuery(P("phase=constructor")).phase).toBeUndefined();
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
    });
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
    for (const qs of ["", "q=abc", "mode=task&state=open", "participant=dora&sort=owner&dir=desc", "phase=OfferPending&sort=activity&dir=asc"]) {
      const q = parseListQuery(P(qs));
      const again = parseListQuery(P(serializeListQuery(q).replace(/^\?/, "")));
      expect(toSessionListQuery(again)).toEqual(toSessionListQuery(q));
    }
  });
});
