// /inbox as drawn by the live inbox (InboxScreen.tsx) and by the server's
// first view (InboxPreview.tsx): the title with the inbox stream's badge and
// the notification toggle, the count line, the items. No hooks and no "use
// client" (the badge and the toggle are their own client components).

import type { ReactNode } from "react";

/** The count line while what waits is not known yet (no first view, the live inbox not loaded). */
export const INBOX_LOADING = "Loading what is waiting on you…";

export function InboxFrame({
  badge,
  toggle,
  count,
  rows,
  live,
}: {
  badge: ReactNode;
  toggle: ReactNode;
  /** The line under the title: how many items wait, or why that is not known yet. */
  count: string;
  rows: ReactNode;
  /** The live code (renders nothing). */
  live?: ReactNode;
}) {
  return (
    <div className="mx-auto max-w-3xl space-y-4">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-xl font-semibold tracking-tight sm:text-2xl">Waiting on me</h1>
        {badge}
        <div className="ml-auto">{toggle}</div>
      </div>
      <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="inbox-count">
        {count}
      </p>
      {rows}
      {live}
    </div>
  );
}
