import { create } from "@bufbuild/protobuf";
import { type QueryClient, QueryObserver } from "@tanstack/react-query";
import { describe, expect, it } from "vitest";
import { ListSessionPageResponseSchema, type ListSessionPageResponse, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { makeQueryClient } from "@/lib/client/query-provider";
import { parseListQuery } from "@/lib/views/list-query";
import {
  applyNotice,
  evictPages,
  fetchPage,
  loadedPages,
  RequiredVersions,
  type PageFetcher,
} from "@/features/sessions-list/session-pages";
import { listQueryKey, PAGE_SIZE, pageQueryKey } from "@/features/sessions-list/session-window";
import { summary } from "@/lib/views/test/fixtures";

/** A catalog in memory (sorted by id): the rows, a version, and every read it served. */
class Catalog {
  rows: SessionSummary[];
  version = 1n;
  reads: number[] = [];
  /** Bumped between the read and the answer, to model a change landing mid-read. */
  onRead: (() => void) | undefined;
  constructor(n: number) {
    this.rows = Array.from({ length: n }, (_, i) => summary(`s${String(i).padStart(5, "0")}`, { activity: i }));
  }
  change(ids: string[]): void {
    this.version += 1n;
    for (const id of ids) {
      const i = this.rows.findIndex((r) => r.metadata?.sessionId === id);
      if (i >= 0) this.rows[i] = summary(id, { phase: "Accepted", eventCount: 9 });
    }
  }
  fetcher: PageFetcher = async ({ offset, limit }) => {
    this.reads.push(offset / PAGE_SIZE);
    const res: ListSessionPageResponse = create(ListSessionPageResponseSchema, {
      sessions: this.rows.slice(offset, offset + limit),
      offset,
      total: BigInt(this.rows.length),
      version: this.version,
    });
    const hook = this.onRead;
    this.onRead = undefined;
    hook?.();
    await Promise.resolve();
    return res;
  };
}

const query = parseListQuery(new URLSearchParams("sort=intent"));
const listKey = listQueryKey(query);

function observe(qc: QueryClient, cat: Catalog, required: RequiredVersions, page: number): QueryObserver<ListSessionPageResponse> {
  const o = new QueryObserver<ListSessionPageResponse>(qc, {
    queryKey: pageQueryKey(listKey, page),
    queryFn: ({ signal }) => fetchPage(cat.fetcher, query, listKey, page, signal, required),
  });
  o.subscribe(() => undefined);
  return o;
}

async function settled(qc: QueryClient): Promise<void> {
  for (let i = 0; i < 50 && qc.isFetching() > 0; i += 1) await new Promise((r) => setTimeout(r, 1));
}

describe("session pages in the query cache", () => {
  it("refetches the page on screen that a notice touches, and marks the one off screen for later", async () => {
    const qc: QueryClient = makeQueryClient();
    const cat = new Catalog(1_000);
    const required = new RequiredVersions();
    const onScreen = observe(qc, cat, required, 0);
    const offScreen = observe(qc, cat, required, 5);
    await settled(qc);
    offScreen.destroy();
    expect(
      loadedPages(qc, listKey)
        .map((p) => p.page)
        .sort(),
    ).toEqual([0, 5]);
    cat.reads = [];

    cat.change(["s00003", "s00502"]);
    const affected = applyNotice(
      qc,
      listKey,
      query,
      { version: cat.version, total: 1_000n, sessionIds: ["s00003", "s00502"], overflow: false },
      required,
    );
    expect(affected).toEqual([0, 5]);
    await settled(qc);
    // Only the page on screen was read again.
    expect(cat.reads).toEqual([0]);
    expect(onScreen.getCurrentResult().data?.sessions[3]?.phase).toBe("Accepted");
    // The page off screen is read again when it comes back.
    const back = observe(qc, cat, required, 5);
    await settled(qc);
    expect(cat.reads).toEqual([0, 5]);
    expect(back.getCurrentResult().data?.sessions[2]?.phase).toBe("Accepted");
    expect(required.size).toBe(0);
    onScreen.destroy();
    back.destroy();
  });

  it("does not touch pages a notice cannot affect", async () => {
    const qc = makeQueryClient();
    const cat = new Catalog(1_000);
    const required = new RequiredVersions();
    const o = observe(qc, cat, required, 2);
    await settled(qc);
    cat.reads = [];
    cat.change(["s00900"]);
    expect(
      applyNotice(qc, listKey, query, { version: cat.version, total: 1_000n, sessionIds: ["s00900"], overflow: false }, required),
    ).toEqual([]);
    await settled(qc);
    expect(cat.reads).toEqual([]);
    o.destroy();
  });

  it("reads a page again when a notice newer than the read arrived while it was in flight", async () => {
    const qc = makeQueryClient();
    const cat = new Catalog(300);
    const required = new RequiredVersions();
    const o = observe(qc, cat, required, 1);
    await settled(qc);
    cat.reads = [];
    // Notice 1 makes page 1 refetch; while that read is in flight, notice 2 lands.
    cat.change(["s00150"]);
    cat.onRead = () => {
      cat.change(["s00151"]);
      applyNotice(qc, listKey, query, { version: cat.version, total: 300n, sessionIds: ["s00151"], overflow: false }, required);
    };
    applyNotice(qc, listKey, query, { version: cat.version, total: 300n, sessionIds: ["s00150"], overflow: false }, required);
    await settled(qc);
    expect(cat.reads).toEqual([1, 1]);
    const data = o.getCurrentResult().data;
    expect(data?.version).toBe(cat.version);
    expect(data?.sessions[51]?.phase).toBe("Accepted");
    o.destroy();
  });

  it("keeps at most the bound of pages cached, never dropping one on screen", async () => {
    const qc = makeQueryClient();
    const cat = new Catalog(20_000);
    const required = new RequiredVersions();
    let peak = 0;
    let current: QueryObserver<ListSessionPageResponse> | undefined;
    for (let page = 0; page < 200; page += 1) {
      const next = observe(qc, cat, required, page);
      current?.destroy();
      current = next;
      await settled(qc);
      evictPages(qc, 8);
      const cached = qc.getQueryCache().findAll({ queryKey: ["baton", "session-page"] }).length;
      peak = Math.max(peak, cached);
      expect(qc.getQueryData(pageQueryKey(listKey, page))).toBeDefined();
    }
    expect(peak).toBeLessThanOrEqual(9);
    expect(qc.getQueryCache().findAll({ queryKey: ["baton", "session-page"] }).length).toBeLessThanOrEqual(8);
    current?.destroy();
  });
});
