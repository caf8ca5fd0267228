import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ListSessionPageResponseSchema } from "@/lib/gen/baton/v1/console_pb";
import { countLine, firstViewWindow, type ListFirstView } from "@/features/sessions-list/list-first-view";
import { DEFAULT_LIST_QUERY } from "@/lib/views/list-query";
import { listQueryKey, PAGE_SIZE } from "@/features/sessions-list/session-window";
import { summary } from "@/lib/views/test/fixtures";

const KEY = listQueryKey(DEFAULT_LIST_QUERY);

function firstView(rows: number, total: number): ListFirstView {
  const page = create(ListSessionPageResponseSchema, {
    sessions: Array.from({ length: rows }, (_, i) => summary(`s-${String(i).padStart(22, "0")}`)),
    total: BigInt(total),
    version: 42n,
    status: { backfilling: false },
  });
  return { key: KEY, page, allCount: total + 3, openCount: 7 };
}

describe("firstViewWindow", () => {
  it("shows the server's first page for its own query, with the counts it read", () => {
    const w = firstViewWindow(firstView(PAGE_SIZE, 250), KEY);
    expect(w.head).toEqual({ version: 42n, total: 250, status: expect.objectContaining({ backfilling: false }) });
    expect(w.stale).toBe(false);
    expect(w.rowAt(0)?.metadata?.sessionId).toBe(`s-${"0".repeat(22)}`);
    expect(w.rowAt(PAGE_SIZE - 1)).toBeDefined();
    // Rows beyond the first page are not loaded yet: placeholders.
    expect(w.rowAt(PAGE_SIZE)).toBeUndefined();
    expect(w.pageStatus(PAGE_SIZE)).toBe("loading");
    expect(w.pageStatus(3)).toBe("ready");
    expect([w.allCount, w.openCount]).toEqual([253, 7]);
    expect(w.firstError).toBeUndefined();
  });

  it("marks the rows stale when the URL's query is no longer the one they were read for", () => {
    const w = firstViewWindow(firstView(5, 5), listQueryKey({ ...DEFAULT_LIST_QUERY, q: "db" }));
    expect(w.stale).toBe(true);
    expect(w.rowAt(4)).toBeDefined();
  });

  it("has nothing loaded without a first view", () => {
    const w = firstViewWindow(undefined, KEY);
    expect(w.head).toBeUndefined();
    expect(w.stale).toBe(false);
    expect(w.rowAt(0)).toBeUndefined();
    expect(w.allCount).toBeUndefined();
  });
});

describe("countLine", () => {
  it("says how many sessions there are, of how many when filtered, and how many are open", () => {
    const w = firstViewWindow(firstView(PAGE_SIZE, 1250), KEY);
    expect(countLine(w, false)).toBe("1,250 sessions · 7 open");
    expect(countLine(w, true)).toBe("1,250 of 1,253 sessions · 7 open");
    // The whole-catalog count may lag (read at most every 2 s): never fewer than match.
    expect(countLine({ ...w, allCount: 10 }, true)).toBe("1,250 of 1,250 sessions · 7 open");
    expect(countLine({ ...w, allCount: undefined, openCount: undefined }, true)).toBe("1,250 matching sessions");
  });

  it("says what is loading, searching or not loaded instead of a count", () => {
    expect(countLine(firstViewWindow(undefined, KEY), false)).toBe("Loading…");
    expect(countLine({ ...firstViewWindow(undefined, KEY), firstError: { refused: false, reason: "offline" } }, false)).toBe("Not loaded");
    expect(countLine(firstViewWindow(firstView(5, 5), listQueryKey({ ...DEFAULT_LIST_QUERY, q: "db" })), true)).toBe("Searching…");
  });
});
