// Session header: intent, one status pill (lifecycle, phase and outcome merged), TTL, connection,
// and the facts an on-call engineer needs: who owns it, who it's going to,
// participants, versions and policy. No hooks and no "use client": the
// server renders it in the session page's first view (only its clock,
// connection and copy leaves hydrate), and the live view renders it again.

import Link from "next/link";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { TASK_MODE } from "@/lib/macp/constants";
import type { SessionView } from "@/lib/macp/projections/session";
import type { ConnectionInfo } from "@/lib/client/connection";
import { formatCount, modeLabel } from "@/lib/views/format";
import { isTerminalSessionState, lifecycleToState, statusBadge } from "@/lib/views/labels";
import { phaseDetail, sessionStatus } from "@/lib/macp/projections/status";
import { lastActivityMs } from "@/lib/macp/projections/activity";
import { Badge } from "@/components/ui/Badge";
import { ConnectionBadge } from "@/components/ui/ConnectionIndicator";
import { CopyButton } from "@/components/ui/CopyButton";
import { Icon } from "@/components/ui/Icon";
import { RelativeTime, Timestamp, TtlCountdown } from "@/components/ui/Time";
import { clipLine } from "@/lib/views/clip";
import { plainName, type NameOf } from "@/lib/views/event-details";

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="min-w-0">
      <dt className="text-xs font-medium text-slate-600 dark:text-slate-400">{label}</dt>
      <dd className="mt-0.5 text-sm break-words text-slate-900 dark:text-slate-100">{children}</dd>
    </div>
  );
}

/** A participant by name, the full id on hover; an agent's id (not a person's) can be copied. */
function Who({ id, nameOf }: { id: string; nameOf: NameOf }) {
  return (
    <>
      <span title={id}>{nameOf(id)}</span>
      {id.startsWith("human:") ? null : <CopyButton text={id} label={`Copy the id ${id}`} />}
    </>
  );
}

