import { describe, expect, it } from "vitest";
import { DEFAULT_LIST_QUERY, parseListQuery, type ListQuery } from "@/lib/views/list-query";
import {
  backfillLine,
  listQueryKey,
  newerHead,
  PAGE_SIZE,
  pageQueryKey,
  pagesAffected,
  pagesForRange,
  pagesToEvict,
  rowsCanMove,
  type LoadedPage,
} from "@/features/sessions-list/session-window";

const P = (s: string): ListQuery => parseListQuery(new URLSearchParams(s));

describe("pagesForRange", () => {
  it("asks for the first page while the total is unknown", () => {
    expect(pagesForRange(0, 20, undefined)).toEqual([0]);
  });

  it("reads page 0 of an empty list (that read says it is empty)", () => {
    expect(pagesForRange(0, 20, 0)).toEqual([0]); // an empty result is still read, so the wanted pages settle
  });

  it("covers what is on screen plus the margin, within the list", () => {
    expect(pagesForRange(0, 20, 20_000, 40)).toEqual([0]);
    // Rows 90..110 straddle pages 0 and 1.
    expect(pagesForRange(90, 110, 20_000, 0)).toEqual([0, 1]);
    // The margin reaches into the neighbours.
    expect(pagesForRange(105, 125, 20_000, 40)).toEqual([0, 1]);
    expect(pagesForRange(150, 170, 20_000, 40)).toEqual([1, 2]);
    // At the end of 20,000 rows: the last page only, never one past it.
    expect(pagesForRange(19_980, 19_999, 20_000, 40)).toEqual([199]);
    expect(pagesForRange(19_980, 20_050, 20_000, 40)).toEqual([199]);
  });

  it("is bounded by the viewport, not by the list", () => {
    for (const total of [150, 20_000, 1_000_000]) {
      const pages = pagesForRange(total / 2, total / 2 + 30, total);
      expect(pages.length).toBeLessThanOrEqual(2);
      for (const p of pages) expect(p * PAGE_SIZE).toBeLessThan(total);
    }
  });

  it("clamps a range past the end of a list that shrank", () => {
    expect(pagesForRange(900, 950, 120, 0)).toEqual([1]);
  });
});

describe("query keys", () => {
  it("name the query and the page, and nothing else", () => {
    const k = listQueryKey(P("q=abc&mode=task"));
    expect(pageQueryKey(k, 3)).toEqual(["baton", "session-page", k, 3]);
  });

  it("are equal for equal queries however the URL spelled them", () => {
    expect(listQueryKey(P("mode=task&q=abc"))).toBe(listQueryKey(P("q=abc&mode=task")));
    expect(listQueryKey(P("sort=activity&dir=desc"))).toBe(listQueryKey(DEFAULT_LIST_QUERY));
  });

  it("differ for any difference in filters, sort or direction", () => {
    const keys = [
      "",
      "q=a",
      "q=b",
      "mode=task",
      "state=open",
      "phase=Committed",
      "participant=bob",
      "sort=intent",
      "sort=intent&dir=desc",
      "dir=asc",
    ].map((s) => listQueryKey(P(s)));
    expect(new Set(keys).size).toBe(keys.length);
  });
});

const page = (n: number, ids: string[], version: bigint, total: bigint): LoadedPage => ({ page: n, ids, version, total });

describe("pagesAffected", () => {
  const byIntent = P("sort=intent");
  const loaded = [page(0, ["a", "b"], 10n, 500n), page(3, ["x", "y"], 10n, 500n), page(7, ["p", "q"], 12n, 500n)];

  it("refetches only the page that holds a changed row when rows cannot move", () => {
    expect(rowsCanMove(byIntent)).toBe(false);
    expect(pagesAffected({ version: 11n, total: 500n, sessionIds: ["y"], overflow: false }, loaded, byIntent)).toEqual([3]);
    expect(pagesAffected({ version: 11n, total: 500n, sessionIds: ["elsewhere"], overflow: false }, loaded, byIntent)).toEqual([]);
  });

  it("skips pages read at or after the notice's version", () => {
    expect(pagesAffected({ version: 12n, total: 500n, sessionIds: ["q"], overflow: false }, loaded, byIntent)).toEqual([]);
    expect(pagesAffected({ version: 13n, total: 500n, sessionIds: ["q"], overflow: false }, loaded, byIntent)).toEqual([7]);
  });

  it("refetches every older page when the total changed (rows before them came or went)", () => {
    expect(pagesAffected({ version: 11n, total: 501n, sessionIds: ["new"], overflow: false }, loaded, byIntent)).toEqual([0, 3]);
  });

  it("refetches every older page on overflow", () => {
    expect(pagesAffected({ version: 11n, total: 500n, sessionIds: [], overflow: true }, loaded, byIntent)).toEqual([0, 3]);
  });

  it("refetches every older page when any row can move: sort by activity, or a filter on what changes", () => {
    for (const q of [
      DEFAULT_LIST_QUERY,
      P("sort=phase"),
      P("sort=intent&state=open"),
      P("sort=intent&q=pager"),
      P("sort=intent&participant=bob"),
    ]) {
      expect(rowsCanMove(q)).toBe(true);
      expect(pagesAffected({ version: 11n, total: 500n, sessionIds: ["elsewhere"], overflow: false }, loaded, q)).toEqual([0, 3]);
    }
    // Mode never changes: a mode filter alone does not make rows move.
    expect(rowsCanMove(P("sort=started&mode=task"))).toBe(false);
  });

  it("ignores notices that change nothing visible (status only)", () => {
    expect(pagesAffected({ version: 11n, total: 500n, sessionIds: [], overflow: false }, loaded, DEFAULT_LIST_QUERY)).toEqual([]);
  });

  it("treats the first notice of a stream as 'anything may have changed' for older pages", () => {
    expect(pagesAffected({ version: 11n, total: 500n, sessionIds: [], overflow: false }, loaded, byIntent, true)).toEqual([0, 3]);
    expect(pagesAffected({ version: 10n, total: 500n, sessionIds: [], overflow: false }, loaded, byIntent, true)).toEqual([]);
  });
});

