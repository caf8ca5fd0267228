"use client";
// The hand-off dialog's footer: what happened (a notice, an interrupted
// attempt, the steps sent so far) in sight next to the buttons whatever the
// form's scroll position; after a partial hand-off, why the form is locked
// with "Open the session" and "Start over"; otherwise "Save as template…" and
// "Step by step"; then Cancel and Hand off / Finish handing off.

import clsx from "clsx";
import Link from "next/link";
import type { HandOffStep } from "@/features/hand-off/hand-off";
import type { HandOffDialogState } from "@/features/hand-off/use-hand-off-dialog";
import { Icon } from "@/components/ui/Icon";
import { Button } from "@/components/ui/forms";

const SENDING: Readonly<Record<HandOffStep, string>> = {
  start: "Starting the session…",
  offer: "Sending the offer…",
  context: "Attaching the runbook…",
  escalate: "Setting up the escalation…",
};

export function HandOffFooter({ s, onClose }: { s: HandOffDialogState; onClose: () => void }) {
  const { handOff, notice, lines, interrupted, locked, template } = s;
  const { state } = handOff;
  return (
    <div className="flex flex-wrap items-center gap-2 border-t border-slate-200 px-4 py-3 dark:border-slate-800">
      {/* What happened stays in sight next to the buttons, whatever the form's scroll position. */}
      <div role="status" aria-live="polite" className="w-full space-y-2" data-testid="hand-off-status">
        {notice ? (
          <p
            className={clsx("text-sm", notice.ok ? "text-emerald-800 dark:text-emerald-300" : "text-red-800 dark:text-red-300")}
            data-testid="hand-off-notice"
          >
            {notice.text}
          </p>
        ) : null}
        {interrupted ? (
          <p className="text-sm font-medium" data-testid="hand-off-interrupted">
            This hand-off did not finish. Finish it to send the rest, with the same ids: nothing is sent twice.
          </p>
        ) : null}
        {lines.length > 0 ? (
          <ol
            className={clsx(
              "space-y-1 rounded-md border px-3 py-2 text-sm",
              state.progress?.failed
                ? "border-amber-300 bg-amber-50 text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-50"
                : "border-slate-300 bg-slate-50 dark:border-slate-700 dark:bg-slate-950",
            )}
            aria-label="What was sent"
            data-testid="hand-off-progress"
          >
            {lines.map((l) => (
              <li key={l.step} className="flex items-start gap-2" data-state={l.state} data-step={l.step}>
                <Icon
                  name={l.state === "done" ? "check-circle" : l.state === "failed" ? "alert" : "circle-dashed"}
                  className="mt-0.5 h-4 w-4 shrink-0"
                />
                <span className="min-w-0 break-words">
                  {state.pending && state.step === l.step && l.state === "waiting" ? SENDING[l.step] : l.text}
                </span>
              </li>
            ))}
          </ol>
        ) : null}
      </div>
      {handOff.partial ? (
        <p className="w-full text-xs text-slate-700 dark:text-slate-300">
          The form is locked: finishing sends the rest of this same hand-off, never a second one.{" "}
          {state.progress?.sessionId ? (
            <Link href={`/sessions/${encodeURIComponent(state.progress.sessionId)}`} className="text-blue-800 underline dark:text-sky-300">
              Open the session
            </Link>
          ) : null}
          {state.progress?.sessionId ? " · " : null}
          <button
            type="button"
            className="text-blue-800 underline disabled:opacity-60 dark:text-sky-300"
            disabled={state.pending}
            onClick={s.startOver}
            data-testid="hand-off-discard"
          >
            Start over
          </button>{" "}
          (what was sent stays sent).
        </p>
      ) : (
        <>
          {!template.savingOpen ? (
            <Button variant="quiet" onClick={() => template.setSavingOpen(true)} disabled={locked} data-testid="hand-off-save-template">
              Save as template…
            </Button>
          ) : null}
          <Link href="/sessions/new" className="text-sm text-blue-800 underline-offset-2 hover:underline dark:text-sky-300">
            Step by step
          </Link>
        </>
      )}
      <div className="ml-auto flex gap-2">
        <Button onClick={onClose} disabled={state.pending}>
          Cancel
        </Button>
        <Button
          type="submit"
          variant="primary"
          pending={state.pending}
          aria-disabled={state.pending ? true : undefined}
          data-testid="hand-off-submit"
        >
          {state.pending ? "Handing off…" : handOff.partial ? "Finish handing off" : "Hand off"}
        </Button>
      </div>
    </div>
  );
}
