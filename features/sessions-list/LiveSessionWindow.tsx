"use client";
// The session list's live machinery, loaded after `load` by
// SessionListScreen: the pages read with ListSessionPage through TanStack
// Query and the WatchSessionChanges stream (features/sessions-list/use-session-window.ts),
// with Connect and protobuf-es. It renders nothing: it hands its window to the
// screen, which keeps the same DOM from the server's first view on.
//
// It reads the first page again rather than trusting the server's copy: the
// screen keeps showing the server's rows until that read answers (so nothing
// flashes), and a browser that cannot reach the list's API says so instead of
// showing rows it cannot keep live. The change stream's first notice (the
// catalog's version now) then refreshes whatever changed since, so no update
// is lost. The whole-catalog counts are seeded from the server's reading
// (every notice refreshes them).

import { useQueryClient } from "@tanstack/react-query";
import { memo, useLayoutEffect, useState } from "react";
import type { ListFirstView, SessionWindow } from "@/features/sessions-list/list-first-view";
import type { ListQuery } from "@/lib/views/list-query";
import { QueryProvider } from "@/lib/client/query-provider";
import { queryKeys } from "@/lib/client/query-keys";
import { useSessionWindow } from "@/features/sessions-list/use-session-window";

export interface LiveSessionWindowProps {
  query: ListQuery;
  paused: boolean;
  first: ListFirstView | undefined;
  onWindow: (win: SessionWindow) => void;
}

function Driver({ query, paused, first, onWindow }: LiveSessionWindowProps) {
  const qc = useQueryClient();
  // Seed the counts once, before the window's first read, unless cached.
  useState(() => {
    if (!first) return null;
    if (qc.getQueryData(queryKeys.sessionCount("all")) === undefined) qc.setQueryData(queryKeys.sessionCount("all"), first.allCount);
    if (qc.getQueryData(queryKeys.sessionCount("open")) === undefined) qc.setQueryData(queryKeys.sessionCount("open"), first.openCount);
    return null;
  });
  const win = useSessionWindow(query, paused);
  // Before paint: the screen shows the live window in the same commit.
  useLayoutEffect(() => onWindow(win));
  return null;
}

/**
 * Memoized: the screen re-renders with every window this hands it; with the
 * same props that must not render the driver again (it would hand over a new
 * window object, and so on).
 */
export const LiveSessionWindow = memo(function LiveSessionWindow(props: LiveSessionWindowProps) {
  return (
    <QueryProvider>
      <Driver {...props} />
    </QueryProvider>
  );
});
