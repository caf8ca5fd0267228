"use client";
// The session list's live machinery, loaded after `load` by
// SessionListScreen: the pages read with ListSessionPage through TanStack
// Query and the WatchSessionChanges stream (lib/client/use-session-window.ts),
// with Connect and protobuf-es. It renders nothing: it hands its window to the
// screen, which keeps the same DOM from the server's first view on.
//
// The server's first page seeds the query cache, so the live window starts
// where the first view is, without reading it again; the change stream's
// first notice (the catalog's version now) refreshes it if anything changed
// between the server's read and the stream's start, so no update is lost.

import { useQueryClient } from "@tanstack/react-query";
import { memo, useLayoutEffect, useState } from "react";
import type { ListSessionPageResponse } from "@/lib/gen/baton/v1/console_pb";
import type { ListFirstView, SessionWindow } from "@/lib/client/list-first-view";
import type { ListQuery } from "@/lib/client/list-query";
import { QueryProvider } from "@/lib/client/query-provider";
import { queryKeys } from "@/lib/client/query-keys";
import { listQueryKey, pageQueryKey } from "@/lib/client/session-window";
import { useSessionWindow } from "@/lib/client/use-session-window";

export interface LiveSessionWindowProps {
  query: ListQuery;
  paused: boolean;
  first: ListFirstView | undefined;
  onWindow: (win: SessionWindow) => void;
}

function Driver({ query, paused, first, onWindow }: LiveSessionWindowProps) {
  const qc = useQueryClient();
  // Seed once, before the window's first read, unless the cache already
  // holds a reading at least as new (a client-side navigation back here).
  useState(() => {
    if (!first || first.key !== listQueryKey(query)) return null;
    const key = pageQueryKey(first.key, 0);
    const cached = qc.getQueryData<ListSessionPageResponse>(key);
    if (!cached || cached.version < first.page.version) qc.setQueryData(key, first.page);
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
