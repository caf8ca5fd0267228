"use client";
// The session list's rows: the virtualized ordered list whose rows are read
// in pages (a placeholder while a row's page loads or after it failed), under
// the wide grid's sort header (RowsView.tsx). Window and keyboard:
// use-list-navigation.ts.

import clsx from "clsx";
import { useCallback } from "react";
import { defaultDirFor, type ListQuery, type SortKey } from "@/lib/views/list-query";
import type { Directory } from "@/lib/views/directory";
import type { SessionWindow } from "@/features/sessions-list/list-first-view";
import type { useListNavigation } from "@/features/sessions-list/use-list-navigation";
import { SessionRow } from "@/features/sessions-list/SessionRow";
import { ColumnHeader, RowPlaceholder, rowsLabel } from "@/features/sessions-list/RowsView";

export function SessionRows({
  win,
  nav,
  query,
  setQuery,
  filtered,
  directory,
  stuckAfterMs,
}: {
  win: SessionWindow;
  nav: ReturnType<typeof useListNavigation>;
  query: ListQuery;
  setQuery: (p: Partial<ListQuery>) => void;
  filtered: boolean;
  directory: Directory;
  stuckAfterMs: number;
}) {
  const { hydrated, virtualizer, items, total, rowHeight, selectedIndex } = nav;
  const onSort = useCallback(
    (key: SortKey) => {
      if (query.sort === key) setQuery({ dir: query.dir === "asc" ? "desc" : "asc" });
      else setQuery({ sort: key, dir: defaultDirFor(key) });
    },
    [query.sort, query.dir, setQuery],
  );
  // The rows stay in flow once hydrated (the window's rows, with the space of
  // those above and below as padding), where the server's HTML put them: a
  // row moved by hydration (absolute positions from estimated heights) would
  // be painted again where it lands, and Chromium counts a row that comes
  // into view so as a new, later Largest Contentful Paint.
  const margin = virtualizer.options.scrollMargin;
  const firstItem = items[0];
  const lastItem = items[items.length - 1];
  const padding =
    hydrated && firstItem && lastItem
      ? {
          paddingTop: firstItem.start - margin,
          paddingBottom: Math.max(0, virtualizer.getTotalSize() - (lastItem.end - margin)),
          // The padding changes as rows come and go: the browser must not move the scroll position for it.
          overflowAnchor: "none" as const,
        }
      : undefined;
  return (
    <div className="rounded-lg border border-slate-200 dark:border-slate-800">
      <ColumnHeader query={query} onSort={onSort} />
      {/* Roving focus between the rows' links; the list moves it with the arrow keys. */}
      {/* eslint-disable-next-line jsx-a11y/no-noninteractive-element-interactions */}
      <ol
        ref={nav.setListRef}
        aria-label={rowsLabel(total, filtered, query.sort)}
        onKeyDown={nav.onListKeyDown}
        aria-busy={win.stale || undefined}
        data-stale={win.stale || undefined}
        className={clsx(win.stale && "opacity-60")}
        style={padding}
        data-testid="session-list"
      >
        {items.map((vi) => {
          const s = win.rowAt(vi.index);
          return (
            <li
              key={vi.key}
              data-index={vi.index}
              ref={hydrated ? virtualizer.measureElement : undefined}
              aria-setsize={total}
              aria-posinset={vi.index + 1}
            >
              {s ? (
                <SessionRow
                  summary={s}
                  selected={vi.index === selectedIndex}
                  onSelect={nav.onSelect}
                  directory={directory}
                  stuckAfterMs={stuckAfterMs}
                />
              ) : (
                <RowPlaceholder failed={win.pageStatus(vi.index) === "error"} height={rowHeight} />
              )}
            </li>
          );
        })}
      </ol>
    </div>
  );
}
