"use client";
// /sessions/[id]/report: the handover report (features/session/report.ts) as a
// page. It folds the session's stream as the session page does (same query
// cache entry, so coming from the session page nothing is read twice), waits
// until the history has caught up, and renders the report's Markdown with the
// console's safe renderer. "Print" opens the browser's print dialog; print
// CSS (app/globals.css, `print:` variants) leaves only the report.

import Link from "next/link";
import { useEffect, useMemo } from "react";
import { actorKindOf, nameResolver } from "@/lib/views/directory";
import { downloadBlob } from "@/features/session/download";
import { QueryProvider } from "@/lib/client/query-provider";
import { handoverReport } from "@/features/session/report";
import { isWindowed } from "@/lib/views/session-stream-state";
import { useDirectory } from "@/lib/client/use-console-data";
import { useSessionStream } from "@/features/session/use-session-stream";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { MarkdownView } from "@/features/session/Markdown";
import { formatCount } from "@/lib/views/format";

/** Rows of "Every step" on the page; the Markdown download keeps every one. */
export const REPORT_PAGE_MAX_STEPS = 500;

const button =
  "inline-flex h-9 items-center gap-1.5 rounded-md px-3 text-sm font-medium text-slate-800 ring-1 ring-slate-300 ring-inset hover:bg-slate-100 disabled:opacity-50 dark:text-slate-100 dark:ring-slate-600 dark:hover:bg-slate-800";

function Report({ sessionId }: { sessionId: string }) {
  const { stream, connection, loadFullHistory } = useSessionStream(sessionId);
  const { view, events, caughtUp } = stream;
  // Coming from the session page the cache may hold only its first view's
  // window: the report needs every event, so the earlier ones are read first.
  const windowed = isWindowed(stream);
  useEffect(() => {
    if (windowed) {
      loadFullHistory().catch(() => {
        /* the stream's error shows below */
      });
    }
  }, [windowed, loadFullHistory]);
  const { me } = useWhoAmI();
  const { directory, loaded } = useDirectory(Boolean(me));
  const nameOf = nameResolver(directory);
  const kindOf = (id: string) => actorKindOf(directory, id);
  // Names come from the directory: wait for it (when signed in) so the
  // printed report never says "human:alice" where it could say "Alice".
  const ready = caughtUp && !windowed && (!me || loaded);
  const text = useMemo(
    () => (ready ? handoverReport({ sessionId, view, events, nameOf, kindOf, maxSteps: REPORT_PAGE_MAX_STEPS }) : ""),
    // nameOf/kindOf are rebuilt per render from `directory`.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [ready, sessionId, view, events, directory],
  );

  useEffect(() => {
    document.title = `Handover report: ${view.intent || sessionId} · Baton`;
  }, [view.intent, sessionId]);

  const failed = connection.state === "ended" && connection.fatal && events.length === 0;
  const download = (): void => {
    downloadBlob(handoverReport({ sessionId, view, events, nameOf, kindOf }), `handover-${sessionId}.md`, "text/markdown");
  };

  return (
    <article className="mx-auto max-w-3xl space-y-4" aria-labelledby="report-title" data-testid="handover-report">
      <div className="flex flex-wrap items-center gap-2 print:hidden">
        <Link href={`/sessions/${encodeURIComponent(sessionId)}`} className="text-sm text-blue-800 hover:underline dark:text-sky-300">
          ← Back to the session
        </Link>
        <span className="flex-1" />
        <button type="button" className={button} onClick={download} disabled={!ready}>
          Download Markdown
        </button>
        <button type="button" className={button} onClick={() => window.print()} disabled={!ready} data-testid="print-report">
          Print…
        </button>
      </div>
      <h1 id="report-title" className="sr-only">
        Handover report
      </h1>
      {failed ? (
        <div
          role="alert"
          className="rounded-lg border border-amber-300 bg-amber-50 p-4 text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
        >
          <p className="font-semibold">{connection.error === "Not found" ? "Session not found" : "Can’t read this session"}</p>
          <p className="mt-1 text-sm">{connection.error}</p>
        </div>
      ) : !ready ? (
        <p className="text-sm text-slate-700 dark:text-slate-300" aria-busy="true" role="status">
          Reading the session’s history… {events.length > 0 ? `${formatCount(events.length)} events so far` : ""}
        </p>
      ) : (
        <div className="rounded-lg border border-slate-200 bg-white p-5 sm:p-8 dark:border-slate-800 dark:bg-slate-950 print:border-0 print:p-0">
          <MarkdownView text={text} />
        </div>
      )}
    </article>
  );
}

export function ReportScreen({ sessionId }: { sessionId: string }) {
  return (
    <QueryProvider>
      <Report sessionId={sessionId} />
    </QueryProvider>
  );
}
