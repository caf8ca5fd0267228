"use client";
// useSessionWindow(query): the session list as the screen needs it, a window
// of the server's catalog. The screen says which rows are on screen
// (setVisible); the pages that cover them (PAGE_SIZE rows each, plus a margin)
// are read with ListSessionPage through TanStack Query, at most
// MAX_CACHED_PAGES stay cached. A WatchSessionChanges stream for the same
// query keeps the count and status current and refetches only the loaded
// pages a change can affect (features/sessions-list/session-pages.ts). While paused,
// notices are counted, not applied; resuming applies them.

import { useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "react";
import type {
  CatalogStatus,
  ListSessionPageResponse,
  SessionListChange,
  SessionSummary,
  WatchSessionChangesResponse,
} from "@/lib/gen/baton/v1/console_pb";
import { clearConnection, connectionFromRunner, INITIAL_CONNECTION, reportConnection, type ConnectionInfo } from "@/lib/client/connection";
import { toSessionListQuery, type ListQuery } from "@/lib/views/list-query";
import type { PageStatus, SessionWindow } from "@/features/sessions-list/list-first-view";
import { queryKeys } from "@/lib/client/query-keys";
import { applyNotice, evictPages, fetchPage, RequiredVersions } from "@/features/sessions-list/session-pages";
import {
  countOf,
  listQueryKey,
  newerHead,
  PAGE_KEY_ROOT,
  PAGE_SIZE,
  pageQueryKey,
  pagesForRange,
  type ChangeNotice,
  type ListHead,
} from "@/features/sessions-list/session-window";
import { Code, ConnectError } from "@connectrpc/connect";
import { describeStreamError, isFatalStreamError, runResilientStream, type RunnerHandle } from "@/lib/client/stream-runner";
import { consoleClient } from "@/lib/client/transport";
import { abortOnPageHide, useStreamLifetime } from "@/lib/client/use-stream-lifetime";

/** Unused pages leave the cache after this long even under the bound. */
const PAGE_GC_MS = 60_000;
/** Wait this long for scrolling to settle before reading pages not cached yet. */
const SCROLL_SETTLE_MS = 80;
/** The open-session count is read again at most this often. */
const COUNT_REFRESH_MS = 2_000;
/** A page read that takes longer fails (DEADLINE_EXCEEDED) and offers a retry instead of loading forever. */
const READ_TIMEOUT_MS = 20_000;

/** Why a page read failed, in words. */
export function describeListError(error: unknown): string {
  if (error instanceof ConnectError && error.code === Code.DeadlineExceeded) {
    return `The console server did not answer within ${READ_TIMEOUT_MS / 1000} s`;
  }
  return describeStreamError(error);
}

export type { PageStatus, SessionWindow } from "@/features/sessions-list/list-first-view";

function sameRange(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

export function useSessionWindow(query: ListQuery, paused: boolean): SessionWindow {
  const qc = useQueryClient();
  const listKey = listQueryKey(query);
  const queryRef = useRef(query);
  queryRef.current = query;
  const required = useRef(new RequiredVersions()).current;

  // What is on screen, and the pages that cover it (settled while scrolling fast).
  const [visible, setVisibleState] = useState<{ key: string; first: number; last: number }>({ key: listKey, first: 0, last: 0 });
  const [noticeHead, setNoticeHead] = useState<{ key: string; head: ListHead<CatalogStatus> } | null>(null);
  const noticeFor = noticeHead?.key === listKey ? noticeHead.head : undefined;

  const [wanted, setWanted] = useState<{ key: string; pages: number[] }>({ key: listKey, pages: [0] });

  // ---- pages
  // (A new [0] while a new query's pages are not chosen yet: byPage follows it.)
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const pagesWanted = wanted.key === listKey ? wanted.pages : [0];
  const results = useQueries({
    queries: pagesWanted.map((page) => ({
      queryKey: pageQueryKey(listKey, page),
      queryFn: ({ signal }: { signal: AbortSignal }) =>
        fetchPage(
          (req, opts) => consoleClient().listSessionPage(req, { ...opts, timeoutMs: READ_TIMEOUT_MS }),
          queryRef.current,
          listKey,
          page,
          signal,
          required,
        ),
      staleTime: Number.POSITIVE_INFINITY,
      gcTime: PAGE_GC_MS,
      retry: false,
    })),
  });

  const byPage = useMemo(() => {
    const m = new Map<number, { data: ListSessionPageResponse | undefined; status: PageStatus; error: unknown }>();
    pagesWanted.forEach((page, i) => {
      const r = results[i];
      if (!r) return;
      m.set(page, { data: r.data, status: r.data ? "ready" : r.isError ? "error" : "loading", error: r.error });
    });
    return m;
  }, [pagesWanted, results]);

  // The head: the newest reading among the pages shown and the last notice.
  let head: ListHead<CatalogStatus> | undefined = noticeFor;
  for (const { data } of byPage.values()) {
    if (data) head = newerHead(head, { version: data.version, total: countOf(data.total), status: data.status });
  }
  const total = head?.total;

  // Which pages to read: at once when all are cached, else once scrolling settles.
  const first = visible.key === listKey ? visible.first : 0;
  const last = visible.key === listKey ? visible.last : 0;
  useEffect(() => {
    const next = pagesForRange(first, last, total);
    if (wanted.key === listKey && sameRange(wanted.pages, next)) return;
    const cached = next.every((p) => qc.getQueryData(pageQueryKey(listKey, p)) !== undefined);
    if (cached || wanted.key !== listKey) {
      setWanted({ key: listKey, pages: next });
      return;
    }
    const t = setTimeout(() => setWanted({ key: listKey, pages: next }), SCROLL_SETTLE_MS);
    return () => clearTimeout(t);
  }, [first, last, total, listKey, qc, wanted]);

  // Bound the cache whenever a page arrives.
  const arrivals = results.map((r) => r.dataUpdatedAt).join(",");
  useEffect(() => {
    evictPages(qc);
  }, [arrivals, qc]);

  useEffect(() => required.retain(listKey), [listKey, required]);

  // ---- counts over the whole catalog ("N of M sessions · K open")
  const allQ = useQuery({
    queryKey: queryKeys.sessionCount("all"),
    queryFn: async ({ signal }) =>
      countOf((await consoleClient().listSessionPage({ query: {}, offset: 0, limit: 1 }, { signal, timeoutMs: READ_TIMEOUT_MS })).total),
    staleTime: Number.POSITIVE_INFINITY,
    retry: 1,
  });
  const openQ = useQuery({
    queryKey: queryKeys.sessionCount("open"),
    queryFn: async ({ signal }) =>
      countOf(
        (await consoleClient().listSessionPage({ query: { state: "open" }, offset: 0, limit: 1 }, { signal, timeoutMs: READ_TIMEOUT_MS }))
          .total,
      ),
    staleTime: Number.POSITIVE_INFINITY,
    retry: 1,
  });
  const lastCountRefresh = useRef(0);
  const countTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const refreshCounts = useCallback(() => {
    const run = (): void => {
      countTimer.current = undefined;
      lastCountRefresh.current = Date.now();
      void qc.invalidateQueries({ queryKey: queryKeys.sessionCounts }, { cancelRefetch: false });
    };
    if (countTimer.current) return;
    const wait = lastCountRefresh.current + COUNT_REFRESH_MS - Date.now();
    if (wait <= 0) run();
    else countTimer.current = setTimeout(run, wait);
  }, [qc]);
  useEffect(() => () => countTimer.current && clearTimeout(countTimer.current), []);

  // ---- the change stream
  const [connection, setConnection] = useState<ConnectionInfo>(INITIAL_CONNECTION);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  const held = useRef<{ key: string; notice: ChangeNotice; status: CatalogStatus | undefined; count: number } | null>(null);
  const [waiting, setWaiting] = useState(0);
  const handle = useRef<RunnerHandle | null>(null);
  const generation = useStreamLifetime();
  const [restart, bumpRestart] = useReducer((x: number) => x + 1, 0);

  const apply = useCallback(
    (key: string, notice: ChangeNotice, status: CatalogStatus | undefined, initial: boolean) => {
      setNoticeHead((prev) => {
        const cur = prev?.key === key ? prev.head : undefined;
        return { key, head: newerHead(cur, { version: notice.version, total: countOf(notice.total), status }) };
      });
      applyNotice(qc, key, queryRef.current, notice, required, initial);
      refreshCounts();
    },
    [qc, required, refreshCounts],
  );

  useEffect(() => {
    const ac = new AbortController();
    const disposePageHide = abortOnPageHide(ac);
    const key = listKey;
    const request = { query: toSessionListQuery(queryRef.current) };
    let first = true;
    let info: ConnectionInfo = INITIAL_CONNECTION;
    handle.current = runResilientStream<WatchSessionChangesResponse>(
      {
        connect: (s) => consoleClient().watchSessionChanges(request, { signal: s }),
        onConnect: () => {
          first = true;
        },
        onMessage: (m) => {
          if (m.item.case !== "change") return "continue";
          const c: SessionListChange = m.item.value;
          const notice: ChangeNotice = { version: c.version, total: c.total, sessionIds: c.sessionIds, overflow: c.overflow };
          const initial = first;
          first = false;
          if (pausedRef.current) {
            // Held back: keep the newest version and total; what changed is summed up as "everything".
            const prev = held.current?.key === key ? held.current : null;
            const count = (prev?.count ?? 0) + (initial ? 0 : Math.max(1, c.sessionIds.length));
            held.current = { key, notice: { ...notice, sessionIds: [], overflow: true }, status: c.status, count };
            setWaiting(count);
          } else {
            apply(key, notice, c.status, initial);
          }
          return "continue";
        },
        onStatus: (status) => {
          info = connectionFromRunner(info, status);
          setConnection(info);
          reportConnection("session-list", "Session list", info);
          // Back online: pages that failed meanwhile are read again.
          if (status.phase === "open")
            void qc.refetchQueries({ queryKey: [...PAGE_KEY_ROOT, key], type: "active", predicate: (q) => q.state.status === "error" });
        },
      },
      ac.signal,
    );
    const onOnline = (): void => handle.current?.retryNow();
    window.addEventListener("online", onOnline);
    return () => {
      ac.abort();
      disposePageHide();
      window.removeEventListener("online", onOnline);
      handle.current = null;
      clearConnection("session-list");
      setConnection(INITIAL_CONNECTION);
    };
  }, [listKey, generation, restart, qc, apply]);

  // Resuming applies what was held back.
  useEffect(() => {
    if (paused) return;
    const h = held.current;
    held.current = null;
    setWaiting(0);
    if (h && h.key === listKey) apply(h.key, h.notice, h.status, false);
  }, [paused, listKey, apply]);

  // ---- what the screen reads. While a new query's first page loads, the
  // previous list stays on screen (marked stale) instead of flashing empty.
  let failedPages = 0;
  for (const p of byPage.values()) if (p.status === "error") failedPages += 1;
  const firstPage = byPage.get(0);
  const firstFailure: unknown = head === undefined && firstPage?.status === "error" ? firstPage.error : undefined;
  const firstError = useMemo(
    () => (firstFailure === undefined ? undefined : { refused: isFatalStreamError(firstFailure), reason: describeListError(firstFailure) }),
    [firstFailure],
  );
  const shown = useRef<{ head: ListHead<CatalogStatus>; byPage: typeof byPage } | null>(null);
  let view: { head: ListHead<CatalogStatus> | undefined; byPage: typeof byPage } = { head, byPage };
  if (head) shown.current = { head, byPage };
  else if (firstError === undefined && shown.current) view = shown.current;
  const stale = head === undefined && view.head !== undefined;
  const viewPages = view.byPage;

  const rowAt = useCallback(
    (index: number): SessionSummary | undefined => viewPages.get(Math.floor(index / PAGE_SIZE))?.data?.sessions[index % PAGE_SIZE],
    [viewPages],
  );
  const pageStatus = useCallback(
    (index: number): PageStatus => viewPages.get(Math.floor(index / PAGE_SIZE))?.status ?? "loading",
    [viewPages],
  );
  const setVisible = useCallback(
    (f: number, l: number) =>
      setVisibleState((prev) => (prev.key === listKey && prev.first === f && prev.last === l ? prev : { key: listKey, first: f, last: l })),
    [listKey],
  );

  const retry = useCallback(() => {
    void qc.refetchQueries({ queryKey: [...PAGE_KEY_ROOT, listKey], type: "active", predicate: (q) => q.state.status === "error" });
    if (allQ.isError || openQ.isError) void qc.refetchQueries({ queryKey: queryKeys.sessionCounts });
    if (connection.state === "ended") bumpRestart();
    else handle.current?.retryNow();
  }, [qc, listKey, connection.state, allQ.isError, openQ.isError]);

  return {
    head: view.head,
    stale,
    rowAt,
    pageStatus,
    firstError,
    failedPages,
    setVisible,
    retry,
    connection,
    waiting,
    openCount: openQ.data,
    allCount: allQ.data,
  };
}
