// Rows of the session timeline as plain markup: a header per handoff offer
// group, and one card per event (actor, time, summary, reason, scope,
// payloads). No hooks and no "use client": the server renders them in the
// session page's first view; the live timeline (TimelineRows.tsx) wraps them
// with its interactive parts (payload viewers, raw envelope, focus).

import clsx from "clsx";
import type { ReactNode } from "react";
import type { HandoffRecord } from "@/lib/macp/projections/handoff";
import { plainName, type EventDetails, type NameOf, type PayloadBlob } from "@/lib/views/event-details";
import type { Tone } from "@/lib/views/labels";
import { eventAnchorId, sessionHref } from "@/lib/views/route-params";
import type { EventRow, GroupRow } from "@/lib/views/timeline";
import type { LocalRefusal } from "@/lib/client/refusals";
import { Badge } from "@/components/ui/Badge";
import { FastLink } from "@/components/ui/FastLink";
import { Icon } from "@/components/ui/Icon";
import { ProgressBar } from "@/components/ui/ProgressBar";
import { Timestamp } from "@/components/ui/Time";
import { clipLine } from "@/lib/views/clip";
import { formatCount } from "@/lib/views/format";

const STATUS_BADGE: Record<HandoffRecord["status"], { label: string; tone: Tone; icon: "send" | "document" | "check" | "x" }> = {
  offered: { label: "Offered", tone: "info", icon: "send" },
  context_sent: { label: "Context sent", tone: "info", icon: "document" },
  accepted: { label: "Accepted", tone: "success", icon: "check" },
  declined: { label: "Declined", tone: "warning", icon: "x" },
};

const RAIL: Record<Tone, string> = {
  neutral: "border-slate-400 dark:border-slate-500",
  info: "border-blue-500 dark:border-blue-400",
  progress: "border-violet-500 dark:border-violet-400",
  warning: "border-amber-500 dark:border-amber-400",
  success: "border-emerald-600 dark:border-emerald-400",
  danger: "border-red-600 dark:border-red-400",
  muted: "border-slate-300 dark:border-slate-600",
};

const REFUSED_BY: Record<LocalRefusal["source"], string> = {
  runtime: "the runtime refused it; seen by this console",
  console: "the console refused it before sending",
  demo: "the runtime refused the demo player's step",
};

/** A refused attempt: a local annotation between the events, never one of them. */
export function RefusalNoteView({ refusal: r, nameOf = plainName }: { refusal: LocalRefusal; nameOf?: NameOf }) {
  return (
    <div
      className="my-1.5 ml-3 rounded-md border border-dashed border-red-400 bg-red-50/60 px-3 py-2 text-sm dark:border-red-700 dark:bg-red-950/40"
      data-testid="refusal-note"
      data-code={r.code}
      data-source={r.source}
    >
      <p className="flex flex-wrap items-center gap-x-2 gap-y-0.5">
        <Icon name="x" className="h-3.5 w-3.5 text-red-700 dark:text-red-300" />
        <strong className="font-semibold text-red-900 dark:text-red-100">refused: {r.code}</strong>
        <span className="text-red-950 dark:text-red-50">— {clipLine(r.explanation)}</span>
      </p>
      <p className="mt-0.5 text-xs text-slate-700 dark:text-slate-300">
        <span title={r.actor}>{clipLine(nameOf(r.actor))}</span> attempted “{clipLine(r.attempt)}” · <Timestamp ms={r.atMs} /> · local
        annotation ({REFUSED_BY[r.source]}; not in the session’s history)
      </p>
    </div>
  );
}

