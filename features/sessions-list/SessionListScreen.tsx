"use client";
// The live session list at "/": filters and sort in the URL, run on the
// server; a window-virtualized list whose height comes from the number of
// matching rows and whose rows are read in pages around what is on screen
// (features/sessions-list/use-session-window.ts), so the browser holds a window, never
// the index; keyboard selection (↑/↓ or j/k, Home/End, Enter opens), and
// loading/empty/error states.
//
// In steps, as the session page: the server reads the first page for the
// URL's query (`first`, app/page.tsx) and draws it (ListPreview.tsx, the same
// markup without this code); this screen is fetched right after `load`
// (LiveSessionList.tsx), takes over what was typed, picked or focused in that
// first view (`carried`) and shows the same first page; the live machinery
// (LiveSessionWindow: ListSessionPage pages, the change stream, Connect,
// protobuf-es, TanStack Query) is fetched once the browser is idle and hands
// its window to this same screen once it has read the first page itself, so
// nothing flashes. Without a first view it loads at once. The window and
// keyboard are use-list-navigation.ts; the rows SessionRows.tsx; the states
// instead of rows and the notes above them ListStates.tsx; the page's frame
// ListFrame.tsx.

import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { componentLoader, useAfterLoadComponent } from "@/lib/client/after-load-import";
import { countLine, firstViewWindow, type ListFirstView, type SessionWindow } from "@/features/sessions-list/list-first-view";
import { hasActiveFilters } from "@/lib/views/list-query";
import { backfillLine, listQueryKey } from "@/features/sessions-list/session-window";
import { useListQuery } from "@/features/sessions-list/use-list-query";
import { useListNavigation } from "@/features/sessions-list/use-list-navigation";
import { useUiStore } from "@/lib/client/ui-store";
import { ListFrame } from "@/features/sessions-list/ListFrame";
import { NewSessionLink } from "@/features/sessions-list/NewSessionLink";
import { SessionFilters } from "@/features/sessions-list/SessionFilters";
import { restoreFocus, type CarriedState } from "@/features/sessions-list/carry-over";
import { SessionRows } from "@/features/sessions-list/SessionRows";
import { ListEmpty, ListLoading, ListNoMatch, ListNotes, ListNotLoaded } from "@/features/sessions-list/ListStates";
import { useNowWhen } from "@/lib/client/use-now";
import type { LiveSessionWindowProps } from "@/features/sessions-list/LiveSessionWindow";
import { directoryFromPeople, EMPTY_DIRECTORY, type ListPerson } from "@/lib/views/directory";
import { DEFAULT_STUCK_AFTER_MS } from "@/lib/macp/projections/status";

const loadLive = componentLoader<LiveSessionWindowProps>(() =>
  import("@/features/sessions-list/LiveSessionWindow").then((m) => m.LiveSessionWindow),
);

export interface SessionListScreenProps {
  first?: ListFirstView | undefined;
  /** The console's stuck threshold (BATON_STUCK_AFTER_MINUTES). */
  stuckAfterMs?: number | undefined;
  /** The console's people and the agents directory's names, read by the server (display names in the rows). */
  names?: { people: readonly ListPerson[]; agentNames: Readonly<Record<string, string>> } | null | undefined;
  /** What was typed, picked or focused in the server's first view before this screen took over (LiveSessionList.tsx). */
  carried?: CarriedState | undefined;
}

export function SessionListScreen({ first, stuckAfterMs = DEFAULT_STUCK_AFTER_MS, names, carried }: SessionListScreenProps) {
  const [query, setQuery] = useListQuery();
  const directory = useMemo(() => (names ? directoryFromPeople(names.people, names.agentNames) : EMPTY_DIRECTORY), [names]);
  const paused = useUiStore((s) => s.paused);
  const setPaused = useUiStore((s) => s.setPaused);
  const listKey = listQueryKey(query);
  const firstWin = useMemo(() => firstViewWindow(first, listKey), [first, listKey]);
  const [liveWin, setLiveWin] = useState<SessionWindow | null>(null);
  const Live = useAfterLoadComponent(loadLive, "the live session list", first === undefined ? "now" : "after-load-idle");
  // The server's first view stays until the live window has read the list
  // itself (or failed to: then it says why).
  const win = liveWin && (liveWin.head !== undefined || liveWin.firstError !== undefined || first === undefined) ? liveWin : firstWin;
  const searchRef = useRef<HTMLInputElement | null>(null);
  const nav = useListNavigation(win, searchRef);

  useEffect(() => () => setPaused(false), [setPaused]);
  // Once in place of the first view: the focus where it was there.
  useEffect(() => {
    restoreFocus(document, carried?.focus);
    // Once, on the first render after the first view.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const togglePause = useCallback(() => setPaused(!useUiStore.getState().paused), [setPaused]);

  const { head, connection } = win;
  // The clock only ticks (and re-renders the screen) while a reconnect countdown is shown.
  const now = useNowWhen(connection.state === "reconnecting" && connection.retryAt !== undefined);
  const total = nav.total;
  const loaded = head !== undefined;
  const filtered = hasActiveFilters(query);
  const backfill = backfillLine(head?.status);

  let body: React.ReactNode;
  if (!loaded) {
    body =
      win.firstError !== undefined ? (
        <ListNotLoaded error={win.firstError} reconnecting={connection.state === "reconnecting"} onRetry={win.retry} />
      ) : (
        <ListLoading />
      );
  } else if (total === 0 && !filtered) {
    body = <ListEmpty backfilling={head?.status?.backfilling === true} />;
  } else if (total === 0) {
    body = (
      <ListNoMatch
        allCount={win.allCount}
        onClear={() => setQuery({ q: "", participant: "", waiting: "", stuck: false, mode: undefined, state: undefined, phase: undefined })}
      />
    );
  } else {
    body = (
      <SessionRows
        win={win}
        nav={nav}
        query={query}
        setQuery={setQuery}
        filtered={filtered}
        directory={directory}
        stuckAfterMs={stuckAfterMs}
      />
    );
  }

  return (
    <ListFrame
      live={Live ? <Live query={query} paused={paused} first={first} onWindow={setLiveWin} /> : null}
      count={countLine(win, filtered)}
      newSession={<NewSessionLink />}
      backfill={backfill}
      filters={
        <SessionFilters
          query={query}
          setQuery={setQuery}
          searchRef={searchRef}
          paused={paused}
          onTogglePause={togglePause}
          waiting={win.waiting}
          stuckAfterMs={stuckAfterMs}
          carried={carried?.filters}
        />
      }
      notes={<ListNotes win={win} loaded={loaded} now={now} paused={paused} />}
      body={body}
      hint={loaded && total > 0}
    />
  );
}
