// The session list's rows frame as drawn by the live list (SessionRows.tsx)
// and by the server's first view (ListPreview.tsx): the sort header of the
// wide grid (mouse only; the filters' sort menu is the accessible way; inert
// on the first view), the ordered list's label, and a row whose page is still
// loading or failed. No hooks and no "use client".

import clsx from "clsx";
import type { ListQuery, SortKey } from "@/lib/views/list-query";
import { SORT_LABELS } from "@/features/sessions-list/FiltersView";
import { LIST_GRID } from "@/features/sessions-list/SessionRowView";
import { Icon } from "@/components/ui/Icon";
import { formatCount } from "@/lib/views/format";

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

/** The ordered list's accessible name. */
export function rowsLabel(total: number, filtered: boolean, sort: SortKey): string {
  return `Sessions, ${formatCount(total)} ${filtered ? "matching" : "in all"}, sorted by ${SORT_LABELS[sort].toLowerCase()}`;
}

export function ColumnHeader({ query, onSort }: { query: ListQuery; onSort?: ((key: SortKey) => void) | undefined }) {
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
            onClick={onSort ? () => onSort(c.key as SortKey) : undefined}
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

export function RowPlaceholder({ failed, height }: { failed: boolean; height: number }) {
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
