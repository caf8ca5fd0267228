"use client";
// The brief (features/session/brief-model.ts) as the first thing the person asked to act
// sees: who asks what of them, scope, reason, the deadline labelled as what it
// is, the runbooks rendered in place (those of earlier offers marked as such),
// then the actions. On a small screen the action buttons stay at the bottom of
// the screen while the card is in view, so the runbook's start and the
// Accept button share the first screen.

import clsx from "clsx";
import type { ReactNode } from "react";
import type { Brief, BriefRunbook } from "@/features/session/brief-model";
import { formatDuration } from "@/lib/views/format";
import { clipLine, clipParagraph } from "@/lib/views/clip";
import { Icon } from "@/components/ui/Icon";
import { PayloadView } from "@/features/session/PayloadView";

const KIND_LABEL: Record<Brief["kind"], string> = {
  offer: "Offer for you",
  approval: "Your approval",
  "task-request": "Task for you",
  "task-work": "Your task",
};

const STATUS_WORD: Record<BriefRunbook["offerStatus"], string> = {
  offered: "not answered",
  context_sent: "not answered",
  accepted: "accepted",
  declined: "declined",
};

function Deadline({ brief, now }: { brief: Brief; now: number }) {
  const d = brief.deadline;
  if (!d) return null;
  const left = d.at - now;
  const text =
    now === 0
      ? ""
      : left > 0
        ? formatDuration(Math.ceil(left / 1000) * 1000)
        : d.kind === "implicit-accept"
          ? "now (the time to answer is up)"
          : "now";
  const label =
    left > 0 || now === 0
      ? d.label
      : d.kind === "implicit-accept"
        ? "Counts as accepted"
        : d.kind === "task"
          ? "Task was due"
          : "Session expired";
  return (
    <div className="min-w-0" data-testid="brief-deadline" data-deadline-kind={d.kind}>
      <dt className="text-xs font-medium text-slate-600 dark:text-slate-400">Deadline</dt>
      <dd className="mt-0.5 flex items-center gap-1 text-sm">
        <Icon name="clock" className="h-3.5 w-3.5 shrink-0" />
        <span>
          {label}{" "}
          <strong className="tabular-nums" suppressHydrationWarning>
            {text}
          </strong>
          {d.kind === "implicit-accept" ? <span className="text-slate-700 dark:text-slate-300"> (implicit-accept policy)</span> : null}
        </span>
      </dd>
    </div>
  );
}

function RunbookLabel({ r, nameOf }: { r: BriefRunbook; nameOf: (id: string) => string }) {
  if (!r.earlier) return <>Runbook</>;
  return (
    <>
      From an earlier offer (offer {r.offerOrdinal}, to {nameOf(r.offerTarget)}, {STATUS_WORD[r.offerStatus]})
    </>
  );
}

export function BriefCard({
  brief,
  nameOf,
  now,
  actions,
  sticky,
  children,
}: {
  brief: Brief;
  nameOf: (id: string) => string;
  now: number;
  /** The buttons of what the person can do now. */
  actions: ReactNode;
  /** Keep the buttons on screen while the card is in view (no form open). */
  sticky: boolean;
  /** The open form, notices and the like, after the buttons. */
  children?: ReactNode;
}) {
  return (
    <section
      aria-labelledby="brief-title"
      className="rounded-lg border-2 border-blue-600 bg-white dark:border-sky-400 dark:bg-slate-950"
      data-testid="brief"
      data-kind={brief.kind}
    >
      <div className="space-y-3 p-3 sm:p-4">
        <div>
          <p className="text-xs font-semibold tracking-wide text-blue-800 uppercase dark:text-sky-300">{KIND_LABEL[brief.kind]}</p>
          <h2 id="brief-title" className="mt-0.5 text-base font-semibold break-words sm:text-lg" data-testid="brief-headline">
            {clipLine(brief.headline)}
          </h2>
        </div>
        <dl className="grid grid-cols-1 gap-x-6 gap-y-2 sm:grid-cols-3">
          {brief.from !== undefined && brief.to !== undefined ? (
            <div className="min-w-0">
              <dt className="text-xs font-medium text-slate-600 dark:text-slate-400">Handover</dt>
              <dd className="mt-0.5 text-sm" data-testid="brief-from-to">
                {nameOf(brief.from)} <span aria-hidden="true">→</span>
                <span className="sr-only"> to </span> <strong>{nameOf(brief.to)}</strong>
              </dd>
            </div>
          ) : null}
          <div className="min-w-0">
            <dt className="text-xs font-medium text-slate-600 dark:text-slate-400">{brief.kind.startsWith("task") ? "Task" : "Scope"}</dt>
            <dd className="mt-0.5 text-sm font-medium break-words" data-testid="brief-scope">
              {clipLine(brief.scope)}
            </dd>
          </div>
          {brief.reason ? (
            <div className="min-w-0">
              <dt className="text-xs font-medium text-slate-600 dark:text-slate-400">Reason</dt>
              <dd className="mt-0.5 text-sm break-words" data-testid="brief-reason">
                {clipParagraph(brief.reason)}
              </dd>
            </div>
          ) : null}
          <Deadline brief={brief} now={now} />
        </dl>
        {brief.instructions ? (
          <div>
            <h3 className="text-xs font-medium text-slate-600 dark:text-slate-400">Instructions</h3>
            <p className="mt-0.5 text-sm whitespace-pre-wrap" data-testid="brief-instructions">
              {clipParagraph(brief.instructions)}
            </p>
          </div>
        ) : null}
        {brief.kind === "offer" || brief.kind === "approval" ? (
          brief.runbooks.length > 0 ? (
            <div className="space-y-3" data-testid="brief-runbooks">
              {brief.runbooks.map((r) => (
                <div
                  key={r.messageId}
                  className={clsx(
                    "rounded-md border p-2 sm:p-3",
                    r.earlier ? "border-dashed border-amber-500 dark:border-amber-400" : "border-slate-200 dark:border-slate-700",
                  )}
                  data-testid="brief-runbook"
                  data-earlier={r.earlier ? "true" : "false"}
                >
                  <p className="mb-1.5 flex items-center gap-1.5 text-xs font-medium text-slate-700 dark:text-slate-300">
                    <Icon name="document" className="h-3.5 w-3.5 shrink-0" />
                    <RunbookLabel r={r} nameOf={nameOf} />
                  </p>
                  <PayloadView
                    blob={{ label: "Runbook", contentType: r.contentType, bytes: r.bytes, stem: `runbook-${r.sequence ?? r.offerOrdinal}` }}
                  />
                </div>
              ))}
            </div>
          ) : (
            <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="brief-no-runbook">
              No runbook attached.
            </p>
          )
        ) : null}
      </div>
      <div
        className={clsx(
          "border-t border-slate-200 bg-white/95 px-3 py-2 sm:px-4 dark:border-slate-800 dark:bg-slate-950/95",
          sticky && "sticky bottom-0 z-10 rounded-b-lg backdrop-blur",
        )}
        data-testid="brief-actions"
      >
        {actions}
      </div>
      {children ? <div className="space-y-3 px-3 pb-3 sm:px-4 sm:pb-4">{children}</div> : null}
    </section>
  );
}
