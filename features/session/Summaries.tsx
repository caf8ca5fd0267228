// Above the timeline: the commitment outcome (prominent), the handoff's offers
// at a glance, or the task's progress and terminal report. All values come
// from the SessionView projection. Shared by the server-rendered first view
// and the live view (no hooks, no "use client").

import clsx from "clsx";
import Link from "next/link";
import type { SessionView } from "@/lib/macp/projections/session";
import { sessionHref } from "@/lib/views/route-params";
import { Badge } from "@/components/ui/Badge";
import { Icon } from "@/components/ui/Icon";
import { ProgressBar } from "@/components/ui/ProgressBar";
import { Timestamp } from "@/components/ui/Time";
import type { ReactNode } from "react";
import { plainName, type NameOf, type PayloadBlob } from "@/lib/views/event-details";
import { clipLine, clipParagraph } from "@/lib/views/clip";
import type { OmittedRecords } from "@/lib/views/session-stream-state";

export function CommitmentBanner({
  view,
  sessionId,
  sequenceOf,
  nameOf = plainName,
}: {
  view: SessionView;
  sessionId: string;
  sequenceOf: (messageId: string) => number | undefined;
  nameOf?: NameOf;
}) {
  const c = view.commitment;
  if (!c) return null;
  const seq = c.sequence ?? sequenceOf(c.messageId);
  return (
    <section
      aria-labelledby="commitment-title"
      className={clsx(
        "rounded-lg border-2 p-4",
        c.outcomePositive
          ? "border-emerald-600 bg-emerald-50 text-emerald-950 dark:border-emerald-500 dark:bg-emerald-950 dark:text-emerald-50"
          : "border-red-600 bg-red-50 text-red-950 dark:border-red-500 dark:bg-red-950 dark:text-red-50",
      )}
      data-testid="commitment"
      data-outcome={c.outcomePositive ? "positive" : "negative"}
    >
      <h2 id="commitment-title" className="flex flex-wrap items-center gap-2 text-lg font-semibold">
        <Icon name={c.outcomePositive ? "check-circle" : "x"} className="h-5 w-5" />
        Committed — {c.outcomePositive ? "positive" : "negative"} outcome
        <span className="font-mono text-base">{c.action}</span>
      </h2>
      {c.reason ? <p className="mt-1 text-base">{clipParagraph(c.reason)}</p> : null}
      <p className="mt-2 flex flex-wrap gap-x-4 gap-y-1 text-sm">
        <span>
          By <strong title={c.sender}>{c.sender ? nameOf(c.sender) : "—"}</strong>
        </span>
        {view.handoff && c.outcomePositive && view.currentOwner ? (
          <span>
            Current owner: <strong title={view.currentOwner}>{nameOf(view.currentOwner)}</strong>
          </span>
        ) : null}
        <span>Authority scope: {c.authorityScope}</span>
        <Timestamp ms={c.timestampMs} />
        {seq !== undefined ? (
          // The same page at another event: nothing to prefetch (each prefetch is a server render).
          <Link href={sessionHref(sessionId, seq)} scroll={false} prefetch={false} className="underline">
            Event #{seq}
          </Link>
        ) : null}
      </p>
    </section>
  );
}

const OFFER_STATUS = {
  offered: { label: "Offered", tone: "info", icon: "send" },
  context_sent: { label: "Context sent", tone: "info", icon: "document" },
  accepted: { label: "Accepted", tone: "success", icon: "check" },
  declined: { label: "Declined", tone: "warning", icon: "x" },
} as const;

