// The session list's first view, drawn by the server only: the first rows of
// the URL's query (app/page.tsx read them), the filter bar showing that query,
// the count line. The same markup as the live list (ListFrame, FiltersView,
// RowsView, SessionRowView, ListStates) without its JavaScript: before `load`
// the page loads only the clocks' islands and the loader
// (LiveSessionList.tsx), which swaps in the live list once the page has
// loaded. No hooks and no "use client".

import { countLine, firstViewWindow, FIRST_VIEW_ROWS, ROW_WIDE, type ListFirstView } from "@/features/sessions-list/list-first-view";
import { hasActiveFilters, type ListQuery } from "@/lib/views/list-query";
import { backfillLine, listQueryKey } from "@/features/sessions-list/session-window";
import { directoryFromPeople, EMPTY_DIRECTORY, type ListPerson } from "@/lib/views/directory";
import { FIRST_VIEW_END_ID, ListFrame } from "@/features/sessions-list/ListFrame";
import { FiltersView } from "@/features/sessions-list/FiltersView";
import { ColumnHeader, RowPlaceholder, rowsLabel } from "@/features/sessions-list/RowsView";
import { SessionRowView } from "@/features/sessions-list/SessionRowView";
import { ListEmpty, ListLoading, ListNoMatch } from "@/features/sessions-list/ListStates";

export function ListPreview({
  first,
  query,
  stuckAfterMs,
  names,
}: {
  first: ListFirstView | undefined;
  query: ListQuery;
  stuckAfterMs: number;
  names: { people: readonly ListPerson[]; agentNames: Readonly<Record<string, string>> } | null | undefined;
}) {
  const directory = names ? directoryFromPeople(names.people, names.agentNames) : EMPTY_DIRECTORY;
  const win = firstViewWindow(first, listQueryKey(query));
  const filtered = hasActiveFilters(query);
  const total = win.head?.total ?? 0;
  const loaded = win.head !== undefined;
  let body: React.ReactNode;
  if (!loaded) body = <ListLoading />;
  else if (total === 0 && !filtered) body = <ListEmpty backfilling={win.head?.status?.backfilling === true} />;
  else if (total === 0) body = <ListNoMatch allCount={win.allCount} />;
  else {
    body = (
      <div className="rounded-lg border border-slate-200 dark:border-slate-800">
        <ColumnHeader query={query} />
        <ol aria-label={rowsLabel(total, filtered, query.sort)} className="" data-testid="session-list">
          {Array.from({ length: Math.min(total, FIRST_VIEW_ROWS) }, (_, index) => {
            const s = win.rowAt(index);
            return (
              <li key={index} data-index={index} aria-setsize={total} aria-posinset={index + 1}>
                {s ? (
                  <SessionRowView
                    summary={s}
                    selected={index === 0}
                    directory={directory}
                    stuckAfterMs={stuckAfterMs}
                    stuckMs={undefined}
                  />
                ) : (
                  <RowPlaceholder failed={false} height={ROW_WIDE} />
                )}
              </li>
            );
          })}
        </ol>
      </div>
    );
  }
  return (
    <>
      {/* Hoisted into <head> by React: the first paint waits for the whole first view (see FIRST_VIEW_END_ID). */}
      <link rel="expect" href={`#${FIRST_VIEW_END_ID}`} blocking="render" />
      <ListFrame
        preview
        count={countLine(win, filtered)}
        backfill={backfillLine(win.head?.status)}
        filters={
          <FiltersView
            query={query}
            q={query.q}
            participant={query.participant}
            mine=""
            moreOpen={false}
            paused={false}
            waiting={0}
            stuckAfterMs={stuckAfterMs}
          />
        }
        body={body}
        hint={loaded && total > 0}
      />
    </>
  );
}
