// One session in the list: a grid row on wide screens, a card below lg.
// Labels are visible on cards and read by screen readers on the grid. Each
// fact once: one status pill (lifecycle and phase merged), who hands over to
// whom (or who asked whom for a task) by name, who must act now, and how old
// the session is. A session whose offer or approval has waited past the
// threshold is marked stuck with an icon and words, not colour alone.
//
// No hooks and no "use client": the server draws the list's first view with
// it (ListPreview.tsx, no JavaScript before `load` but its clock islands) and
// the live list (SessionRow.tsx) with the same markup.

import clsx from "clsx";
import type { ReactNode } from "react";
import type { SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { TASK_MODE } from "@/lib/macp/constants";
import { stuckLabel } from "@/lib/macp/projections/status";
import { modeLabel } from "@/lib/views/format";
import { EMPTY_DIRECTORY, type Directory } from "@/lib/views/directory";
import { isTerminalSessionState, SESSION_STATE, statusBadge, summaryStatusFacts } from "@/lib/views/labels";
import { Badge } from "@/components/ui/Badge";
import { fileRowHref, fileRowPill, fileToLabel } from "@/lib/views/file-pill";
import { FastLink } from "@/components/ui/FastLink";
import { Icon } from "@/components/ui/Icon";
import { ActorName } from "@/features/session/ActorLabelView";
import { RelativeTime, TtlCountdown } from "@/components/ui/Time";
import { clipLine } from "@/lib/views/clip";
import { RowAge } from "@/features/sessions-list/RowAge";

export const LIST_GRID =
  "lg:grid lg:grid-cols-[10.5rem_minmax(10rem,2fr)_minmax(6rem,1fr)_minmax(12rem,1.6fr)_minmax(7rem,1fr)_4.5rem_5.5rem_5.5rem] lg:items-center lg:gap-x-3";

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
          "text-[11px] font-medium tracking-wide whitespace-nowrap text-slate-600 uppercase dark:text-slate-400",
          hideLabel ? "sr-only" : "lg:sr-only",
        )}
      >
        {label}:{" "}
      </span>
      {children}
    </span>
  );
}

export function sessionIdOf(s: SessionSummary): string {
  return s.metadata?.sessionId ?? "";
}

/** Who hands over to whom (handoff) or who asked whom (task): the two people of a row. */
export function rowPeople(s: SessionSummary): { label: string; from: string; to: string } {
  const task = s.metadata?.mode === TASK_MODE;
  if (task) return { label: "Requester → Assignee", from: s.currentOwner, to: s.currentTarget };
  // The one handing over is who started the handoff (after a commit the current owner is already the target).
  return { label: "From → To", from: s.metadata?.initiator || s.currentOwner, to: s.currentTarget };
}