export function SessionHeader({
  sessionId,
  view,
  metadata,
  connection,
  eventCount,
  actions,
  nameOf = plainName,
  committers,
}: {
  sessionId: string;
  view: SessionView;
  metadata: SessionMetadata | undefined;
  connection: ConnectionInfo;
  eventCount: number;
  /** What the signed-in person can do, right under the status (before the facts). */
  actions?: React.ReactNode;
  /** Display names (the live view's directory); ids without their prefix otherwise. */
  nameOf?: NameOf;
  /** The approvers a lead-approval policy designates, once its rules are loaded: an accepted offer then reads "Awaiting approval". */
  committers?: readonly string[] | undefined;
}) {
  const owner = view.currentOwner || metadata?.initiator || "";
  const target = view.currentTarget || "";
  const state = metadata?.state ?? (view.started ? lifecycleToState(view.lifecycle) : undefined);
  const terminal = isTerminalSessionState(state);
  const expiresAt = metadata && metadata.expiresAtUnixMs > 0n ? metadata.expiresAtUnixMs : view.expiresAt;
  const mode = metadata?.mode || view.mode;
  const isTask = mode === TASK_MODE;
  const participants = metadata?.participants.length ? metadata.participants : view.participants;
  const outcome = view.commitment ? (view.commitment.outcomePositive ? "positive" : "negative") : "";
  const facts = {
    state: state ?? 0,
    phase: view.started ? view.phase : "",
    outcome,
    detail: view.started ? phaseDetail(view, committers) : "",
  };
  return (
    <header className="space-y-3">
      <nav aria-label="Breadcrumb" className="text-sm">
        <Link href="/" prefetch={false} className="inline-flex items-center gap-1 text-blue-800 hover:underline dark:text-sky-300">
          <span aria-hidden="true">←</span> Sessions
        </Link>
      </nav>
      <div className="flex flex-wrap items-start gap-x-4 gap-y-2">
        <h1 className="min-w-0 flex-1 text-xl font-semibold tracking-tight break-words sm:text-2xl" data-testid="session-intent">
          {view.intent ? clipLine(view.intent) : view.started ? "Session without intent" : `Session ${sessionId}`}
        </h1>
        <ConnectionBadge info={connection} label="Session" />
      </div>
      <div
        className="flex flex-wrap items-center gap-2"
        data-testid="session-badges"
        data-phase={view.started ? view.phase : ""}
        data-status={sessionStatus(facts)}
      >
        <span className="rounded-md bg-slate-100 px-2 py-0.5 text-sm font-medium text-slate-800 dark:bg-slate-800 dark:text-slate-100">
          {modeLabel(mode)}
        </span>
        <Badge info={statusBadge(facts)} kind="Status" size="md" />
        {terminal ? null : (
          <span className="inline-flex items-center gap-1.5 text-sm text-slate-700 dark:text-slate-300" data-testid="session-ttl">
            <Icon name="clock" />
            <span className="font-medium">Time left</span>
            <TtlCountdown expiresAt={expiresAt} frozen={state === SessionState.SUSPENDED} />
          </span>
        )}
      </div>
      {actions}
      <dl
        className="grid grid-cols-2 gap-x-6 gap-y-3 rounded-lg border border-slate-200 p-3 sm:grid-cols-4 dark:border-slate-800"
        data-testid="session-facts"
      >
        <Fact label={isTask ? "Requester" : "Current owner"}>{owner ? <Who id={owner} nameOf={nameOf} /> : "—"}</Fact>
        <Fact label={isTask ? "Assignee" : "Current target"}>{target ? <Who id={target} nameOf={nameOf} /> : "—"}</Fact>
        <Fact label={isTask ? "Task" : "Scope"}>{view.scope ? clipLine(view.scope) : "—"}</Fact>
        <Fact label="Last activity">
          <RelativeTime ms={lastActivityMs(metadata, view.lastActivityMs) || undefined} />
        </Fact>
      </dl>
      <details className="group rounded-lg border border-slate-200 dark:border-slate-800" data-testid="session-details">
        <summary className="flex cursor-pointer items-center gap-1.5 px-3 py-2 text-sm font-medium select-none hover:bg-slate-50 dark:hover:bg-slate-900">
          <Icon name="chevron-right" className="h-3.5 w-3.5 transition-transform group-open:rotate-90 motion-reduce:transition-none" />
          Details
          <span className="font-normal text-slate-600 dark:text-slate-400">· ids, versions, policy, participants</span>
        </summary>
        <dl className="grid grid-cols-2 gap-x-6 gap-y-3 border-t border-slate-200 p-3 sm:grid-cols-3 lg:grid-cols-6 dark:border-slate-800">
          <Fact label="Started">
            <Timestamp ms={metadata?.startedAtUnixMs ?? view.startedAt} />
          </Fact>
          <Fact label="Events">{formatCount(eventCount)}</Fact>
          <Fact label="Expires">
            <Timestamp ms={expiresAt} />
          </Fact>
          <div className="col-span-2 min-w-0 sm:col-span-3 lg:col-span-3">
            <dt className="flex items-center gap-1 text-xs font-medium text-slate-600 dark:text-slate-400">
              <Icon name="users" className="h-3.5 w-3.5" /> Participants ({participants.length})
            </dt>
            <dd className="mt-1 flex flex-wrap gap-1">
              {participants.map((p) => (
                <span
                  key={p}
                  className="rounded-full bg-slate-100 px-2 py-0.5 text-xs text-slate-800 dark:bg-slate-800 dark:text-slate-100"
                >
                  {p}
                  {p === (metadata?.initiator || view.initiator) ? (
                    <span className="text-slate-600 dark:text-slate-400"> · initiator</span>
                  ) : null}
                </span>
              ))}
            </dd>
          </div>
          <Fact label="Session id">
            <span className="font-mono text-xs break-all">{sessionId}</span>
            <CopyButton text={sessionId} label="Copy session id" />
          </Fact>
          <Fact label="Versions">
            <span className="font-mono text-xs">
              mode {metadata?.modeVersion || view.modeVersion || "—"} · config{" "}
              {metadata?.configurationVersion || view.configurationVersion || "—"}
            </span>
          </Fact>
          <Fact label="Policy">
            <span className="font-mono text-xs">{metadata?.policyVersion || view.effectivePolicyId}</span>
          </Fact>
        </dl>
      </details>
    </header>
  );
}
