"use client";
// /sessions/[id]: live header, outcome, offers or task summary, toolbar
// (export, jump to latest) and the virtualized timeline with deep links.

import clsx from "clsx";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { auditNdjson, auditTranscript } from "@/features/session/audit";
import { actorKindOf, nameResolver } from "@/lib/views/directory";
import { downloadBlob } from "@/features/session/download";
import { handoverReport } from "@/features/session/report";
import { parseEventHash, parseEventParam } from "@/lib/views/route-params";
import { buildTimeline, newestSequenceNotBy, sequencesByMessageId } from "@/lib/views/timeline";
import { useRefusals } from "@/lib/client/refusals";
import { useDirectory, usePolicySummary } from "@/lib/client/use-console-data";
import { policyIdOf } from "@/features/session/session-authz";
import { commitmentAuthority, designatedRoles } from "@/lib/authz/policy-summary";
import { useSessionStream } from "@/features/session/use-session-stream";
import { eventCount, isWindowed } from "@/lib/views/session-stream-state";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { Icon } from "@/components/ui/Icon";
import { FloatingLatest, latestVisibility } from "@/features/session/FloatingLatest";
import { SessionHeader } from "@/features/session/SessionHeader";
import { SessionSummaries } from "@/features/session/Summaries";
import { TimelineBar } from "@/features/session/TimelineRowViews";
import { Timeline, type TimelineHandle } from "@/features/session/Timeline";
import { ActorDirectoryContext } from "@/features/session/ActorLabel";
import { ActionPanel } from "@/features/session/actions/ActionPanel";
import { UntypedPayloadView } from "@/features/session/PayloadView";
import { EscalationMarks, EscalationPanel, escalationMarks, useEscalation } from "@/features/session/EscalationPanel";
import { useNowWhen } from "@/lib/client/use-now";
import type { PayloadBlob } from "@/lib/views/event-details";
import { formatCount } from "@/lib/views/format";

const toolButton =
  "inline-flex h-8 items-center gap-1.5 rounded-md px-2.5 text-sm font-medium text-slate-800 ring-1 ring-slate-300 ring-inset hover:bg-slate-100 disabled:opacity-50 dark:text-slate-100 dark:ring-slate-600 dark:hover:bg-slate-800";

const renderOutput = (blob: PayloadBlob) => <UntypedPayloadView blob={blob} />;

function useHashTarget(): number | undefined {
  const [target, setTarget] = useState<number | undefined>(undefined);
  useEffect(() => {
    const read = (): void => setTarget(parseEventHash(window.location.hash));
    read();
    window.addEventListener("hashchange", read);
    return () => window.removeEventListener("hashchange", read);
  }, []);
  return target;
}

