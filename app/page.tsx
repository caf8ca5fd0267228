import type { Metadata } from "next";
import { headers } from "next/headers";
import { LiveSessionList } from "@/features/sessions-list/LiveSessionList";
import { ListPreview } from "@/features/sessions-list/ListPreview";
import type { ListFirstView } from "@/features/sessions-list/list-first-view";
import { parseListQuery, toSessionListQuery } from "@/lib/views/list-query";
import { countOf, listQueryKey } from "@/features/sessions-list/session-window";
import { pageData } from "@/lib/server/page-data";
import { DEFAULT_STUCK_AFTER_MS } from "@/lib/macp/projections/status";

export const metadata: Metadata = { title: "Sessions" };

/**
 * Rows read for the first view: what the HTML shows (24) plus what the
 * virtualizer may show on a tall screen before the live list has read its
 * own first page (rows past these show as loading until then).
 */
const FIRST_VIEW_READ = 60;

export default async function SessionsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  // The first view: the first page for the URL's query, read by the console
  // process (same sign-in rule and validation as ListSessionPage). Without it
  // (signed out, the console unavailable) the live list loads at once.
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(await searchParams)) {
    if (typeof v === "string") params.set(k, v);
    else if (Array.isArray(v) && typeof v[0] === "string") params.set(k, v[0]);
  }
  const query = parseListQuery(params);
  const data = pageData();
  const read = data?.sessionListFirstView
    ? await data.sessionListFirstView(await headers(), toSessionListQuery(query), FIRST_VIEW_READ)
    : undefined;
  const first: ListFirstView | undefined =
    read?.kind === "ready"
      ? { key: listQueryKey(query), page: read.page, allCount: countOf(read.allCount), openCount: countOf(read.openCount) }
      : undefined;
  // No Suspense boundary around the list: React streams a boundary whose
  // HTML is larger than its progressive chunk (the rows are) after the shell,
  // behind its fallback, and reveals it at least 300 ms after the shell's
  // first paint (later on a busy main thread); in the shell, the rows are
  // painted with it. The page is rendered per request (it reads the request's
  // headers), so useSearchParams needs no boundary.
  const stuckAfterMs = data?.stuckAfterMs?.() ?? DEFAULT_STUCK_AFTER_MS;
  const names = data?.people ? await data.people(await headers()) : null;
  // The first view is drawn here (ListPreview: no JavaScript of the list's
  // own before `load`); the live list takes over after `load`.
  return (
    <LiveSessionList
      preview={<ListPreview first={first} query={query} stuckAfterMs={stuckAfterMs} names={names} />}
      first={first}
      stuckAfterMs={stuckAfterMs}
      names={names}
    />
  );
}
