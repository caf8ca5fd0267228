"use client";
// A session's escalation chain (lib/gateway/escalations/), on its page: what
// Baton will do for the owner and when, what it did, why it stopped, and a
// "Cancel escalation" control for the owner (and admins; decide()
// "cancelEscalation", CSRF by the transport). The messages Baton sent for the
// owner are marked in the timeline through EscalationMarks.

import { createContext, useContext, useMemo, useState } from "react";
import Link from "next/link";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ConnectError } from "@connectrpc/connect";
import { decide } from "@/lib/authz/decide";
import { EscalationState, EscalationStepKind, type Escalation } from "@/lib/gen/baton/v1/actions_pb";
import { formatDurationWords } from "@/lib/base/duration";
import { actionClient } from "@/lib/client/transport";
import { announce } from "@/lib/client/announcer";
import type { Role } from "@/lib/authz/roles";
import { Icon } from "@/components/ui/Icon";

/** Message ids Baton sent for an owner in this session → the owner (for the timeline's "by Baton for …"). */
export interface EscalationMarksValue {
  byMessageId: ReadonlyMap<string, string>;
  /** The owner, when Baton cancelled this session for them (the SessionCancel event). */
  cancelledFor?: string;
}

export const EscalationMarks = createContext<EscalationMarksValue>({ byMessageId: new Map() });

export function useEscalationMark(messageId: string, messageType: string): string | undefined {
  const marks = useContext(EscalationMarks);
  return marks.byMessageId.get(messageId) ?? (messageType === "SessionCancel" ? marks.cancelledFor : undefined);
}

const escalationKey = (sessionId: string) => ["escalation", sessionId] as const;

/** The session's escalation, refreshed while it runs (and when the session's event count moves). */
export function useEscalation(sessionId: string, enabled: boolean, eventCount: number): Escalation | undefined {
  const q = useQuery({
    queryKey: [...escalationKey(sessionId), eventCount],
    queryFn: async ({ signal }) => {
      const r = await actionClient().getEscalation({ sessionId }, { signal });
      return r.found ? (r.escalation ?? null) : null;
    },
    enabled,
    placeholderData: (prev) => prev,
    refetchInterval: (query) => (query.state.data?.state === EscalationState.PENDING ? 2_000 : false),
    retry: 1,
  });
  return q.data ?? undefined;
}

export function escalationMarks(e: Escalation | undefined, sessionId: string): EscalationMarksValue {
  if (!e) return { byMessageId: new Map() };
  const byMessageId = new Map<string, string>();
  let cancelledFor: string | undefined;
  for (const a of e.done) {
    if (a.sessionId === sessionId) for (const id of a.messageIds) byMessageId.set(id, e.owner);
    if (a.cancelledSessionId === sessionId) cancelledFor = e.owner;
  }
  return cancelledFor !== undefined ? { byMessageId, cancelledFor } : { byMessageId };
}

const STATE_TEXT: Readonly<Record<EscalationState, string>> = {
  [EscalationState.UNSPECIFIED]: "Unknown",
  [EscalationState.PENDING]: "Running",
  [EscalationState.DONE]: "Every step ran",
  [EscalationState.STOPPED]: "Stopped",
  [EscalationState.CANCELLED]: "Cancelled",
  [EscalationState.FAILED]: "Failed",
};