export function GroupHeaderView({ row, nameOf = plainName }: { row: GroupRow; nameOf?: NameOf }) {
  const o = row.offer;
  const s = STATUS_BADGE[o.status];
  return (
    <div
      className="mt-3 rounded-t-lg border border-b-0 border-slate-200 bg-slate-50 px-3 py-2 dark:border-slate-700 dark:bg-slate-900"
      data-group={o.handoffId}
    >
      <h3 className="flex flex-wrap items-center gap-x-2 gap-y-1 text-sm">
        <span className="font-semibold" title={`Offer id ${o.handoffId}`}>
          Offer {row.ordinal} of {row.total}
        </span>
        <span aria-hidden="true">·</span>
        <span>
          <span title={o.offeredBy}>{o.offeredBy ? clipLine(nameOf(o.offeredBy)) : "initiator"}</span> <span aria-hidden="true">→</span>
          <span className="sr-only"> to </span> <strong title={o.target}>{o.target ? clipLine(nameOf(o.target)) : "—"}</strong>
        </span>
        <Badge info={{ label: s.label, tone: s.tone, icon: s.icon, hint: `Offer status: ${s.label}` }} kind="Offer status" />
      </h3>
      {o.scope ? (
        <p className="mt-0.5 text-xs text-slate-700 dark:text-slate-300">
          Scope: <span className="font-medium">{clipLine(o.scope)}</span>
        </p>
      ) : null}
    </div>
  );
}

