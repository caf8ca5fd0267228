// What the session list shows instead of rows, and the notes above them: the
// first page could not be read (refused, or the server is unreachable, with
// a retry), loading, no sessions yet (or none indexed yet), none matching the
// filters (with "Clear filters"); the change stream reconnecting or ended,
// pages that failed, and updates paused. No hooks and no "use client": the
// server's first view (ListPreview.tsx) draws them too.

import clsx from "clsx";
import type { ReactNode } from "react";
import type { ListError, SessionWindow } from "@/features/sessions-list/list-first-view";
import { Icon } from "@/components/ui/Icon";
import { formatCount } from "@/lib/views/format";

function Panel({ children, tone = "neutral" }: { children: ReactNode; tone?: "neutral" | "warning" }) {
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

export function ListNotLoaded({ error, reconnecting, onRetry }: { error: ListError; reconnecting: boolean; onRetry: () => void }) {
  const { refused, reason } = error;
  return (
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
            {reason}. {reconnecting ? "Retrying automatically. " : ""}Check that <code className="font-mono">npm start</code> is running and
            that this page was opened from it.
          </p>
        </>
      )}
      <button
        type="button"
        onClick={onRetry}
        className="mt-4 inline-flex items-center gap-1.5 rounded-md bg-amber-800 px-3 py-1.5 text-sm font-medium text-white hover:bg-amber-900 dark:bg-amber-300 dark:text-amber-950 dark:hover:bg-amber-200"
      >
        <Icon name="refresh" /> Retry now
      </button>
    </Panel>
  );
}

export function ListLoading() {
  return (
    <div aria-busy="true" className="space-y-2" data-testid="list-loading">
      <p className="text-sm text-slate-700 dark:text-slate-300">Loading sessions…</p>
      {Array.from({ length: 6 }, (_, i) => (
        <div key={i} className="h-11 animate-pulse rounded bg-slate-100 motion-reduce:animate-none dark:bg-slate-900" />
      ))}
    </div>
  );
}

export function ListEmpty({ backfilling }: { backfilling: boolean }) {
  return (
    <Panel>
      {backfilling ? (
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
}

export function ListNoMatch({ allCount, onClear }: { allCount: number | undefined; onClear?: (() => void) | undefined }) {
  return (
    <Panel>
      <p className="text-base font-semibold" data-testid="no-match">
        No sessions match these filters
      </p>
      {allCount !== undefined && allCount > 0 ? (
        <p className="mt-2 text-sm">{formatCount(allCount)} sessions are hidden by the current filters.</p>
      ) : null}
      <button
        type="button"
        className="mt-4 rounded-md px-3 py-1.5 text-sm font-medium text-blue-800 ring-1 ring-blue-300 ring-inset hover:bg-blue-50 dark:text-sky-300 dark:ring-sky-800 dark:hover:bg-slate-900"
        onClick={onClear}
      >
        Clear filters
      </button>
    </Panel>
  );
}

const NOTE =
  "flex flex-wrap items-center gap-3 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100";

/** Above the rows: once the list is loaded, the change stream's trouble and pages that failed; updates paused. */
export function ListNotes({ win, loaded, now, paused }: { win: SessionWindow; loaded: boolean; now: number; paused: boolean }) {
  const { connection } = win;
  return (
    <>
      {loaded && connection.state === "reconnecting" ? (
        <div className={NOTE} role="note">
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
        <div className={NOTE} role="note">
          <span>Live updates stopped{connection.error ? `: ${connection.error}` : ""}. The list shows what was read last.</span>
          <button type="button" onClick={win.retry} className="font-medium underline">
            Retry now
          </button>
        </div>
      ) : null}
      {loaded && win.failedPages > 0 ? (
        <div className={NOTE} role="alert" data-testid="page-error">
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
    </>
  );
}
