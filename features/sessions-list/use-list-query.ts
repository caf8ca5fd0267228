"use client";
// The list's filters live in the URL. Reading goes through useSearchParams
// (so back/forward re-render); writing uses history.pushState/replaceState,
// which Next.js folds into its router without a server round trip.

import { useSearchParams } from "next/navigation";
import { useCallback, useMemo } from "react";
import { parseListQuery, serializeListQuery, type ListQuery } from "@/lib/views/list-query";

export function useListQuery(): [ListQuery, (patch: Partial<ListQuery>, opts?: { replace?: boolean }) => void] {
  const params = useSearchParams();
  const key = params.toString();
  const query = useMemo(() => parseListQuery(new URLSearchParams(key)), [key]);
  const setQuery = useCallback((patch: Partial<ListQuery>, opts: { replace?: boolean } = {}) => {
    // Read the live URL, not a render-time snapshot, so rapid edits compose.
    const current = parseListQuery(new URLSearchParams(window.location.search));
    const next: ListQuery = { ...current, ...patch };
    for (const k of ["mode", "state", "phase"] as const) if (next[k] === undefined) delete next[k];
    const search = serializeListQuery(next);
    const url = `${window.location.pathname}${search}${window.location.hash}`;
    if (url === `${window.location.pathname}${window.location.search}${window.location.hash}`) return;
    if (opts.replace) window.history.replaceState(null, "", url);
    else window.history.pushState(null, "", url);
  }, []);
  return [query, setQuery];
}
