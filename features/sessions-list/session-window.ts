// The session list as windows of the server's catalog (ListSessionPage +
// WatchSessionChanges): the browser never holds the whole index. Pure
// decisions, kept apart from React so they can be tested on their own:
// - which fixed-size pages cover what is on screen (plus a margin);
// - which loaded pages a change notice can affect (and so must be refetched);
// - which cached pages to drop so memory stays bounded however far one scrolls;
// - which of two readings of the list head (total, status) is newer.

import type { ListQuery, SortKey } from "@/lib/views/list-query";
import { queryKeys } from "@/lib/client/query-keys";
import { formatCount } from "@/lib/views/format";

/** Rows per page asked of ListSessionPage (the server caps a page at 500). */
export const PAGE_SIZE = 100;
/** Pages kept in the query cache per list, on screen or not. */
export const MAX_CACHED_PAGES = 8;
/** Rows fetched ahead of and behind what is on screen. */
export const PREFETCH_ROWS = 40;

export const PAGE_KEY_ROOT = queryKeys.sessionPages;

/** Canonical text of a query: the part of the query key that says which list. */
export function listQueryKey(q: ListQuery): string {
  const p = new URLSearchParams();
  p.set("mode", q.mode ?? "");
  p.set("state", q.state ?? "");
  p.set("phase", q.phase ?? "");
  p.set("participant", q.participant);
  p.set("q", q.q);
  p.set("sort", q.sort);
  p.set("dir", q.dir);
  if (q.waiting) p.set("waiting", q.waiting);
  if (q.stuck) p.set("stuck", "1");
  return p.toString();
}

/** Query key of one page: the list's query and the page index, nothing else. */
export function pageQueryKey(listKey: string, page: number): readonly ["baton", "session-page", string, number] {
  return queryKeys.sessionPage(listKey, page);
}

/**
 * Pages (ascending) that hold rows `first`..`last` (inclusive, clamped to
 * 0..total-1) widened by `margin` rows on both sides. With `total` unknown,
 * the first page (it tells the total).
 */
export function pagesForRange(
  first: number,
  last: number,
  total: number | undefined,
  margin = PREFETCH_ROWS,
  pageSize = PAGE_SIZE,
): number[] {
  if (total === undefined) return [0];
  // An empty result is still read through page 0: that read is what says it is empty (and keeps the
  // total known, so the wanted pages do not flip between [] and [0]).
  if (total <= 0) return [0];
  const lo = Math.max(0, Math.min(total - 1, Math.floor(Math.min(first, last)) - margin));
  const hi = Math.max(0, Math.min(total - 1, Math.ceil(Math.max(first, last)) + margin));
  const out: number[] = [];
  for (let p = Math.floor(lo / pageSize); p <= Math.floor(hi / pageSize); p += 1) out.push(p);
  return out;
}

/** What a loaded page was read at. */
export interface LoadedPage {
  page: number;
  /** Session ids on the page, in order. */
  ids: readonly string[];
  /** Catalog version the page was read at. */
  version: bigint;
  /** Rows matching the query when the page was read. */
  total: bigint;
}

export interface ChangeNotice {
  version: bigint;
  total: bigint;
  sessionIds: readonly string[];
  overflow: boolean;
}

/** Sorts whose key can change after a session starts: a changed row may move. */
const MUTABLE_SORTS: ReadonlySet<SortKey> = new Set<SortKey>(["activity", "phase", "state", "owner", "target", "ttl"]);

/** Whether a change to a session can move it within, into or out of the list. */
export function rowsCanMove(q: ListQuery): boolean {
  // mode and the session id never change; state, phase, owner/target (and so
  // participant and text matches, which cover scope too) do.
  return MUTABLE_SORTS.has(q.sort) || Boolean(q.state || q.phase || q.participant || q.q || q.waiting || q.stuck);
}

/**
 * Loaded pages that a change notice can affect, ascending. Pages read at or
 * after the notice's version already show it. Otherwise a page is affected
 * when the notice overflowed, when the number of matching rows changed since
 * the page was read (rows before it may have come or gone), when rows can
 * move under this query (any change may shift every row between a row's old
 * and new place), or when one of the changed sessions is on it. `initial` is
 * the first notice of a stream (the current version after a (re)connect):
 * what changed before it is unknown, so every older page is affected.
 */
export function pagesAffected(notice: ChangeNotice, loaded: readonly LoadedPage[], q: ListQuery, initial = false): number[] {
  // A stuck list also changes with the clock, at the same catalog version: a
  // page read when a different number of rows matched is stale too.
  const older = loaded.filter((p) => p.version < notice.version || (q.stuck && p.total !== notice.total));
  if (older.length === 0) return [];
  const everything = initial || notice.overflow;
  const anyChange = notice.sessionIds.length > 0;
  const moving = anyChange && rowsCanMove(q);
  const changed = new Set(notice.sessionIds);
  return older
    .filter((p) => everything || moving || p.total !== notice.total || p.ids.some((id) => changed.has(id)))
    .map((p) => p.page)
    .sort((a, b) => a - b);
}

export interface CachedPageInfo {
  /** Opaque handle of the cache entry. */
  id: string;
  /** Someone on screen reads it. */
  active: boolean;
  /** When it was last read from the server (ms). */
  updatedAt: number;
}

/** Inactive entries to drop so that at most `max` remain (oldest first). Active ones are never dropped. */
export function pagesToEvict(entries: readonly CachedPageInfo[], max = MAX_CACHED_PAGES): string[] {
  const excess = entries.length - max;
  if (excess <= 0) return [];
  return entries
    .filter((e) => !e.active)
    .sort((a, b) => a.updatedAt - b.updatedAt)
    .slice(0, excess)
    .map((e) => e.id);
}

/** The list's head: how many rows match and how complete the catalog is, as of `version`. */
export interface ListHead<S> {
  version: bigint;
  total: number;
  status: S | undefined;
}

/** The newer of two readings; a tie goes to the incoming one. */
export function newerHead<S>(current: ListHead<S> | undefined, incoming: ListHead<S>): ListHead<S> {
  if (!current || incoming.version >= current.version) return incoming;
  return current;
}

/** uint64 counts from the wire as numbers (a list never nears 2^53 rows). */
export function countOf(n: bigint): number {
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

export interface BackfillInfo {
  backfilling: boolean;
  sessionsKnown: bigint;
  sessionsIndexed: bigint;
  message: string;
}

/** "Indexing history: 12,400 of 40,000 sessions" while a backfill runs, else null. */
export function backfillLine(status: BackfillInfo | undefined): string | null {
  if (!status?.backfilling) return null;
  const indexed = formatCount(countOf(status.sessionsIndexed));
  const known = countOf(status.sessionsKnown);
  const base =
    known > 0 ? `Indexing history: ${indexed} of ${formatCount(known)} sessions` : `Indexing history: ${indexed} sessions so far`;
  return status.message ? `${base} (${status.message})` : base;
}
