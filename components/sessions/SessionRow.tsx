"use client";
// One session in the list: a grid row on wide screens, a card below lg.
// Labels are visible on cards and read by screen readers on the grid.

import clsx from "clsx";
import { memo, type ReactNode } from "react";
import type { SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { TASK_MODE } from "@/lib/macp/constants";
import { modeLabel } from "@/lib/client/format";
import { isTerminalSessionState, SESSION_STATE, stateBadge } from "@/lib/client/labels";
import { Badge, PhaseBadge, StateBadge } from "@/components/Badge";
import { fileFromLabel, fileRowHref, fileRowPill, fileToLabel } from "@/lib/client/file-pill";
import { FastLink } from "@/components/FastLink";
import { Icon } from "@/components/Icon";
import { CompactTime, RelativeTime, TtlCountdown } from "@/components/Time";
import { clipLine } from "@/lib/client/clip";

export const LIST_GRID =
  "lg:grid lg:grid-cols-[5rem_6.5rem_10.5rem_minmax(10rem,2fr)_minmax(6rem,1fr)_minmax(6rem,1fr)_minmax(6rem,1fr)_minmax(6rem,1fr)_5.5rem_5.5rem_5.5rem] lg:items-center lg:gap-x-3";

function Cell({
  label,
  children,
  className,
  hideLabel,
}: {
  label: string;
  children: ReactNode;
  className?: string;
  /** Keep the label for screen readers only, on cards too. */
  hideLabel?: boolean;
}) {
  return (
    <span className={clsx("min-w-0", className)}>
      <span
        className={clsx(
          "text-[11px] font-medium tracking-wide text-slate-600 uppercase dark:text-slate-400",
          hideLabel ? "sr-only" : "lg:sr-only",
        )}
      >
        {label}:{" "}
      </span>
      {children}
    </span>
  );
}

/** A waiting-on entry: "*" is a v0.1 file offered to anyone. */
function waiterLabel(id: string): string {
  return id === "*" ? "anyone" : clipLine(id);
}

export function sessionIdOf(s: SessionSummary): string {
  return s.metadata?.sessionId ?? "";
}

export const SessionRow = memo(function SessionRow({
  summary,
  selected,
  onSelect,
}: {
  summary: SessionSummary;
  selected: boolean;
  onSelect: (id: string) => void;
}) {
  const m = summary.metadata;
  const id = sessionIdOf(summary);
  const state = m?.state;
  const terminal = isTerminalSessionState(state);
  const outcome = summary.outcome === "positive" || summary.outcome === "negative" ? summary.outcome : "";
  // A v0.1 file handoff (not an MACP session): its own pill and page.
  const file = summary.fileHandoff;
  return (
    <FastLink
      href={file ? fileRowHref(file) : `/sessions/${encodeURIComponent(id)}`}
      data-row
      data-row-id={id}
      data-phase={summary.phase}
      tabIndex={selected ? 0 : -1}
      onFocus={() => onSelect(id)}
      onMouseDown={() => onSelect(id)}
      className={clsx(
        "block border-b border-slate-200 px-3 py-2.5 text-sm dark:border-slate-800",
        LIST_GRID,
        selected
          ? "bg-blue-50 dark:bg-slate-800/80"
          : "hover:bg-slate-50 dark:hover:bg-slate-900",
      )}
    >
      <span className="flex flex-wrap items-center gap-x-2 gap-y-1 lg:contents">
        <Cell label="Mode" hideLabel className="order-3 text-xs text-slate-700 lg:order-none lg:text-sm dark:text-slate-300">
          {modeLabel(m?.mode ?? "")}
        </Cell>
        <span className="order-2 lg:order-none">
          {file ? <Badge info={fileRowPill(file)} kind="Status" /> : <StateBadge state={state} />}
        </span>
        <span className="order-1 lg:order-none">
          {file ? null : <PhaseBadge phase={summary.phase} outcome={outcome} />}
        </span>
        <Cell label="Time left" hideLabel className="order-4 ml-auto inline-flex items-center gap-1 text-xs lg:hidden">
          <Icon name="clock" className="h-3.5 w-3.5 text-slate-600 dark:text-slate-400" />
          <TtlCountdown expiresAt={m?.expiresAtUnixMs} {...(terminal ? { terminalLabel: stateBadge(state).label.toLowerCase() } : {})} frozen={state === SESSION_STATE.SUSPENDED} />
        </Cell>
      </span>
      <span className="mt-1 block truncate font-medium text-slate-900 lg:mt-0 dark:text-slate-50" title={clipLine(summary.intent)}>
        <span className="sr-only">Intent: </span>
        {clipLine(summary.intent) || <span className="text-slate-600 italic dark:text-slate-400">No intent</span>}
      </span>
      <span className="mt-1 flex flex-wrap gap-x-3 gap-y-0.5 text-xs text-slate-700 lg:contents lg:text-sm dark:text-slate-300">
        <Cell label="Owner" className="truncate">
          <span title={clipLine(summary.currentOwner)}>{clipLine(file ? fileFromLabel(file) : summary.currentOwner) || "—"}</span>
        </Cell>
        <Cell label={m?.mode === TASK_MODE ? "Assignee" : "Target"} className="truncate">
          <span title={clipLine(summary.currentTarget)}>{clipLine(file ? fileToLabel(file) : summary.currentTarget) || "—"}</span>
        </Cell>
        <Cell label="Waiting on" className="truncate">
          <span title={summary.waitingOn.map(waiterLabel).join(", ")} data-testid="row-waiting-on">
            {summary.waitingOn.length > 0 ? summary.waitingOn.map(waiterLabel).join(", ") : "—"}
          </span>
        </Cell>
        <Cell label="Scope" className="truncate">
          <span title={clipLine(summary.scope)}>{clipLine(summary.scope) || "—"}</span>
        </Cell>
      </span>
      <span className="mt-1 flex flex-wrap gap-x-3 gap-y-0.5 text-xs text-slate-600 lg:contents lg:text-sm dark:text-slate-400">
        <Cell label="Started">
          <CompactTime ms={m?.startedAtUnixMs} />
        </Cell>
        <Cell label="Time left" className="hidden lg:block">
          <TtlCountdown expiresAt={m?.expiresAtUnixMs} {...(terminal ? { terminalLabel: "—" } : {})} frozen={state === SESSION_STATE.SUSPENDED} />
        </Cell>
        <Cell label="Last activity">
          <RelativeTime ms={summary.lastActivityUnixMs} />
        </Cell>
      </span>
    </FastLink>
  );
});
