"use client";
// The live session list at "/": filters and sort in the URL, run on the
// server; a window-virtualized list whose height comes from the number of
// matching rows and whose rows are read in pages around what is on screen
// (features/sessions-list/use-session-window.ts), so the browser holds a window, never
// the index; keyboard selection (↑/↓ or j/k, Home/End, Enter opens), and
// loading/empty/error states.
//
// In two steps, as the session page: the server reads the first page for the
// URL's query (`first`, app/page.tsx) and the HTML shows its first rows; the
// live machinery (LiveSessionWindow: ListSessionPage pages, the change
// stream, Connect, protobuf-es, TanStack Query) is fetched once the page has
// loaded and the browser is idle and hands its window to this same screen
// once it has read the first page itself, so the DOM stays and nothing
// flashes. Without a first view it loads at once.

import clsx from "clsx";
import { useWindowVirtualizer } from "@tanstack/react-virtual";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import { componentLoader, useAfterLoadComponent } from "@/lib/client/after-load-import";
import { firstViewWindow, type ListFirstView, type SessionWindow } from "@/features/sessions-list/list-first-view";
import { defaultDirFor, hasActiveFilters, type ListQuery, type SortKey } from "@/lib/views/list-query";
import { backfillLine, listQueryKey } from "@/features/sessions-list/session-window";
import { useListQuery } from "@/features/sessions-list/use-list-query";
import { useElementOffsetTop } from "@/lib/client/use-offset-top";
import { useUiStore } from "@/lib/client/ui-store";
import { Icon } from "@/components/ui/Icon";
import { NewSessionLink } from "@/features/sessions-list/NewSessionLink";
import { SessionFilters, SORT_LABELS } from "@/features/sessions-list/SessionFilters";
import { LIST_GRID, SessionRow } from "@/features/sessions-list/SessionRow";
import { useNow } from "@/lib/client/use-now";
import type { LiveSessionWindowProps } from "@/features/sessions-list/LiveSessionWindow";
import { directoryFromPeople, EMPTY_DIRECTORY, type ListPerson } from "@/lib/views/directory";
import { DEFAULT_STUCK_AFTER_MS } from "@/lib/macp/projections/status";

const loadLive = componentLoader<LiveSessionWindowProps>(() =>
  import("@/features/sessions-list/LiveSessionWindow").then((m) => m.LiveSessionWindow),
);

const noSubscription = (): (() => void) => () => {};

/** False while the server's HTML is hydrated, true from the first client render after it. */
function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}

/** Rows the server's HTML shows (in flow, before the virtualizer measures the window): a tall screen's worth. */
const FIRST_VIEW_ROWS = 24;

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

function isTypingTarget(el: Element | null): boolean {
  if (!el) return false;
  const tag = el.tagName;
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (el as HTMLElement).isContentEditable;
}

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

function Panel({ children, tone = "neutral" }: { children: React.ReactNode; tone?: "neutral" | "warning" }) {
  return (
    <div
      className={clsx(
        "rounded-lg border px-5 py-8 text-center",
        tone === "warning"
          ? "border-amber-300 bg-amber-50 text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
          : "border-dashed border-slate-300 text-slate-700 dark:border-slate-700 dark:text-slate-300",
      )}
    >
      {children}
    </div>
  );
}

const WIDE = "(min-width: 1024px)";
/** Row heights before measuring: a grid row on wide screens, a card below. */
const ROW_WIDE = 46;
const ROW_CARD = 106;

function subscribeWide(cb: () => void): () => void {
  const mq = window.matchMedia(WIDE);
  mq.addEventListener("change", cb);
  return () => mq.removeEventListener("change", cb);
}

function useWide(): boolean {
  return useSyncExternalStore(
    subscribeWide,
    () => window.matchMedia(WIDE).matches,
    () => true,
  );
}

const fmt = (n: number): string => n.toLocaleString("en-US");

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