export function HandoffSummary({
  view,
  sessionId,
  sequenceOf,
  nameOf = plainName,
  omitted,
}: {
  view: SessionView;
  sessionId: string;
  sequenceOf: (messageId: string) => number | undefined;
  nameOf?: NameOf;
  /** Records a handed-over window left out of the view's lists (counted here all the same). */
  omitted?: OmittedRecords | undefined;
}) {
  const h = view.handoff;
  if (!h) return null;
  return (
    <section aria-labelledby="offers-title" className="rounded-lg border border-slate-200 p-3 dark:border-slate-800">
      <h2 id="offers-title" className="text-sm font-semibold">
        Offers {h.offers.length > 0 ? `(${h.offers.length})` : ""}
      </h2>
      {h.offers.length === 0 ? (
        <p className="mt-1 text-sm text-slate-700 dark:text-slate-300">No offer yet.</p>
      ) : (
        <ol className="mt-2 space-y-1.5">
          {h.offers.map((o, i) => {
            const s = OFFER_STATUS[o.status];
            const seq = sequenceOf(o.offerMessageId);
            const left = omitted?.contexts[o.handoffId];
            const late = o.contexts.filter((c) => c.late).length + (left?.late ?? 0);
            const contexts = o.contexts.length + (left?.count ?? 0);
            return (
              <li key={o.handoffId} className="flex flex-wrap items-center gap-x-2 gap-y-1 text-sm">
                <span className="tabular-nums text-slate-600 dark:text-slate-400">{i + 1}.</span>
                {seq !== undefined ? (
                  <Link
                    href={sessionHref(sessionId, seq)}
                    scroll={false}
                    prefetch={false}
                    className="text-xs text-blue-800 underline dark:text-sky-300"
                    title={`Offer id ${o.handoffId}`}
                  >
                    Offer {i + 1}
                  </Link>
                ) : (
                  <span className="text-xs" title={`Offer id ${o.handoffId}`}>
                    Offer {i + 1}
                  </span>
                )}
                <span>
                  <span aria-hidden="true">→ </span>
                  <span className="sr-only">to </span>
                  <strong title={o.target}>{nameOf(o.target)}</strong>
                </span>
                <Badge info={{ ...s, hint: `Offer ${i + 1}: ${s.label}` }} kind="Offer status" />
                <span className="text-xs text-slate-700 dark:text-slate-300">
                  {contexts} context{contexts === 1 ? "" : "s"}
                  {late > 0 ? `, ${late} late` : ""}
                </span>
                {o.responseReason ? <span className="text-xs text-slate-700 italic dark:text-slate-300">“{o.responseReason}”</span> : null}
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}

export function TaskSummary({
  view,
  renderOutput,
  nameOf = plainName,
  omitted,
}: {
  view: SessionView;
  nameOf?: NameOf;
  /** Records a handed-over window left out of the view's lists (counted here all the same). */
  omitted?: OmittedRecords | undefined;
  /** The task's output blob (the live viewer, or the first view's static one). */
  renderOutput: (blob: PayloadBlob) => ReactNode;
}) {
  const t = view.task?.task;
  if (!view.task) return null;
  if (!t) {
    return (
      <section className="rounded-lg border border-slate-200 p-3 text-sm dark:border-slate-800" aria-label="Task">
        No task requested yet.
      </section>
    );
  }
  const report = t.terminalReport;
  const tone = report?.kind === "fail" ? "danger" : report?.kind === "complete" ? "success" : "progress";
  return (
    <section
      aria-labelledby="task-title"
      className="space-y-3 rounded-lg border border-slate-200 p-3 dark:border-slate-800"
      data-testid="task-summary"
    >
      <div className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        <h2 id="task-title" className="text-base font-semibold">
          {clipLine(t.title || t.taskId)}
        </h2>
        <span className="font-mono text-xs text-slate-700 dark:text-slate-300">{t.taskId}</span>
        <span className="text-sm text-slate-700 dark:text-slate-300">
          Assignee:{" "}
          <strong>
            {t.activeAssignee !== undefined
              ? nameOf(t.activeAssignee)
              : t.requestedAssignee
                ? nameOf(t.requestedAssignee)
                : "any participant"}
          </strong>
          {t.activeAssignee !== undefined || t.terminalReport ? "" : t.status === "rejected" ? " (turned it down)" : " (not accepted yet)"}
        </span>
      </div>
      <ProgressBar value={t.latestProgress} label="Task progress" tone={tone} />
      <p className="text-xs text-slate-700 dark:text-slate-300">
        {t.updates.length + (omitted?.updates ?? 0)} update{t.updates.length + (omitted?.updates ?? 0) === 1 ? "" : "s"}
        {t.updates.length > 0 && t.updates[t.updates.length - 1]?.message ? ` · latest: “${t.updates[t.updates.length - 1]?.message}”` : ""}
      </p>
      {t.instructions ? <p className="text-sm whitespace-pre-wrap">{clipParagraph(t.instructions)}</p> : null}
      {t.rejections.length > 0 ? (
        <ul className="space-y-0.5 text-sm">
          {t.rejections.map((r) => (
            <li key={r.messageId} className="text-amber-900 dark:text-amber-200">
              Turned down by <strong title={r.assignee}>{nameOf(r.assignee)}</strong>
              {r.reason ? `: ${clipParagraph(r.reason)}` : ""}
            </li>
          ))}
        </ul>
      ) : null}
      {report ? (
        <div
          className={clsx(
            "rounded-md border p-3",
            report.kind === "complete" ? "border-emerald-300 dark:border-emerald-800" : "border-red-300 dark:border-red-800",
          )}
          data-testid="task-report"
        >
          <p className="flex flex-wrap items-center gap-2 text-sm font-semibold">
            <Icon name={report.kind === "complete" ? "check-circle" : "alert"} />
            {report.kind === "complete" ? "Completed" : "Failed"} by {report.assignee ? nameOf(report.assignee) : "the assignee"}
            <Timestamp ms={report.timestampMs} className="font-normal text-slate-700 dark:text-slate-300" />
          </p>
          {report.kind === "complete" ? (
            <>
              {report.summary ? <p className="mt-1 text-sm">{clipParagraph(report.summary)}</p> : null}
              {report.output.byteLength > 0 ? (
                <div className="mt-2">{renderOutput({ label: "Output", contentType: "", bytes: report.output, stem: "task-output" })}</div>
              ) : (
                <p className="mt-1 text-xs text-slate-700 dark:text-slate-300">No output attached.</p>
              )}
            </>
          ) : (
            <dl className="mt-1 grid grid-cols-[max-content_1fr] gap-x-3 gap-y-0.5 text-sm">
              <dt className="text-slate-600 dark:text-slate-400">Error code</dt>
              <dd className="font-mono">{report.errorCode || "—"}</dd>
              <dt className="text-slate-600 dark:text-slate-400">Reason</dt>
              <dd>{report.reason ? clipParagraph(report.reason) : "—"}</dd>
              <dt className="text-slate-600 dark:text-slate-400">Retryable</dt>
              <dd>{report.retryable ? "Yes" : "No"}</dd>
            </dl>
          )}
        </div>
      ) : null}
    </section>
  );
}

/** Everything above the timeline: the outcome, then the offers or the task. */
export function SessionSummaries({
  view,
  sessionId,
  sequenceOf,
  renderOutput,
  nameOf = plainName,
  omitted,
}: {
  view: SessionView;
  sessionId: string;
  sequenceOf: (messageId: string) => number | undefined;
  renderOutput: (blob: PayloadBlob) => ReactNode;
  /** Display names (the live view's directory); ids without their prefix otherwise. */
  nameOf?: NameOf;
  /** Records a handed-over window left out of the view's lists. */
  omitted?: OmittedRecords | undefined;
}) {
  return (
    <>
      <CommitmentBanner view={view} sessionId={sessionId} sequenceOf={sequenceOf} nameOf={nameOf} />
      <div className="grid gap-4">
        <HandoffSummary view={view} sessionId={sessionId} sequenceOf={sequenceOf} nameOf={nameOf} omitted={omitted} />
        <TaskSummary view={view} renderOutput={renderOutput} nameOf={nameOf} omitted={omitted} />
      </div>
    </>
  );
}
