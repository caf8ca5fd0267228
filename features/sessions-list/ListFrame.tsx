// The session list's page as drawn by the live list (SessionListScreen.tsx)
// and by the server's first view (ListPreview.tsx): the title with the count
// line, the catalog's indexing status, the filter bar, the notes, the rows
// (or what shows instead) and the keyboard hint. No hooks and no "use client".

import clsx from "clsx";
import type { ReactNode } from "react";
import { Icon } from "@/components/ui/Icon";

/**
 * The id of the element after the server's first view. The first view holds
 * the browser's first paint until the parser has reached it (ListPreview's
 * `<link rel="expect" blocking="render">`), so the rows are painted at once,
 * not a few at a time while the framework's scripts run in between.
 */
export const FIRST_VIEW_END_ID = "list-first-view-end";

export function ListFrame({
  count,
  newSession,
  backfill,
  filters,
  notes,
  body,
  hint,
  live,
  preview,
}: {
  /** The line beside the title (countLine). */
  count: string;
  /** "New session" and "Hand off…", for people who may start one (the live list only). */
  newSession?: ReactNode;
  /** The catalog still indexing the runtime's history, in words (backfillLine), or null. */
  backfill: string | null;
  filters: ReactNode;
  notes?: ReactNode;
  body: ReactNode;
  /** Show the keyboard hint (rows are shown). */
  hint: boolean;
  /** The live machinery (renders nothing). */
  live?: ReactNode;
  /** Marks the server's first view, whose controls' state the live list takes over. */
  preview?: boolean;
}) {
  return (
    <div className="space-y-4" data-list-preview={preview || undefined}>
      {live}
      <div className="flex flex-wrap items-center gap-x-4 gap-y-2">
        <h1 className="text-xl font-semibold tracking-tight">Sessions</h1>
        <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="list-count">
          {count}
        </p>
        {newSession}
      </div>
      <p role="status" className={clsx("text-sm", backfill ? "text-blue-900 dark:text-sky-200" : "sr-only")} data-testid="catalog-status">
        {backfill ? (
          <>
            <Icon name="refresh" className="mr-1.5 inline h-4 w-4 align-[-3px] motion-safe:animate-spin" />
            {backfill}. The list shows what is indexed so far.
          </>
        ) : null}
      </p>
      {filters}
      {notes}
      {body}
      {hint ? (
        <p className="text-xs text-slate-600 dark:text-slate-400">
          Keyboard: <kbd className="font-mono">j</kbd>/<kbd className="font-mono">k</kbd> or arrows to move,{" "}
          <kbd className="font-mono">Enter</kbd> to open, <kbd className="font-mono">/</kbd> to search.
        </p>
      ) : null}
      {preview ? <span id={FIRST_VIEW_END_ID} hidden /> : null}
    </div>
  );
}