export function SessionScreen({
  sessionId,
  preview = null,
  handover,
}: {
  sessionId: string;
  preview?: ReactNode;
  handover?: string | undefined;
}) {
  const { stream, connection, retryNow, loadFullHistory, earlier } = useSessionStream(sessionId, handover);
  const { view, metadata, events } = stream;
  // The first view's window: the events before it are read when asked for.
  const windowed = isWindowed(stream);
  const total = eventCount(stream);
  const loadEarlier = useCallback(() => {
    loadFullHistory().catch(() => {
      /* shown through `earlier` */
    });
  }, [loadFullHistory]);
  const refusals = useRefusals(sessionId);
  const timeline = useMemo(() => buildTimeline(view, events, refusals), [view, events, refusals]);
  const params = useSearchParams();
  const hashTarget = useHashTarget();
  const target = parseEventParam(params.get("event")) ?? hashTarget;
  const [handled, setHandled] = useState<number | undefined>(undefined);
  // Whether the newest event is on screen: read by the floating button only.
  const [latest] = useState(latestVisibility);
  const handle = useRef<TimelineHandle | null>(null);
  const { me } = useWhoAmI();
  const { directory } = useDirectory(Boolean(me));
  const nameOf = nameResolver(directory);
  // The bound policy's rules (shared with the action panel's read): who approves under lead approval.
  const { policy } = usePolicySummary(policyIdOf(view, metadata), Boolean(me));
  const committers = policy && commitmentAuthority(policy) === "designated_role" ? designatedRoles(policy) : undefined;

  // An escalation chain Baton runs for the session's owner (lib/gateway/escalations/), if any.
  const escalation = useEscalation(sessionId, Boolean(me), events.length);
  const marks = useMemo(() => escalationMarks(escalation, sessionId), [escalation, sessionId]);
  const now = useNowWhen(escalation !== undefined);

  const othersMoved = useMemo(() => newestSequenceNotBy(events, me?.participantId ?? ""), [events, me?.participantId]);
  const sequenceByMessageId = useMemo(() => sequencesByMessageId(events), [events]);
  const linkedSequences = stream.linkedSequences;
  const sequenceOf = useCallback(
    (id: string) => sequenceByMessageId.get(id) ?? linkedSequences?.[id],
    [sequenceByMessageId, linkedSequences],
  );

  useEffect(() => {
    document.title = `${view.intent || sessionId} · Baton`;
  }, [view.intent, sessionId]);

  // A new deep link (clicking another #N) must be handled again.
  useEffect(() => setHandled(undefined), [target]);
  const pendingTarget = target !== undefined && handled !== target ? target : undefined;
  const onTargetHandled = useCallback((seq: number) => setHandled(seq), []);
  const registerHandle = useCallback((h: TimelineHandle) => {
    handle.current = h;
  }, []);

  // Said once the history is known complete: this stream caught up, or the first view handed over a caught-up fold.
  const missingTarget =
    target !== undefined && stream.everCaughtUp && !windowed && !timeline.rowOfSequence.has(target) ? target : undefined;

  // A deep link into the events before the window reads them.
  const targetBeforeWindow = windowed && target !== undefined && target < (stream.heldFrom ?? 1);
  useEffect(() => {
    if (targetBeforeWindow) loadEarlier();
  }, [targetBeforeWindow, loadEarlier]);
  // A participant may be asked to act: the brief shows every runbook, so the whole history is read.
  const participant =
    windowed && view.lifecycle === "Open" && me !== undefined && me !== null && view.participants.includes(me.participantId);
  useEffect(() => {
    if (participant) loadEarlier();
  }, [participant, loadEarlier]);

  // Exports keep who acted: `actor_kind` (person, agent, runtime) on every message.
  const kindOf = (sender: string) => actorKindOf(directory, sender);
  // Exports hold the whole history: a window reads the events before it first.
  const complete = async () => (windowed ? loadFullHistory() : stream);
  const exportJson = (): void => {
    void complete().then(
      ({ events, view }) => {
        const transcript = auditTranscript(events, kindOf, { mode: view.mode, sessionId });
        downloadBlob(`${JSON.stringify(transcript, null, 2)}\n`, `session-${sessionId}.json`, "application/json");
      },
      () => undefined,
    );
  };
  const exportMarkdown = (): void => {
    void complete().then(
      ({ events, view }) => {
        const report = handoverReport({ sessionId, view, events, nameOf, kindOf });
        downloadBlob(report, `handover-${sessionId}.md`, "text/markdown");
      },
      () => undefined,
    );
  };
  const exportNdjson = (): void => {
    void complete().then(
      ({ events }) => downloadBlob(auditNdjson(events, kindOf), `session-${sessionId}.ndjson`, "application/x-ndjson"),
      () => undefined,
    );
  };

  const nothingYet = events.length === 0 && !metadata;
  if (nothingYet && connection.state === "ended" && connection.fatal) {
    const notFound = connection.error === "Not found";
    return (
      <div className="space-y-4">
        <Link href="/" className="text-sm text-blue-800 hover:underline dark:text-sky-300">
          ← Sessions
        </Link>
        <div className="rounded-lg border border-amber-300 bg-amber-50 p-5 text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100">
          <h1 className="text-lg font-semibold">{notFound ? "Session not found" : "Can’t open this session"}</h1>
          <p className="mt-1 text-sm">
            {notFound
              ? "The runtime has no session with this id. It may have been evicted after its retention period, or the link is wrong."
              : connection.error}
          </p>
          <p className="mt-1 font-mono text-xs break-all">{sessionId}</p>
          {/* Trying again cannot make a missing session appear; other failures may pass. */}
          {notFound ? (
            <Link href="/" className="mt-3 inline-block text-sm font-medium text-blue-800 underline dark:text-sky-300">
              Back to sessions
            </Link>
          ) : (
            <button type="button" onClick={retryNow} className={clsx(toolButton, "mt-3")}>
              <Icon name="refresh" /> Try again
            </button>
          )}
        </div>
      </div>
    );
  }

  // The server-rendered first view stays until this stream has replayed the
  // history, so the page never steps back to a loading state.
  if (preview !== null && !stream.everCaughtUp) return <>{preview}</>;

  return (
    <ActorDirectoryContext.Provider value={directory}>
      <EscalationMarks.Provider value={marks}>
        <div className="space-y-4">
          <SessionHeader
            sessionId={sessionId}
            view={view}
            metadata={metadata}
            connection={connection}
            eventCount={total}
            nameOf={nameOf}
            committers={committers}
            actions={<ActionPanel sessionId={sessionId} view={view} metadata={metadata} othersMoved={othersMoved} />}
          />
          {escalation ? (
            <EscalationPanel
              escalation={escalation}
              sessionId={sessionId}
              me={me ? { role: me.role, participantId: me.participantId } : null}
              nameOf={nameOf}
              now={now}
            />
          ) : null}
          {nothingYet ? (
            <div aria-busy="true" className="space-y-2" data-testid="session-loading">
              <p className="text-sm text-slate-700 dark:text-slate-300">
                {connection.state === "reconnecting"
                  ? `Can’t reach the console server${connection.error ? ` (${connection.error})` : ""}. Retrying…`
                  : "Loading the session’s history…"}
              </p>
              {Array.from({ length: 4 }, (_, i) => (
                <div key={i} className="h-20 animate-pulse rounded bg-slate-100 motion-reduce:animate-none dark:bg-slate-900" />
              ))}
            </div>
          ) : null}
          {connection.state === "reconnecting" && !nothingYet ? (
            <div
              role="note"
              className="flex flex-wrap items-center gap-3 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
            >
              <span>
                Connection lost{connection.error ? ` (${connection.error})` : ""}. Showing {events.length} events; missed events will be
                fetched from #{stream.lastSequence + 1} when the connection is back.
              </span>
              <button type="button" onClick={retryNow} className="font-medium underline">
                Retry now
              </button>
            </div>
          ) : null}
          <SessionSummaries
            view={view}
            sessionId={sessionId}
            sequenceOf={sequenceOf}
            renderOutput={renderOutput}
            nameOf={nameOf}
            omitted={stream.omitted}
          />
          <section aria-labelledby="timeline-title" className="space-y-2">
            <TimelineBar count={total} loading={!stream.caughtUp} sticky>
              <div className="ml-auto flex flex-wrap items-center gap-2">
                <button
                  type="button"
                  className={toolButton}
                  onClick={exportMarkdown}
                  disabled={events.length === 0}
                  data-testid="export-markdown"
                  title="A readable handover report (Markdown)"
                >
                  <Icon name="download" /> Report
                </button>
                <Link
                  href={`/sessions/${encodeURIComponent(sessionId)}/report`}
                  prefetch={false}
                  className={toolButton}
                  data-testid="open-report"
                  title="The handover report as a page to read or print"
                >
                  Printable report
                </Link>
                <button type="button" className={toolButton} onClick={exportJson} disabled={events.length === 0} data-testid="export-json">
                  <Icon name="download" /> JSON
                </button>
                <button
                  type="button"
                  className={toolButton}
                  onClick={exportNdjson}
                  disabled={events.length === 0}
                  data-testid="export-ndjson"
                >
                  <Icon name="download" /> NDJSON
                </button>
                <button
                  type="button"
                  className={toolButton}
                  onClick={() => handle.current?.jumpToLatest()}
                  disabled={timeline.newestSequence === undefined}
                  aria-keyshortcuts="End G"
                  data-testid="jump-latest"
                >
                  <Icon name="arrow-down" /> Latest
                  {timeline.newestSequence !== undefined ? <span className="font-mono text-xs">#{timeline.newestSequence}</span> : null}
                </button>
              </div>
            </TimelineBar>
            {missingTarget !== undefined ? (
              <p
                role="note"
                className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
              >
                Event #{missingTarget} is not in this session
                {timeline.newestSequence !== undefined ? ` (events run from #1 to #${timeline.newestSequence})` : ""}.
              </p>
            ) : null}
            <p className="baton-kbd-hint text-xs text-slate-600 dark:text-slate-400" data-testid="keyboard-hint">
              Keyboard: <kbd className="font-mono">j</kbd>/<kbd className="font-mono">k</kbd> move, <kbd className="font-mono">Enter</kbd>{" "}
              expands, <kbd className="font-mono">End</kbd> or <kbd className="font-mono">G</kbd> newest,{" "}
              <kbd className="font-mono">Home</kbd> first, <kbd className="font-mono">?</kbd> all shortcuts.
            </p>
            {windowed ? (
              <div
                className="flex flex-wrap items-center gap-3 rounded-md border border-slate-200 px-3 py-2 text-sm dark:border-slate-800"
                data-testid="earlier-events"
              >
                <span className="text-slate-700 dark:text-slate-300">
                  Showing the latest {formatCount(events.length)} of {formatCount(total)} events.
                  {earlier.state === "failed" ? ` The earlier ones could not be read (${earlier.error}).` : ""}
                </span>
                <button
                  type="button"
                  className={toolButton}
                  onClick={loadEarlier}
                  disabled={earlier.state === "loading"}
                  aria-busy={earlier.state === "loading"}
                >
                  {earlier.state === "loading"
                    ? "Loading earlier events…"
                    : `Load the ${formatCount(total - events.length)} earlier events`}
                </button>
              </div>
            ) : null}
            <Timeline
              sessionId={sessionId}
              timeline={timeline}
              target={pendingTarget}
              onTargetHandled={onTargetHandled}
              registerHandle={registerHandle}
              onLatestVisibleChange={latest.set}
            />
            {connection.state === "ended" && !connection.fatal && events.length > 0 ? (
              <p className="pt-2 text-center text-sm text-slate-700 dark:text-slate-300" data-testid="stream-ended">
                The session is closed; no more events will arrive.
              </p>
            ) : null}
          </section>
          {timeline.newestSequence !== undefined ? (
            <FloatingLatest visibility={latest} onJump={() => handle.current?.jumpToLatest()} />
          ) : null}
        </div>
      </EscalationMarks.Provider>
    </ActorDirectoryContext.Provider>
  );
}