export function SessionRowView({
  summary,
  selected,
  onSelect,
  directory = EMPTY_DIRECTORY,
  stuckAfterMs,
  stuckMs,
}: {
  summary: SessionSummary;
  selected: boolean;
  /** Selection follows focus and the mouse (the live list; the server's first view has none). */
  onSelect?: ((id: string) => void) | undefined;
  /** Names for people (and agents the directory knows). */
  directory?: Directory;
  /** The stuck threshold (the console's BATON_STUCK_AFTER_MINUTES). */
  stuckAfterMs: number;
  /** How long it has waited past the threshold (stuck), or undefined. */
  stuckMs: number | undefined;
}) {
  const m = summary.metadata;
  const id = sessionIdOf(summary);
  const state = m?.state;
  const terminal = isTerminalSessionState(state);
  const facts = summaryStatusFacts(summary);
  const people = rowPeople(summary);
  const waiting = summary.waitingOn;
  // A v0.1 file handoff (not an MACP session): its own pill and page.
  const file = summary.fileHandoff;
  return (
    <FastLink
      href={file ? fileRowHref(file) : `/sessions/${encodeURIComponent(id)}`}
      data-row
      data-row-id={id}
      data-phase={summary.phase}
      data-stuck={stuckMs !== undefined ? "" : undefined}
      tabIndex={selected ? 0 : -1}
      onFocus={onSelect ? () => onSelect(id) : undefined}
      onMouseDown={onSelect ? () => onSelect(id) : undefined}
      className={clsx(
        "block border-b border-l-4 border-b-slate-200 px-3 py-2.5 text-sm dark:border-b-slate-800",
        stuckMs !== undefined ? "border-l-amber-500 dark:border-l-amber-400" : "border-l-transparent",
        LIST_GRID,
        selected
          ? "bg-blue-50 dark:bg-slate-800/80"
          : stuckMs !== undefined
            ? "bg-amber-50/60 hover:bg-amber-50 dark:bg-amber-950/30 dark:hover:bg-amber-950/50"
            : "hover:bg-slate-50 dark:hover:bg-slate-900",
      )}
    >
      <span className="flex flex-wrap items-center gap-x-2 gap-y-1 lg:flex-col lg:items-start lg:gap-y-0.5">
        {file ? <Badge info={fileRowPill(file)} kind="Status" /> : <Badge info={statusBadge(facts)} kind="Status" />}
        {stuckMs !== undefined ? (
          <span
            className="inline-flex items-center gap-1 text-xs font-semibold text-amber-900 dark:text-amber-200"
            title={`Waiting on an answer or an approval for longer than ${Math.round(stuckAfterMs / 60_000) || "<1"} min`}
            data-testid="row-stuck"
          >
            <Icon name="alert" className="h-3.5 w-3.5 shrink-0" />
            {stuckLabel(stuckMs)}
          </span>
        ) : null}
        {/* On a card, a closed session's state is the pill's to say: no time left to count. */}
        {terminal ? null : (
          <span className="ml-auto inline-flex items-center gap-1 text-xs text-slate-700 lg:hidden dark:text-slate-300">
            <span className="sr-only">Time left: </span>
            <Icon name="clock" className="h-3.5 w-3.5 text-slate-600 dark:text-slate-400" />
            <TtlCountdown expiresAt={m?.expiresAtUnixMs} frozen={state === SESSION_STATE.SUSPENDED} />
          </span>
        )}
      </span>
      <span className="mt-1 flex min-w-0 items-baseline gap-1.5 lg:mt-0">
        <span className="shrink-0 rounded bg-slate-100 px-1 text-[11px] leading-4 font-medium text-slate-700 dark:bg-slate-800 dark:text-slate-300">
          <span className="sr-only">Mode: </span>
          {modeLabel(m?.mode ?? "")}
        </span>
        <span className="truncate font-medium text-slate-900 dark:text-slate-50" title={clipLine(summary.intent)}>
          <span className="sr-only">Intent: </span>
          {clipLine(summary.intent) || <span className="text-slate-600 italic dark:text-slate-400">No intent</span>}
        </span>
      </span>
      <span className="mt-1 flex flex-wrap gap-x-3 gap-y-0.5 text-xs text-slate-700 lg:contents lg:text-sm dark:text-slate-300">
        <Cell label={m?.mode === TASK_MODE ? "Task" : "Scope"} className={clsx("truncate", !summary.scope && "hidden lg:block")}>
          <span title={clipLine(summary.scope)}>{clipLine(summary.scope) || "—"}</span>
        </Cell>
        <Cell label={people.label} className="flex min-w-0 flex-wrap items-center gap-x-1 lg:flex lg:flex-nowrap">
          <span className="inline-flex min-w-0 items-center gap-1" data-testid="row-people">
            <ActorName id={people.from} directory={directory} />
            <span aria-hidden="true" className="shrink-0 text-slate-500 dark:text-slate-400">
              →
            </span>
            <span className="sr-only"> to </span>
            {people.to ? (
              <ActorName id={people.to} directory={directory} />
            ) : (
              <span className="text-slate-600 dark:text-slate-400">{file ? fileToLabel(file) || "—" : "nobody yet"}</span>
            )}
          </span>
        </Cell>
        {/* On a card, nobody to wait on is said by leaving the line out. */}
        <Cell label="Waiting on" className={clsx("min-w-0 items-center gap-1 lg:flex", waiting.length > 0 ? "flex" : "hidden")}>
          <span className="inline-flex min-w-0 items-center gap-x-2" data-testid="row-waiting-on">
            {waiting.length > 0
              ? waiting.map((w) =>
                  // "*": a v0.1 file offered to anyone.
                  w === "*" ? <span key={w}>anyone</span> : <ActorName key={w} id={w} directory={directory} />,
                )
              : "—"}
          </span>
        </Cell>
      </span>
      <span className="mt-1 flex flex-wrap gap-x-3 gap-y-0.5 text-xs text-slate-600 lg:contents lg:text-sm dark:text-slate-400">
        <Cell label="Age">
          <RowAge startedMs={m?.startedAtUnixMs} />
        </Cell>
        <Cell label="Time left" className="hidden lg:block">
          <TtlCountdown
            expiresAt={m?.expiresAtUnixMs}
            {...(terminal ? { terminalLabel: "—" } : {})}
            frozen={state === SESSION_STATE.SUSPENDED}
          />
        </Cell>
        <Cell label="Last activity">
          <RelativeTime ms={summary.lastActivityUnixMs} />
        </Cell>
      </span>
    </FastLink>
  );
}
