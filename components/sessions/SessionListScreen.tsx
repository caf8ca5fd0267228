"use client";
// The live session list at "/": filters and sort in the URL, a window-
// virtualized list (smooth with 10,000 rows), keyboard selection
// (↑/↓ or j/k, Home/End, Enter opens), and loading/empty/error states.

import clsx from "clsx";
import { useWindowVirtualizer } from "@tanstack/react-virtual";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { applyListQuery, defaultDirFor, hasActiveFilters, type ListQuery, type SortKey } from "@/lib/client/list-query";
import { useListQuery } from "@/lib/client/use-list-query";
import { useOffsetTop } from "@/lib/client/use-offset-top";
import { useSessionList } from "@/lib/client/use-session-list";
import { useUiStore } from "@/lib/client/ui-store";
import { Icon } from "@/components/Icon";
import { NewSessionLink } from "@/components/sessions/NewSessionLink";
import { SessionFilters, SORT_LABELS } from "@/components/sessions/SessionFilters";
import { LIST_GRID, SessionRow, sessionIdOf } from "@/components/sessions/SessionRow";
import { useNow } from "@/lib/client/use-now";

const COLUMNS: { key: SortKey | null; label: string }[] = [
  { key: "mode", label: "Mode" },
  { key: "state", label: "State" },
  { key: "phase", label: "Phase" },
  { key: "intent", label: "Intent" },
  { key: "owner", label: "Owner" },
  { key: "target", label: "Target / assignee" },
  { key: null, label: "Scope" },
  { key: "started", label: "Started" },
  { key: "ttl", label: "Time left" },
  { key: "activity", label: "Activity" },
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
        "sticky top-14 z-10 hidden border-b border-slate-300 bg-slate-50 px-3 py-2 text-xs font-semibold text-slate-700 lg:grid dark:border-slate-700 dark:bg-slate-900 dark:text-slate-300",
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
          <span key={c.label}>{c.label}</span>
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

export function SessionListScreen() {
  const { list, connection, retryNow } = useSessionList();
  const [query, setQuery] = useListQuery();
  const router = useRouter();
  const paused = useUiStore((s) => s.paused);
  const setPaused = useUiStore((s) => s.setPaused);
  const [frozen, setFrozen] = useState<{ rows: ReadonlyMap<string, SessionSummary>; version: number } | null>(null);
  const searchRef = useRef<HTMLInputElement | null>(null);
  const listRef = useRef<HTMLOListElement | null>(null);
  const scrollMargin = useOffsetTop(listRef);
  const now = useNow();

  // Pausing freezes what is shown; the stream keeps folding underneath.
  useEffect(() => {
    if (paused && !frozen) setFrozen({ rows: list.rows, version: list.version });
    if (!paused && frozen) setFrozen(null);
  }, [paused, frozen, list.rows, list.version]);
  useEffect(() => () => setPaused(false), [setPaused]);

  const togglePause = useCallback(() => setPaused(!useUiStore.getState().paused), [setPaused]);
  const source = frozen?.rows ?? list.rows;
  const rows = useMemo(() => applyListQuery(source.values(), query), [source, query]);
  const waiting = frozen ? Math.max(0, list.version - frozen.version) : 0;

  const [selectedId, setSelectedId] = useState<string | null>(null);
  const selectedIndex = useMemo(() => {
    if (rows.length === 0) return -1;
    const i = selectedId ? rows.findIndex((r) => sessionIdOf(r) === selectedId) : -1;
    return i >= 0 ? i : 0;
  }, [rows, selectedId]);

  const virtualizer = useWindowVirtualizer({
    count: rows.length,
    estimateSize: () => 46,
    overscan: 12,
    scrollMargin,
    getItemKey: (i) => (rows[i] ? sessionIdOf(rows[i]) : i),
  });

  const focusRequest = useRef<string | null>(null);
  useEffect(() => {
    const id = focusRequest.current;
    if (!id) return;
    let frames = 0;
    let raf = 0;
    const tryFocus = (): void => {
      const el = listRef.current?.querySelector<HTMLElement>(`[data-row-id="${CSS.escape(id)}"]`);
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
      if (rows.length === 0) return;
      const i = Math.max(0, Math.min(rows.length - 1, index));
      const id = sessionIdOf(rows[i] as SessionSummary);
      setSelectedId(id);
      focusRequest.current = id;
      virtualizer.scrollToIndex(i, { align: "auto" });
    },
    [rows, virtualizer],
  );

  const onListKeyDown = (e: React.KeyboardEvent): void => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const page = Math.max(1, Math.floor(window.innerHeight / 46) - 2);
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
        next = rows.length - 1;
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
      } else if (e.key === "Enter" && (active === document.body || active?.id === "main") && rows[selectedIndex]) {
        router.push(`/sessions/${encodeURIComponent(sessionIdOf(rows[selectedIndex]))}`);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [moveTo, selectedIndex, rows, router]);

  const total = list.rows.size;
  const open = useMemo(() => {
    let n = 0;
    for (const r of list.rows.values()) if (r.metadata?.state === SessionState.OPEN) n += 1;
    return n;
  }, [list.rows]);

  let body: React.ReactNode;
  if (!list.loaded) {
    if (connection.state === "reconnecting" || connection.state === "ended") {
      body = (
        <Panel tone="warning">
          {connection.state === "ended" && connection.fatal ? (
            <>
              <p className="text-base font-semibold">The console server refused the session list</p>
              <p className="mt-2 text-sm">{connection.error ?? "No reason given"}.</p>
            </>
          ) : (
            <>
              <p className="text-base font-semibold">Can’t reach the console server</p>
              <p className="mt-2 text-sm">
                {connection.error ? `${connection.error}. ` : ""}
                Retrying automatically. Check that <code className="font-mono">npm start</code> is running and that this page was opened
                from it.
              </p>
            </>
          )}
          <button
            type="button"
            onClick={retryNow}
            className="mt-4 inline-flex items-center gap-1.5 rounded-md bg-amber-800 px-3 py-1.5 text-sm font-medium text-white hover:bg-amber-900 dark:bg-amber-300 dark:text-amber-950 dark:hover:bg-amber-200"
          >
            <Icon name="refresh" /> Retry now
          </button>
        </Panel>
      );
    } else {
      body = (
        <div aria-busy="true" className="space-y-2" data-testid="list-loading">
          <p className="text-sm text-slate-700 dark:text-slate-300">Connecting to the console server…</p>
          {Array.from({ length: 6 }, (_, i) => (
            <div key={i} className="h-11 animate-pulse rounded bg-slate-100 motion-reduce:animate-none dark:bg-slate-900" />
          ))}
        </div>
      );
    }
  } else if (total === 0) {
    body = (
      <Panel>
        <p className="text-base font-semibold" data-testid="empty-state">
          No sessions yet — run <code className="rounded bg-slate-100 px-1 font-mono dark:bg-slate-800">npm run demo</code> or start
          one from an agent
        </p>
        <p className="mt-2 text-sm">New sessions appear here the moment the runtime accepts their SessionStart.</p>
      </Panel>
    );
  } else if (rows.length === 0) {
    body = (
      <Panel>
        <p className="text-base font-semibold">No sessions match these filters</p>
        <p className="mt-2 text-sm">{total.toLocaleString("en-US")} sessions are hidden by the current filters.</p>
        {hasActiveFilters(query) ? (
          <button
            type="button"
            className="mt-4 rounded-md px-3 py-1.5 text-sm font-medium text-blue-800 ring-1 ring-blue-300 ring-inset hover:bg-blue-50 dark:text-sky-300 dark:ring-sky-800 dark:hover:bg-slate-900"
            onClick={() => setQuery({ q: "", participant: "", mode: undefined, state: undefined, phase: undefined })}
          >
            Clear filters
          </button>
        ) : null}
      </Panel>
    );
  } else {
    const items = virtualizer.getVirtualItems();
    body = (
      <div className="rounded-lg border border-slate-200 dark:border-slate-800">
        <ColumnHeader query={query} setQuery={setQuery} />
        {/* Roving focus between the rows' links; the list moves it with the arrow keys. */}
        {/* eslint-disable-next-line jsx-a11y/no-noninteractive-element-interactions */}
        <ol
          ref={listRef}
          aria-label={`Sessions, ${rows.length.toLocaleString("en-US")} shown, sorted by ${SORT_LABELS[query.sort].toLowerCase()}`}
          onKeyDown={onListKeyDown}
          className="relative"
          style={{ height: virtualizer.getTotalSize() }}
          data-testid="session-list"
        >
          {items.map((vi) => {
            const s = rows[vi.index] as SessionSummary;
            return (
              <li
                key={vi.key}
                data-index={vi.index}
                ref={virtualizer.measureElement}
                aria-setsize={rows.length}
                aria-posinset={vi.index + 1}
                className="absolute top-0 left-0 w-full"
                style={{ transform: `translateY(${vi.start - virtualizer.options.scrollMargin}px)` }}
              >
                <SessionRow summary={s} selected={vi.index === selectedIndex} onSelect={setSelectedId} />
              </li>
            );
          })}
        </ol>
      </div>
    );
  }

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-x-4 gap-y-2">
        <h1 className="text-xl font-semibold tracking-tight">Sessions</h1>
        <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="list-count">
          {list.loaded ? (
            <>
              {rows.length === total ? `${total.toLocaleString("en-US")}` : `${rows.length.toLocaleString("en-US")} of ${total.toLocaleString("en-US")}`}{" "}
              sessions · {open.toLocaleString("en-US")} open
            </>
          ) : (
            "Loading…"
          )}
        </p>
        <NewSessionLink />
      </div>
      <SessionFilters
        query={query}
        setQuery={setQuery}
        searchRef={searchRef}
        paused={paused}
        onTogglePause={togglePause}
        waiting={waiting}
      />
      {list.loaded && connection.state === "reconnecting" ? (
        <div
          className="flex flex-wrap items-center gap-3 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
          role="note"
        >
          <span>
            Connection lost{connection.error ? ` (${connection.error})` : ""} — showing the last known list.
            {connection.retryAt && now ? ` Reconnecting in ${Math.max(0, Math.ceil((connection.retryAt - now) / 1000))}s.` : ""}
          </span>
          <button type="button" onClick={retryNow} className="font-medium underline">
            Retry now
          </button>
        </div>
      ) : null}
      {paused ? (
        <p className="text-sm text-amber-900 dark:text-amber-200" role="note">
          Updates paused{waiting > 0 ? ` — ${waiting} update${waiting === 1 ? "" : "s"} waiting` : ""}. The list is frozen until you resume.
        </p>
      ) : null}
      {body}
      {list.loaded && rows.length > 0 ? (
        <p className="text-xs text-slate-600 dark:text-slate-400">
          Keyboard: <kbd className="font-mono">j</kbd>/<kbd className="font-mono">k</kbd> or arrows to move,{" "}
          <kbd className="font-mono">Enter</kbd> to open, <kbd className="font-mono">/</kbd> to search.
        </p>
      ) : null}
    </div>
  );
}