export function SessionListScreen({
  first,
  stuckAfterMs = DEFAULT_STUCK_AFTER_MS,
  names,
}: {
  first?: ListFirstView | undefined;
  /** The console's stuck threshold (BATON_STUCK_AFTER_MINUTES). */
  stuckAfterMs?: number;
  /** The console's people and the agents directory's names, read by the server (display names in the rows). */
  names?: { people: readonly ListPerson[]; agentNames: Readonly<Record<string, string>> } | null | undefined;
}) {
  const [query, setQuery] = useListQuery();
  const directory = useMemo(() => (names ? directoryFromPeople(names.people, names.agentNames) : EMPTY_DIRECTORY), [names]);
  const router = useRouter();
  const paused = useUiStore((s) => s.paused);
  const setPaused = useUiStore((s) => s.setPaused);
  const listKey = listQueryKey(query);
  const firstWin = useMemo(() => firstViewWindow(first, listKey), [first, listKey]);
  const [liveWin, setLiveWin] = useState<SessionWindow | null>(null);
  const Live = useAfterLoadComponent(loadLive, "the live session list", first === undefined);
  // The server's first view stays until the live window has read the list
  // itself (or failed to: then it says why).
  const win = liveWin && (liveWin.head !== undefined || liveWin.firstError !== undefined || first === undefined) ? liveWin : firstWin;
  const hydrated = useHydrated();
  const searchRef = useRef<HTMLInputElement | null>(null);
  const listRef = useRef<HTMLOListElement | null>(null);
  const [listEl, setListEl] = useState<HTMLOListElement | null>(null);
  const scrollMargin = useElementOffsetTop(listEl);
  const wide = useWide();
  const rowHeight = wide ? ROW_WIDE : ROW_CARD;
  const now = useNow();

  useEffect(() => () => setPaused(false), [setPaused]);
  const togglePause = useCallback(() => setPaused(!useUiStore.getState().paused), [setPaused]);

  const total = win.head?.total ?? 0;
  const { setVisible, rowAt } = win;

  const virtualizer = useWindowVirtualizer({
    count: total,
    estimateSize: () => rowHeight,
    overscan: 8,
    scrollMargin,
    // Keyed by position: pages read at different versions may briefly show
    // the same session twice while rows shift; ids would collide.
  });
  // Re-estimate unmeasured rows when the layout switches between grid and cards.
  useEffect(() => virtualizer.measure(), [rowHeight, virtualizer]);

  // Until hydrated, the first rows in flow (the server knows no window size).
  const items: readonly { key: React.Key; index: number; start: number }[] = hydrated
    ? virtualizer.getVirtualItems()
    : Array.from({ length: Math.min(total, FIRST_VIEW_ROWS) }, (_, index) => ({ key: index, index, start: 0 }));
  const firstVisible = items[0]?.index ?? 0;
  const lastVisible = items[items.length - 1]?.index ?? 0;
  useEffect(() => setVisible(firstVisible, lastVisible), [firstVisible, lastVisible, setVisible]);

  // Selection: an index, kept on the same session while rows shift under it.
  const [selected, setSelected] = useState<{ index: number; id: string | null }>({ index: 0, id: null });
  let selectedIndex = total === 0 ? -1 : Math.min(selected.index, total - 1);
  if (selected.id && selectedIndex >= 0 && rowAt(selectedIndex)?.metadata?.sessionId !== selected.id) {
    const found = items.find((vi) => rowAt(vi.index)?.metadata?.sessionId === selected.id);
    if (found) selectedIndex = found.index;
  }
  const onSelect = useCallback(
    (id: string) => {
      const vi = virtualizer.getVirtualItems().find((v) => rowAt(v.index)?.metadata?.sessionId === id);
      setSelected({ index: vi ? vi.index : 0, id });
    },
    [virtualizer, rowAt],
  );

  // Focus follows the selection once its row is loaded and rendered.
  const focusRequest = useRef<number | null>(null);
  useEffect(() => {
    const index = focusRequest.current;
    if (index === null) return;
    let frames = 0;
    let raf = 0;
    const tryFocus = (): void => {
      const el = listRef.current?.querySelector<HTMLElement>(`li[data-index="${index}"] [data-row]`);
      if (el) {
        el.focus({ preventScroll: true });
        focusRequest.current = null;
      } else if (frames++ < 20) raf = requestAnimationFrame(tryFocus);
    };
    tryFocus();
    return () => cancelAnimationFrame(raf);
  });

  const moveTo = useCallback(
    (index: number) => {
      if (total === 0) return;
      const i = Math.max(0, Math.min(total - 1, index));
      setSelected({ index: i, id: rowAt(i)?.metadata?.sessionId ?? null });
      focusRequest.current = i;
      virtualizer.scrollToIndex(i, { align: "auto" });
    },
    [total, rowAt, virtualizer],
  );

  const onListKeyDown = (e: React.KeyboardEvent): void => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const page = Math.max(1, Math.floor(window.innerHeight / rowHeight) - 2);
    let next: number | null = null;
    switch (e.key) {
      case "ArrowDown":
      case "j":
        next = selectedIndex + 1;
        break;
      case "ArrowUp":
      case "k":
        next = selectedIndex - 1;
        break;
      case "Home":
        next = 0;
        break;
      case "End":
        next = total - 1;
        break;
      case "PageDown":
        next = selectedIndex + page;
        break;
      case "PageUp":
        next = selectedIndex - page;
        break;
      default:
        return;
    }
    e.preventDefault();
    moveTo(next);
  };

  // Page-level shortcuts when nothing else has focus: "/" searches, j/k enter the list.
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
      const active = document.activeElement;
      if (isTypingTarget(active)) return;
      if (listRef.current?.contains(active)) return;
      if (e.key === "/") {
        e.preventDefault();
        searchRef.current?.focus();
      } else if (e.key === "j" || e.key === "k") {
        e.preventDefault();
        moveTo(selectedIndex < 0 ? 0 : selectedIndex);
      } else if (e.key === "Enter" && (active === document.body || active?.id === "main")) {
        const id = rowAt(selectedIndex)?.metadata?.sessionId;
        if (id) router.push(`/sessions/${encodeURIComponent(id)}`);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [moveTo, selectedIndex, rowAt, router]);

  const setListRef = useCallback((el: HTMLOListElement | null) => {
    listRef.current = el;
    setListEl(el);
  }, []);

  const { head, connection } = win;
  const loaded = head !== undefined;
  const filtered = hasActiveFilters(query);
  const backfill = backfillLine(head?.status);

  let body: React.ReactNode;
  if (!loaded) {
    if (win.firstError !== undefined) {
      const { refused, reason } = win.firstError;
      body = (
        <Panel tone="warning">
          {refused ? (
            <>
              <p className="text-base font-semibold">The console server refused the session list</p>
              <p className="mt-2 text-sm">{reason}.</p>
            </>
          ) : (
            <>
              <p className="text-base font-semibold">Can’t reach the console server</p>
              <p className="mt-2 text-sm">
                {reason}. {connection.state === "reconnecting" ? "Retrying automatically. " : ""}Check that{" "}
                <code className="font-mono">npm start</code> is running and that this page was opened from it.
              </p>
            </>
          )}
          <button
            type="button"
            onClick={win.retry}
            className="mt-4 inline-flex items-center gap-1.5 rounded-md bg-amber-800 px-3 py-1.5 text-sm font-medium text-white hover:bg-amber-900 dark:bg-amber-300 dark:text-amber-950 dark:hover:bg-amber-200"
          >
            <Icon name="refresh" /> Retry now
          </button>
        </Panel>
      );
    } else {
      body = (
        <div aria-busy="true" className="space-y-2" data-testid="list-loading">
          <p className="text-sm text-slate-700 dark:text-slate-300">Loading sessions…</p>
          {Array.from({ length: 6 }, (_, i) => (
            <div key={i} className="h-11 animate-pulse rounded bg-slate-100 motion-reduce:animate-none dark:bg-slate-900" />
          ))}
        </div>
      );
    }
  } else if (total === 0 && !filtered) {
    body = (
      <Panel>
        {head?.status?.backfilling ? (
          <p className="text-base font-semibold" data-testid="empty-state">
            No sessions indexed yet — the console is still reading the runtime’s history
          </p>
        ) : (
          <>
            <p className="text-base font-semibold" data-testid="empty-state">
              No sessions yet — run <code className="rounded bg-slate-100 px-1 font-mono dark:bg-slate-800">npm run demo</code> or start one
              from an agent
            </p>
            <p className="mt-2 text-sm">New sessions appear here the moment the runtime accepts their SessionStart.</p>
          </>
        )}
      </Panel>
    );
  } else if (total === 0) {
    body = (
      <Panel>
        <p className="text-base font-semibold" data-testid="no-match">
          No sessions match these filters
        </p>
        {win.allCount !== undefined && win.allCount > 0 ? (
          <p className="mt-2 text-sm">{fmt(win.allCount)} sessions are hidden by the current filters.</p>
        ) : null}
        <button
          type="button"
          className="mt-4 rounded-md px-3 py-1.5 text-sm font-medium text-blue-800 ring-1 ring-blue-300 ring-inset hover:bg-blue-50 dark:text-sky-300 dark:ring-sky-800 dark:hover:bg-slate-900"
          onClick={() =>
            setQuery({ q: "", participant: "", waiting: "", stuck: false, mode: undefined, state: undefined, phase: undefined })
          }
        >
          Clear filters
        </button>
      </Panel>
    );
  } else {
    body = (
      <div className="rounded-lg border border-slate-200 dark:border-slate-800">
        <ColumnHeader query={query} setQuery={setQuery} />
        {/* Roving focus between the rows' links; the list moves it with the arrow keys. */}
        {/* eslint-disable-next-line jsx-a11y/no-noninteractive-element-interactions */}
        <ol
          ref={setListRef}
          aria-label={`Sessions, ${fmt(total)} ${filtered ? "matching" : "in all"}, sorted by ${SORT_LABELS[query.sort].toLowerCase()}`}
          onKeyDown={onListKeyDown}
          aria-busy={win.stale || undefined}
          data-stale={win.stale || undefined}
          className={clsx("relative", win.stale && "opacity-60")}
          style={hydrated ? { height: virtualizer.getTotalSize() } : undefined}
          data-testid="session-list"
        >
          {items.map((vi) => {
            const s = rowAt(vi.index);
            return (
              <li
                key={vi.key}
                data-index={vi.index}
                ref={hydrated ? virtualizer.measureElement : undefined}
                aria-setsize={total}
                aria-posinset={vi.index + 1}
                className={hydrated ? "absolute top-0 left-0 w-full" : undefined}
                style={hydrated ? { transform: `translateY(${vi.start - virtualizer.options.scrollMargin}px)` } : undefined}
              >
                {s ? (
                  <SessionRow
                    summary={s}
                    selected={vi.index === selectedIndex}
                    onSelect={onSelect}
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

  let count: string;
  if (!loaded) count = win.firstError !== undefined ? "Not loaded" : "Loading…";
  else if (win.stale) count = "Searching…";
  else {
    count = filtered
      ? win.allCount !== undefined
        ? // The whole-catalog count is read at most every 2 s: never show fewer than match.
          `${fmt(total)} of ${fmt(Math.max(total, win.allCount))} sessions`
        : `${fmt(total)} matching sessions`
      : `${fmt(total)} sessions`;
    if (win.openCount !== undefined) count += ` · ${fmt(win.openCount)} open`;
  }

  return (
    <div className="space-y-4">
      {Live ? <Live query={query} paused={paused} first={first} onWindow={setLiveWin} /> : null}
      <div className="flex flex-wrap items-center gap-x-4 gap-y-2">
        <h1 className="text-xl font-semibold tracking-tight">Sessions</h1>
        <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="list-count">
          {count}
        </p>
        <NewSessionLink />
      </div>
      <p role="status" className={clsx("text-sm", backfill ? "text-blue-900 dark:text-sky-200" : "sr-only")} data-testid="catalog-status">
        {backfill ? (
          <>
            <Icon name="refresh" className="mr-1.5 inline h-4 w-4 align-[-3px] motion-safe:animate-spin" />
            {backfill}. The list shows what is indexed so far.
          </>
        ) : null}
      </p>
      <SessionFilters
        query={query}
        setQuery={setQuery}
        searchRef={searchRef}
        paused={paused}
        onTogglePause={togglePause}
        waiting={win.waiting}
        stuckAfterMs={stuckAfterMs}
      />
      {loaded && connection.state === "reconnecting" ? (
        <div
          className="flex flex-wrap items-center gap-3 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
          role="note"
        >
          <span>
            Connection lost{connection.error ? ` (${connection.error})` : ""} — showing the last known list.
            {connection.retryAt && now ? ` Reconnecting in ${Math.max(0, Math.ceil((connection.retryAt - now) / 1000))}s.` : ""}
          </span>
          <button type="button" onClick={win.retry} className="font-medium underline">
            Retry now
          </button>
        </div>
      ) : null}
      {loaded && connection.state === "ended" ? (
        <div
          className="flex flex-wrap items-center gap-3 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
          role="note"
        >
          <span>Live updates stopped{connection.error ? `: ${connection.error}` : ""}. The list shows what was read last.</span>
          <button type="button" onClick={win.retry} className="font-medium underline">
            Retry now
          </button>
        </div>
      ) : null}
      {loaded && win.failedPages > 0 ? (
        <div
          className="flex flex-wrap items-center gap-3 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
          role="alert"
          data-testid="page-error"
        >
          <span>Some rows could not be loaded.</span>
          <button type="button" onClick={win.retry} className="font-medium underline">
            Retry
          </button>
        </div>
      ) : null}
      {paused ? (
        <p className="text-sm text-amber-900 dark:text-amber-200" role="note">
          Updates paused{win.waiting > 0 ? ` — ${win.waiting} update${win.waiting === 1 ? "" : "s"} waiting` : ""}. Rows on screen stay as
          they are until you resume.
        </p>
      ) : null}
      {body}
      {loaded && total > 0 ? (
        <p className="text-xs text-slate-600 dark:text-slate-400">
          Keyboard: <kbd className="font-mono">j</kbd>/<kbd className="font-mono">k</kbd> or arrows to move,{" "}
          <kbd className="font-mono">Enter</kbd> to open, <kbd className="font-mono">/</kbd> to search.
        </p>
      ) : null}
    </div>
  );
}
