// The catalog's "waiting on" filter (sqlite.ts, sqlite-where.ts): who must act, by participant id.
import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SessionListQuerySchema, SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { parseListQuery } from "./query";
import { catalog, closeAfterEach, ids, q, reference, rng, summary, write } from "./sqlite-test-kit";

closeAfterEach();

describe("SqliteCatalog waiting on", () => {
  it("lists only the sessions whose next move is the participant's, with who must act filled in", () => {
    const c = catalog();
    const r = rng(7);
    const rows = Array.from({ length: 40 }, (_, i) => summary(i, r));
    // Every fifth session waits on its target, every seventh on two people.
    const actorsOf = (s: SessionSummary, i: number): string[] =>
      i % 7 === 0 ? ["human:zoe", "human:walt"] : i % 5 === 0 && s.currentTarget ? [s.currentTarget] : [];
    c.write(rows.map((s, i) => write(s, { nextActors: actorsOf(s, i) })));
    const expected = rows
      .map((s, i) => create(SessionSummarySchema, { ...s, waitingOn: actorsOf(s, i) }))
      .filter((s) => s.waitingOn.includes("human:zoe"));
    const page = c.page(q({ waitingOn: "human:zoe" }), 0, 100);
    expect(ids(page.rows)).toEqual(ids(reference(expected, q({ waitingOn: "human:zoe" }))));
    expect(page.total).toBe(expected.length);
    for (const row of page.rows) expect(row.waitingOn).toContain("human:zoe");
    // A prefix of an id is not the id.
    expect(c.page(q({ waitingOn: "human:zo" }), 0, 100).total).toBe(0);
    // Without the filter, rows still say who must act.
    const all = c.page(q(), 0, 100).rows;
    expect(all.filter((s) => s.waitingOn.length > 0).length).toBe(rows.filter((s, i) => actorsOf(s, i).length > 0).length);
  });

  it("refuses a waiting_on that is not a participant id", () => {
    expect(() => parseListQuery(create(SessionListQuerySchema, { waitingOn: "two words" }))).toThrow(ConnectError);
    expect(parseListQuery(create(SessionListQuerySchema, { waitingOn: " human:zoe " })).waitingOn).toBe("human:zoe");
  });
});
