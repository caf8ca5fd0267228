// The session list's window as the screen reads it, and the window the page
// shows before its live machinery has loaded: the first page the server read
// for the URL's query (app/page.tsx), handed to the browser with the HTML.
// Light on purpose (types from lib/gen only, no client-only module): the
// server draws the first view with it (ListPreview.tsx); Connect,
// protobuf-es and TanStack Query come later with
// features/sessions-list/LiveSessionWindow.tsx.

import type { CatalogStatus, ListSessionPageResponse, SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import type { ConnectionInfo } from "@/lib/client/connection";
import { countOf, PAGE_SIZE, type ListHead } from "@/features/sessions-list/session-window";
import { formatCount } from "@/lib/views/format";

/**
 * Rows the server's HTML shows (in flow, before the virtualizer measures the
 * window): more than a 1440×900 screen shows below the filters (about five
 * wide rows), and each row travels twice (HTML and the RSC payload), so 24
 * rows made the list's HTML 380 KiB and its first paint later (bench:web,
 * 2026-11-27); the live list draws the rest after `load`.
 */
export const FIRST_VIEW_ROWS = 12;

/** A grid row's height on wide screens before measuring (the server assumes a wide screen). */
export const ROW_WIDE = 46;

export type PageStatus = "loading" | "error" | "ready";

/** Why the list's first page could not be read, in words. */
export interface ListError {
  /** The server refused (retrying as is cannot help), rather than could not be reached. */
  refused: boolean;
  reason: string;
}

export interface SessionWindow {
  /** Rows matching the query, and the catalog's status; undefined until the first page or notice. */
  head: ListHead<CatalogStatus> | undefined;
  /** The rows shown are the previous query's, while this one's first page loads. */
  stale: boolean;
  /** The row at `index`, if its page is loaded. */
  rowAt(index: number): SessionSummary | undefined;
  /** Whether the page holding `index` is loaded, loading or failed. */
  pageStatus(index: number): PageStatus;
  /** The first page failed before anything was shown (an honest error, with a retry). */
  firstError: ListError | undefined;
  /** Pages on screen that failed to load. */
  failedPages: number;
  /** Tell which rows are on screen (inclusive). */
  setVisible(first: number, last: number): void;
  /** Read failed pages again and reconnect the change stream now. */
  retry(): void;
  /** The change stream. */
  connection: ConnectionInfo;
  /** Notices held back while paused. */
  waiting: number;
  /** Open sessions in the whole catalog (undefined until read). */
  openCount: number | undefined;
  /** Sessions in the whole catalog (undefined until read). */
  allCount: number | undefined;
}

/** What the server read for the page's first view. */
export interface ListFirstView {
  /** listQueryKey() of the query it was read for. */
  key: string;
  /** The first rows of that query (offset 0, fewer than a live page), as ListSessionPage answers them. */
  page: ListSessionPageResponse;
  /** Sessions in the whole catalog, and open ones (the "N of M · K open" line). */
  allCount: number;
  openCount: number;
}

const noop = (): void => {};

/** INITIAL_CONNECTION's value, not imported: the connection store is client-only and the server's first view (ListPreview.tsx) uses this module. */
const NOT_CONNECTED: ConnectionInfo = Object.freeze({ state: "connecting", reconnects: 0 });

/**
 * The window before the live machinery runs: the server's first page. For
 * another query than the one it was read for (the filters changed before the
 * live code arrived), its rows are shown as stale, as the live window does
 * while a new query's first page loads. Without a first view, nothing is
 * loaded yet.
 */
export function firstViewWindow(first: ListFirstView | undefined, listKey: string): SessionWindow {
  const rows = first?.page.sessions ?? [];
  const head: ListHead<CatalogStatus> | undefined = first
    ? { version: first.page.version, total: countOf(first.page.total), status: first.page.status }
    : undefined;
  return {
    head,
    stale: first !== undefined && first.key !== listKey,
    rowAt: (index) => (index < PAGE_SIZE ? rows[index] : undefined),
    pageStatus: (index) => (index < rows.length ? "ready" : "loading"),
    firstError: undefined,
    failedPages: 0,
    setVisible: noop,
    retry: noop,
    connection: NOT_CONNECTED,
    waiting: 0,
    openCount: first?.openCount,
    allCount: first?.allCount,
  };
}

/** The line beside the list's title: how many sessions (of how many, how many open), or what is loading. */
export function countLine(win: SessionWindow, filtered: boolean): string {
  const total = win.head?.total ?? 0;
  if (win.head === undefined) return win.firstError !== undefined ? "Not loaded" : "Loading…";
  if (win.stale) return "Searching…";
  let count = filtered
    ? win.allCount !== undefined
      ? // The whole-catalog count is read at most every 2 s: never show fewer than match.
        `${formatCount(total)} of ${formatCount(Math.max(total, win.allCount))} sessions`
      : `${formatCount(total)} matching sessions`
    : `${formatCount(total)} sessions`;
  if (win.openCount !== undefined) count += ` · ${formatCount(win.openCount)} open`;
  return count;
}