export function EventCardView({
  row,
  sessionId,
  details: d,
  focused,
  highlighted,
  onFocus,
  actor,
  renderPayload,
  raw,
}: {
  row: EventRow;
  sessionId: string;
  details: EventDetails;
  /** The row that takes Tab (roving tabindex; live timeline only). */
  focused: boolean;
  highlighted: boolean;
  onFocus?: () => void;
  /** Who sent it (ActorLabel in the live view). */
  actor: ReactNode;
  /** A context (typed) or task blob (untyped) as content. */
  renderPayload: (blob: PayloadBlob, typed: boolean) => ReactNode;
  /** The raw-envelope disclosure, when there is one. */
  raw: ReactNode;
}) {
  const env = row.event.envelope;
  const inGroup = row.groupId !== undefined;
  return (
    <article
      id={eventAnchorId(row.sequence)}
      data-row
      data-sequence={row.sequence}
      data-type={env.messageType}
      // Only the live timeline moves focus between rows; in the first view the
      // rows are not focusable, so a link's #e-N cannot focus a row that is
      // about to be replaced. (A focusable row with its own label: the
      // timeline's roving focus, moved by the arrow keys.)
      // eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex
      tabIndex={onFocus ? (focused ? 0 : -1) : undefined}
      onFocus={onFocus}
      aria-labelledby={`${eventAnchorId(row.sequence)}-title`}
      className={clsx(
        "border-l-4 bg-white px-3 py-2.5 dark:bg-slate-950",
        RAIL[d.tone],
        inGroup
          ? "ml-0 border-r border-r-slate-200 dark:border-r-slate-700"
          : "mt-3 rounded-r-lg border-y border-r border-y-slate-200 border-r-slate-200 dark:border-y-slate-700 dark:border-r-slate-700",
        inGroup && "border-t border-t-slate-100 dark:border-t-slate-800",
        row.groupEnd && "rounded-br-lg border-b border-b-slate-200 dark:border-b-slate-700",
        highlighted && "baton-flash",
      )}
    >
      <header className="flex flex-wrap items-center gap-x-2 gap-y-1">
        <Badge info={{ label: d.title, tone: d.tone, icon: d.icon, hint: env.messageType }} />
        <h4
          id={`${eventAnchorId(row.sequence)}-title`}
          className="min-w-0 text-sm font-medium break-words text-slate-900 dark:text-slate-50"
        >
          {d.summary}
        </h4>
        {row.late ? (
          <Badge
            info={{ label: "Late context", tone: "warning", icon: "clock", hint: "Sent after the offer was answered; documentation only" }}
            className="uppercase"
          />
        ) : null}
        {highlighted ? (
          <span className="rounded bg-yellow-200 px-1.5 text-xs font-semibold text-yellow-950 dark:bg-yellow-700 dark:text-yellow-50">
            Linked
          </span>
        ) : null}
        <span className="ml-auto flex items-center gap-2 text-xs text-slate-600 dark:text-slate-400">
          {actor}
          <Timestamp ms={env.timestampUnixMs > 0n ? env.timestampUnixMs : row.event.receivedAtMs} />
          <FastLink
            href={sessionHref(sessionId, row.sequence)}
            shallow
            className="inline-flex items-center gap-0.5 rounded px-1 font-mono text-slate-700 hover:bg-slate-100 dark:text-slate-300 dark:hover:bg-slate-800"
            aria-label={`Link to event #${row.sequence}`}
            title="Link to this event"
          >
            <Icon name="link" className="h-3 w-3" />#{row.sequence}
          </FastLink>
        </span>
      </header>
      {d.reason ? (
        <p className="mt-1 text-sm text-slate-800 dark:text-slate-200">
          <span className="font-medium text-slate-600 dark:text-slate-400">Reason: </span>
          {d.reason}
        </p>
      ) : null}
      {d.fields.length > 0 ? (
        <dl className="mt-1 flex flex-wrap gap-x-4 gap-y-0.5 text-xs">
          {d.fields.map((f) => (
            <div key={f.label} className="flex min-w-0 gap-1">
              <dt className="text-slate-600 dark:text-slate-400">{f.label}:</dt>
              <dd className={clsx("min-w-0 break-words text-slate-900 dark:text-slate-100", f.mono && "font-mono")}>{f.value}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      {d.progress !== undefined ? (
        <div className="mt-2 max-w-md">
          <ProgressBar value={d.progress} label={`Progress reported in event ${row.sequence}`} size="sm" />
        </div>
      ) : null}
      {d.outcome ? (
        <p
          className={clsx(
            "mt-2 inline-flex items-center gap-1.5 rounded-md px-2 py-1 text-sm font-semibold",
            d.outcome.positive
              ? "bg-emerald-50 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-100"
              : "bg-red-50 text-red-900 dark:bg-red-950 dark:text-red-100",
          )}
        >
          <Icon name={d.outcome.positive ? "check-circle" : "x"} />
          {d.outcome.positive ? "Positive outcome" : "Negative outcome"}: <span className="font-mono">{d.outcome.action}</span>
        </p>
      ) : null}
      {d.context ? (
        <div className="mt-2 rounded-md border border-slate-200 p-2 dark:border-slate-700">{renderPayload(d.context, true)}</div>
      ) : null}
      {d.blobs.map((b) => (
        <div key={b.label} className="mt-2">
          {renderPayload(b, false)}
        </div>
      ))}
      {d.decodeError ? <p className="mt-1 text-xs text-amber-900 dark:text-amber-200">{d.decodeError}</p> : null}
      {raw}
    </article>
  );
}

/** The bar above the timeline: title, event count, and the live view's tools (or a note). */
export function TimelineBar({
  count,
  loading = false,
  sticky,
  children,
}: {
  count: number;
  /** History is still being replayed. */
  loading?: boolean;
  /** Stays under the site header while scrolling (the live timeline). */
  sticky: boolean;
  children: ReactNode;
}) {
  return (
    <div
      className={clsx(
        "-mx-3 flex flex-wrap items-center gap-2 border-b border-slate-200 px-3 py-2 sm:-mx-5 sm:px-5 dark:border-slate-800",
        sticky && "sticky top-14 z-10 bg-white/95 backdrop-blur dark:bg-slate-950/95",
      )}
    >
      <h2 id="timeline-title" className="text-base font-semibold">
        Timeline
      </h2>
      <span className="text-sm text-slate-700 dark:text-slate-300">
        {formatCount(count)} event{count === 1 ? "" : "s"}
        {loading && count > 0 ? " · loading history…" : ""}
      </span>
      {children}
    </div>
  );
}