describe("pagesToEvict", () => {
  it("keeps everything under the bound", () => {
    expect(pagesToEvict([{ id: "a", active: false, updatedAt: 1 }], 3)).toEqual([]);
  });

  it("drops the oldest inactive pages first and never an active one", () => {
    const entries = [
      { id: "p0", active: true, updatedAt: 1 },
      { id: "p1", active: false, updatedAt: 5 },
      { id: "p2", active: false, updatedAt: 2 },
      { id: "p3", active: true, updatedAt: 3 },
      { id: "p4", active: false, updatedAt: 9 },
    ];
    expect(pagesToEvict(entries, 3)).toEqual(["p2", "p1"]);
    expect(pagesToEvict(entries, 1)).toEqual(["p2", "p1", "p4"]);
  });

  it("keeps memory bounded while scrolling through 20,000 rows", () => {
    let cache: { id: string; active: boolean; updatedAt: number }[] = [];
    let peak = 0;
    for (let first = 0; first < 20_000; first += 25) {
      const wanted = new Set(pagesForRange(first, first + 20, 20_000).map(String));
      for (const id of wanted) if (!cache.some((e) => e.id === id)) cache.push({ id, active: true, updatedAt: first });
      cache = cache.map((e) => ({ ...e, active: wanted.has(e.id) }));
      const evict = new Set(pagesToEvict(cache));
      cache = cache.filter((e) => !evict.has(e.id));
      peak = Math.max(peak, cache.length);
    }
    expect(peak).toBeLessThanOrEqual(8);
  });
});

describe("newerHead", () => {
  it("keeps the reading with the higher version", () => {
    const a = { version: 5n, total: 10, status: "a" };
    const b = { version: 7n, total: 11, status: "b" };
    expect(newerHead(undefined, a)).toBe(a);
    expect(newerHead(a, b)).toBe(b);
    expect(newerHead(b, a)).toBe(b);
    const b2 = { version: 7n, total: 12, status: "b2" };
    expect(newerHead(b, b2)).toBe(b2);
  });
});

describe("backfillLine", () => {
  it("says how far indexing has come, only while it runs", () => {
    expect(backfillLine(undefined)).toBeNull();
    expect(backfillLine({ backfilling: false, sessionsKnown: 10n, sessionsIndexed: 10n, message: "" })).toBeNull();
    expect(backfillLine({ backfilling: true, sessionsKnown: 40_000n, sessionsIndexed: 12_400n, message: "" })).toBe(
      "Indexing history: 12,400 of 40,000 sessions",
    );
    expect(backfillLine({ backfilling: true, sessionsKnown: 0n, sessionsIndexed: 0n, message: "runtime unavailable; retrying" })).toBe(
      "Indexing history: 0 sessions so far (runtime unavailable; retrying)",
    );
  });
});

describe("the stuck list", () => {
  it("has its own cache key, as Waiting on does", () => {
    expect(listQueryKey(P("stuck=1"))).not.toBe(listQueryKey(P("")));
    expect(listQueryKey(P("waiting=human:bob"))).not.toBe(listQueryKey(P("")));
    expect(rowsCanMove(P("sort=intent&stuck=1"))).toBe(true);
  });

  it("refetches pages when the clock changed how many rows match, at the same catalog version", () => {
    const stuck = P("sort=intent&stuck=1");
    const loaded = [page(0, ["a", "b"], 10n, 2n)];
    // A re-count notice: same version, another total, overflow.
    expect(pagesAffected({ version: 10n, total: 3n, sessionIds: [], overflow: true }, loaded, stuck)).toEqual([0]);
    expect(pagesAffected({ version: 10n, total: 2n, sessionIds: [], overflow: true }, loaded, stuck)).toEqual([]);
    // Any other list ignores notices it has already read.
    expect(pagesAffected({ version: 10n, total: 3n, sessionIds: [], overflow: true }, loaded, P("sort=intent"))).toEqual([]);
  });
});