function people(ids: readonly string[], nameOf: (id: string) => string): string {
  const names = ids.map(nameOf);
  if (names.length <= 1) return names[0] ?? "nobody";
  return `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

export function EscalationPanel({
  escalation: e,
  sessionId,
  me,
  nameOf,
  now,
}: {
  escalation: Escalation;
  sessionId: string;
  me: { role: Role; participantId: string } | null;
  nameOf: (id: string) => string;
  now: number;
}) {
  const qc = useQueryClient();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState("");
  const owner = nameOf(e.owner);
  const running = e.state === EscalationState.PENDING;
  const canCancel = me !== null && running && decide(me, undefined, "cancelEscalation", { escalation: { owner: e.owner } }).allowed;
  const steps = useMemo(
    () =>
      e.steps.map((s, i) => {
        const done = e.done.find((a) => a.step === i);
        const what =
          s.kind === EscalationStepKind.NOTIFY ? `Tell ${people(s.participants, nameOf)}` : `Re-offer to ${people(s.participants, nameOf)}`;
        const when = i === 0 ? `after ${s.afterMinutes} min unanswered` : `${s.afterMinutes} min later, if still unanswered`;
        let state: "done" | "next" | "later" | "skipped" = "later";
        if (done) state = "done";
        else if (running && i === e.nextStep) state = "next";
        else if (!running) state = "skipped";
        return { i, what, when, state, done };
      }),
    [e, nameOf, running],
  );
  const next = Number(e.nextAtUnixMs);

  const cancel = async (): Promise<void> => {
    setPending(true);
    setError("");
    try {
      await actionClient().cancelEscalation({ sessionId });
      announce("Escalation cancelled.");
      await qc.invalidateQueries({ queryKey: escalationKey(sessionId) });
    } catch (err) {
      setError(ConnectError.from(err).rawMessage);
    } finally {
      setPending(false);
    }
  };

  return (
    <section
      aria-labelledby="escalation-title"
      className="rounded-lg border border-violet-300 bg-violet-50 p-3 text-sm text-violet-950 dark:border-violet-800 dark:bg-violet-950 dark:text-violet-50"
      data-testid="escalation-panel"
      data-state={EscalationState[e.state].toLowerCase()}
    >
      <div className="flex flex-wrap items-start gap-2">
        <h2 id="escalation-title" className="flex items-center gap-1.5 font-semibold">
          <Icon name="clock" className="h-4 w-4" />
          Escalation · <span data-testid="escalation-state">{STATE_TEXT[e.state]}</span>
        </h2>
        {canCancel ? (
          <button
            type="button"
            onClick={() => void cancel()}
            disabled={pending}
            className="ml-auto inline-flex h-8 items-center gap-1.5 rounded-md bg-white px-2.5 text-sm font-medium text-slate-900 ring-1 ring-slate-300 ring-inset hover:bg-slate-100 disabled:opacity-50 dark:bg-slate-900 dark:text-slate-100 dark:ring-slate-600 dark:hover:bg-slate-800"
            data-testid="escalation-cancel"
          >
            <Icon name="x" className="h-4 w-4" /> {pending ? "Cancelling…" : "Cancel escalation"}
          </button>
        ) : null}
      </div>
      <p className="mt-1 text-xs">
        Baton acts for {owner}, as {owner}, while the offer stays unanswered; it stops as soon as anyone answers.
        {running && next > 0 ? <> Next step {next > now ? `in ${formatDurationWords(next - now)}` : "now"}.</> : null}
      </p>
      <ol className="mt-2 space-y-1" aria-label="Escalation steps">
        {steps.map((s) => (
          <li key={s.i} className="flex items-start gap-2" data-state={s.state} data-testid="escalation-step">
            <Icon
              name={s.state === "done" ? "check-circle" : s.state === "next" ? "clock" : "circle-dashed"}
              className="mt-0.5 h-4 w-4 shrink-0"
            />
            <span className="min-w-0">
              <span className="font-medium">{s.what}</span> <span className="text-xs">{s.when}</span>
              {s.done ? (
                <span className="block text-xs">
                  Done by Baton for {owner} at {new Date(Number(s.done.atUnixMs)).toLocaleTimeString()}
                  {s.done.kind === EscalationStepKind.REOFFER && s.done.cancelledSessionId === sessionId
                    ? ": it closed this session, unanswered"
                    : ""}
                  {s.done.kind === EscalationStepKind.REOFFER && s.done.sessionId !== sessionId ? (
                    <>
                      {" "}
                      ·{" "}
                      <Link
                        href={`/sessions/${encodeURIComponent(s.done.sessionId)}`}
                        className="underline"
                        data-testid="escalation-next-session"
                      >
                        the new session
                      </Link>
                    </>
                  ) : null}
                </span>
              ) : null}
            </span>
          </li>
        ))}
      </ol>
      {e.detail ? (
        <p className="mt-2 text-xs font-medium" data-testid="escalation-detail">
          {e.detail}
        </p>
      ) : null}
      {error ? (
        <p role="alert" className="mt-2 text-xs font-medium text-red-800 dark:text-red-300">
          {error}
        </p>
      ) : null}
    </section>
  );
}
