"use client";
// Live / connecting / reconnecting / ended, with a glyph and words (never
// colour alone). The header shows the page's most recent stream.

import clsx from "clsx";
import { useConnections, type ConnectionInfo } from "@/lib/client/connection";
import { useNowWhen } from "@/lib/client/use-now";

const LABEL: Record<ConnectionInfo["state"], string> = {
  connecting: "Connecting",
  live: "Live",
  reconnecting: "Reconnecting",
  ended: "Ended",
};

const STYLE: Record<ConnectionInfo["state"], string> = {
  connecting: "text-slate-700 ring-slate-300 bg-slate-50 dark:text-slate-200 dark:ring-slate-600 dark:bg-slate-900",
  live: "text-emerald-800 ring-emerald-300 bg-emerald-50 dark:text-emerald-200 dark:ring-emerald-800 dark:bg-emerald-950",
  reconnecting: "text-amber-900 ring-amber-300 bg-amber-50 dark:text-amber-200 dark:ring-amber-800 dark:bg-amber-950",
  ended: "text-slate-700 ring-slate-300 bg-slate-100 dark:text-slate-300 dark:ring-slate-600 dark:bg-slate-800",
};

/** Live: a dot that pings three times as it comes live (app/globals.css: never for ever); connecting: a spinner. */
function Glyph({ state }: { state: ConnectionInfo["state"] }) {
  if (state === "live") {
    return (
      <span className="relative flex h-2.5 w-2.5" aria-hidden="true">
        <span className="absolute inline-flex h-full w-full rounded-full bg-emerald-500 opacity-60 baton-live-ping" />
        <span className="relative inline-flex h-2.5 w-2.5 rounded-full bg-emerald-600 dark:bg-emerald-400" />
      </span>
    );
  }
  if (state === "reconnecting" || state === "connecting") {
    return (
      <span className="h-2.5 w-2.5 rounded-full border-2 border-current border-t-transparent motion-safe:animate-spin" aria-hidden="true" />
    );
  }
  return <span className="h-2.5 w-2.5 rounded-sm border-2 border-current" aria-hidden="true" />;
}

export function ConnectionBadge({ info, label, className }: { info: ConnectionInfo; label?: string; className?: string }) {
  // Ticks only while there is a countdown to show.
  const now = useNowWhen(info.state === "reconnecting" && info.retryAt !== undefined);
  const retryIn = info.state === "reconnecting" && info.retryAt && now ? Math.max(0, Math.ceil((info.retryAt - now) / 1000)) : undefined;
  const text = info.state === "reconnecting" && retryIn !== undefined && retryIn > 0 ? `Reconnecting in ${retryIn}s` : LABEL[info.state];
  return (
    <span
      className={clsx(
        "inline-flex items-center gap-1.5 rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset",
        STYLE[info.state],
        className,
      )}
      data-connection={info.state}
      // The reason stays in the tooltip: a pill is no place for a sentence.
      title={
        info.error
          ? `Last error: ${info.error}`
          : info.state === "ended"
            ? "Stream closed: the session is over, no more events will arrive"
            : undefined
      }
    >
      <Glyph state={info.state} />
      {label ? <span className="sr-only">{label} connection: </span> : null}
      <span>{text}</span>
    </span>
  );
}

/** Header indicator: the most recently started stream on this page. */
export function HeaderConnectionIndicator() {
  const connections = useConnections();
  const primary = connections[0];
  // No stream on this page (yet): nothing to say; a page with its own badge shows it there.
  if (!primary) return null;
  return <ConnectionBadge info={primary} label={primary.label} />;
}
