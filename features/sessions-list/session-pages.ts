// The session list's pages in the TanStack Query cache: fetching a page
// (ListSessionPage), applying a change notice (WatchSessionChanges) to the
// pages that are loaded, and bounding how many pages stay cached. No React
// here; features/sessions-list/use-session-window.ts wires it to the screen.
//
// A page is one query (key: the list's query and the page index). It is
// never stale by time: only a change notice that can affect it marks it so.
// Marked pages on screen are refetched at once; marked pages off screen are
// refetched if they come back on screen. A page fetched while a newer notice
// already affected it (the fetch was in flight) is read again, so a page never
// settles on a version older than a notice that touched it.

import type { QueryClient } from "@tanstack/react-query";
import type { ListSessionPageResponse } from "@/lib/gen/baton/v1/console_pb";
import type { ListQuery } from "@/lib/views/list-query";
import { toSessionListQuery } from "@/lib/views/list-query";
import {
  MAX_CACHED_PAGES,
  PAGE_KEY_ROOT,
  PAGE_SIZE,
  pageQueryKey,
  pagesAffected,
  pagesToEvict,
  type ChangeNotice,
  type LoadedPage,
} from "@/features/sessions-list/session-window";

/** ListSessionPage as the pages need it (the console client's method). */
export type PageFetcher = (
  request: { query: ReturnType<typeof toSessionListQuery>; offset: number; limit: number },
  options: { signal: AbortSignal },
) => Promise<ListSessionPageResponse>;

/** Versions that pages must have reached, set by notices that affected them. */
export class RequiredVersions {
  private readonly map = new Map<string, bigint>();
  private static key(listKey: string, page: number): string {
    return `${page}\u0000${listKey}`;
  }
  require(listKey: string, page: number, version: bigint): void {
    const k = RequiredVersions.key(listKey, page);
    const cur = this.map.get(k);
    if (cur === undefined || version > cur) this.map.set(k, version);
  }
  get(listKey: string, page: number): bigint | undefined {
    return this.map.get(RequiredVersions.key(listKey, page));
  }
  /** The page was read at `version`: forget the requirement if met. */
  settle(listKey: string, page: number, version: bigint): void {
    const k = RequiredVersions.key(listKey, page);
    const cur = this.map.get(k);
    if (cur !== undefined && version >= cur) this.map.delete(k);
  }
  /** Keep only requirements of `listKey` (the list on screen). */
  retain(listKey: string): void {
    for (const k of this.map.keys()) if (!k.endsWith(`\u0000${listKey}`)) this.map.delete(k);
  }
  get size(): number {
    return this.map.size;
  }
}

/** How many times a page is re-read to catch up with a notice before it is shown as is. */
const CATCH_UP_READS = 3;

/** Read one page; read it again if a notice that affected it is newer than what came back. */
export async function fetchPage(
  fetcher: PageFetcher,
  query: ListQuery,
  listKey: string,
  page: number,
  signal: AbortSignal,
  required: RequiredVersions,
): Promise<ListSessionPageResponse> {
  let res: ListSessionPageResponse | undefined;
  for (let i = 0; i < CATCH_UP_READS; i += 1) {
    res = await fetcher({ query: toSessionListQuery(query), offset: page * PAGE_SIZE, limit: PAGE_SIZE }, { signal });
    const need = required.get(listKey, page);
    if (need === undefined || res.version >= need) break;
  }
  const out = res as ListSessionPageResponse;
  required.settle(listKey, page, out.version);
  return out;
}

/** Pages of `listKey` that hold data, as read. */
export function loadedPages(qc: QueryClient, listKey: string): LoadedPage[] {
  const out: LoadedPage[] = [];
  for (const q of qc.getQueryCache().findAll({ queryKey: [...PAGE_KEY_ROOT, listKey] })) {
    const data = q.state.data as ListSessionPageResponse | undefined;
    const page = q.queryKey[3];
    if (!data || typeof page !== "number") continue;
    out.push({ page, ids: data.sessions.map((s) => s.metadata?.sessionId ?? ""), version: data.version, total: data.total });
  }
  return out;
}

/**
 * Apply a change notice: the loaded pages it can affect are marked stale
 * (refetched now if on screen) and must reach its version. Returns them.
 */
export function applyNotice(
  qc: QueryClient,
  listKey: string,
  query: ListQuery,
  notice: ChangeNotice,
  required: RequiredVersions,
  initial = false,
): number[] {
  const affected = pagesAffected(notice, loadedPages(qc, listKey), query, initial);
  for (const page of affected) {
    required.require(listKey, page, notice.version);
    // An in-flight read of the page is not cancelled (it would starve under a
    // stream of notices); fetchPage reads again if it comes back too old.
    void qc.invalidateQueries({ queryKey: pageQueryKey(listKey, page), exact: true, refetchType: "active" }, { cancelRefetch: false });
  }
  return affected;
}

/** Drop the oldest pages nobody reads beyond `max` (all lists together). Returns how many were dropped. */
export function evictPages(qc: QueryClient, max = MAX_CACHED_PAGES): number {
  const cache = qc.getQueryCache();
  const all = cache.findAll({ queryKey: [...PAGE_KEY_ROOT] });
  const evict = new Set(
    pagesToEvict(
      all.map((q) => ({ id: q.queryHash, active: q.getObserversCount() > 0, updatedAt: q.state.dataUpdatedAt })),
      max,
    ),
  );
  for (const q of all) if (evict.has(q.queryHash)) cache.remove(q);
  return evict.size;
}
