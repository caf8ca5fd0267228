"use client";
// The session list's rows: the sort header of the wide grid (mouse only; the
// filters' sort menu is the accessible way), and the virtualized ordered
// list whose rows are read in pages (a placeholder while a row's page loads
// or after it failed). Window and keyboard: use-list-navigation.ts.

import clsx from "clsx";
import { defaultDirFor, type ListQuery, type SortKey } from "@/lib/views/list-query";
import type { Directory } from "@/lib/views/directory";
import type { SessionWindow } from "@/features/sessions-list/list-first-view";
import type { useListNavigation } from "@/features/sessions-list/use-list-navigation";
import { SORT_LABELS } from "@/features/sessions-list/SessionFilters";
import { LIST_GRID, SessionRow } from "@/features/sessions-list/SessionRow";
import { Icon } from "@/components/ui/Icon";

const COLUMNS: { key: SortKey | null; label: string; title?: string }[] = [
  { key: "state", label: "Status" },
  { key: "intent", label: "Intent" },
  { key: null, label: "Scope / task" },
  { key: "owner", label: "From → To", title: "Handoffs: who hands over to whom. Tasks: requester → assignee." },
  { key: null, label: "Waiting on", title: "Who must act now" },
  { key: "started", label: "Age", title: "Time since the session started" },
  { key: "ttl", label: "Time left" },
  { key: "activity", label: "Activity", title: "Last activity" },
];

const fmt = (n: number): string => n.toLocaleString("en-US");

function ColumnHeader({ query, setQuery }: { query: ListQuery; setQuery: (p: Partial<ListQuery>) => void }) {
  return (
    <div
      className={clsx(
        "sticky top-14 z-10 hidden border-b border-l-4 border-b-slate-300 border-l-transparent bg-slate-50 px-3 py-2 text-xs font-semibold text-slate-700 lg:grid dark:border-b-slate-700 dark:bg-slate-900 dark:text-slate-300",
        LIST_GRID,
      )}
      aria-hidden="true"
    >
      {COLUMNS.map((c) =>
        c.key ? (
          <button
            key={c.label}
            type="button"
            tabIndex={-1}
            title={c.title}
            className="flex items-center gap-1 text-left hover:text-slate-950 dark:hover:text-white"
            onClick={() => {
              const key = c.key as SortKey;
              if (query.sort === key) setQuery({ dir: query.dir === "asc" ? "desc" : "asc" });
              else setQuery({ sort: key, dir: defaultDirFor(key) });
            }}
          >
            {c.label}
            {query.sort === c.key ? <Icon name={query.dir === "asc" ? "arrow-up" : "arrow-down"} className="h-3 w-3" /> : null}
          </button>
        ) : (
          <span key={c.label} title={c.title}>
            {c.label}
          </span>
        ),
      )}
    </div>
  );
}

function RowPlaceholder({ failed, height }: { failed: boolean; height: number }) {
  return (
    <div
      className={clsx(
        "flex items-center gap-3 border-b border-l-4 border-b-slate-200 border-l-transparent px-3 text-sm dark:border-b-slate-800",
        LIST_GRID,
      )}
      style={{ height }}
      data-row-placeholder={failed ? "failed" : "loading"}
    >
      {failed ? (
        <span className="text-slate-600 dark:text-slate-400">Not loaded</span>
      ) : (
        <>
          <span className="sr-only">Loading…</span>
          <span
            aria-hidden="true"
            className="h-3 w-2/3 animate-pulse rounded bg-slate-100 motion-reduce:animate-none lg:col-span-4 dark:bg-slate-800"
          />
        </>
      )}
    </div>
  );
}

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
      <ColumnHeader query={query} setQuery={setQuery} />
      {/* Roving focus between the rows' links; the list moves it with the arrow keys. */}
      {/* eslint-disable-next-line jsx-a11y/no-noninteractive-element-interactions */}
      <ol
        ref={nav.setListRef}
        aria-label={`Sessions, ${fmt(total)} ${filtered ? "matching" : "in all"}, sorted by ${SORT_LABELS[query.sort].toLowerCase()}`}
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
