"use client";
// /files/[dir]/[taskId]: one v0.1 handoff. The header (status pill, from and
// to by name), the description, the context (a bounded JSON view, like
// payloads in sessions), the timeline Baton recorded (the file itself keeps
// no history), and the actions the person may take. Live: the page refetches
// when the WatchFileHandoffs stream reports a change.

import Link from "next/link";
import { useMemo } from "react";
import type { FileHandoffEvent } from "@/lib/gen/baton/v1/files_pb";
import { nameIn, type Directory } from "@/lib/views/directory";
import { STEP_LABEL, stepSentence } from "@/lib/views/file-handoffs";
import { clipParagraph } from "@/lib/views/clip";
import { useDirectory } from "@/lib/client/use-console-data";
import { useFileHandoff, useFileWatch } from "@/lib/client/use-file-handoffs";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { ConnectionBadge } from "@/components/ui/ConnectionIndicator";
import { CopyButton } from "@/components/ui/CopyButton";
import { Icon } from "@/components/ui/Icon";
import { Timestamp } from "@/components/ui/Time";
import { JsonView } from "@/features/session/PayloadView";
import { FileActions } from "@/features/files/FileActions";
import { FileStatusBadge, ModeLabel, Who } from "@/features/files/FileBits";

const STEP_TONE: Readonly<Record<string, string>> = {
  first: "text-slate-700 dark:text-slate-300",
  same: "text-slate-700 dark:text-slate-300",
  legal: "text-emerald-800 dark:text-emerald-300",
  gap: "text-amber-900 dark:text-amber-300",
  illegal: "text-red-800 dark:text-red-300",
};

function Timeline({ events, directory, pruned }: { events: readonly FileHandoffEvent[]; directory: Directory; pruned: number }) {
  return (
    <ol className="space-y-2" aria-label="Timeline, oldest first" data-testid="file-timeline">
      {pruned > 0 ? (
        <li className="text-xs text-slate-700 dark:text-slate-300">
          {pruned} older change{pruned === 1 ? "" : "s"} dropped to keep the history bounded.
        </li>
      ) : null}
      {events.map((e) => (
        <li
          key={e.seq}
          className="flex flex-wrap items-baseline gap-x-3 gap-y-1 border-l-2 border-slate-300 pl-3 dark:border-slate-600"
          data-testid="file-event"
          data-step={e.step}
          data-status={e.status}
        >
          <Timestamp ms={e.observedAtUnixMs} className="text-xs text-slate-700 dark:text-slate-300" />
          <span className="text-sm text-slate-900 dark:text-slate-100">{stepSentence(e)}</span>
          {e.step ? <span className={`text-xs font-semibold ${STEP_TONE[e.step] ?? ""}`}>{STEP_LABEL[e.step] ?? e.step}</span> : null}
          {e.toAgent && e.valid ? (
            <span className="text-xs text-slate-700 dark:text-slate-300">
              to_agent <Who id={e.toAgent} directory={directory} />
            </span>
          ) : null}
          <span className="text-xs text-slate-600 dark:text-slate-400">seen by {e.source}</span>
        </li>
      ))}
    </ol>
  );
}

function Section({ title, children, testId }: { title: string; children: React.ReactNode; testId?: string }) {
  return (
    <section className="space-y-2" aria-label={title} {...(testId ? { "data-testid": testId } : {})}>
      <h2 className="text-base font-semibold">{title}</h2>
      {children}
    </section>
  );
}

export function FileHandoffScreen({ dirKey, taskId }: { dirKey: string; taskId: string }) {
  const { me } = useWhoAmI();
  const { data, error, loading } = useFileHandoff(dirKey, taskId, true);
  const connection = useFileWatch(true);
  const { directory } = useDirectory(Boolean(me));
  const nameOf = useMemo(() => (id: string) => nameIn(directory, id), [directory]);
  const context = useMemo<unknown>(() => {
    if (!data?.contextJson || data.contextTruncated) return undefined;
    try {
      return JSON.parse(data.contextJson) as unknown;
    } catch {
      return undefined;
    }
  }, [data?.contextJson, data?.contextTruncated]);

  if (loading) return <p className="text-sm text-slate-700 dark:text-slate-300">Loading the handoff…</p>;
  if (error || !data?.handoff) {
    return (
      <div className="space-y-3" data-testid="file-not-found">
        <h1 className="text-xl font-semibold">Handoff not found</h1>
        <p className="text-sm text-slate-700 dark:text-slate-300">
          {error instanceof Error ? error.message : "This handoff is not in the watched directories."}
        </p>
        <Link href="/files" className="text-sm text-blue-800 underline dark:text-sky-300">
          Back to file handoffs
        </Link>
      </div>
    );
  }
  const h = data.handoff;
  return (
    <div className="mx-auto max-w-4xl space-y-5" data-testid="file-handoff" data-status={h.valid ? h.status : "invalid"}>
      <nav aria-label="Breadcrumb" className="text-sm">
        <Link href="/files" className="inline-flex items-center gap-1 text-blue-800 hover:underline dark:text-sky-300">
          File handoffs
        </Link>
      </nav>
      <header className="space-y-2">
        <div className="flex flex-wrap items-center gap-2">
          <FileStatusBadge handoff={h} size="md" />
          <ModeLabel />
          <ConnectionBadge info={connection} label="Handoff" />
        </div>
        <h1 className="text-xl font-semibold tracking-tight break-words sm:text-2xl">
          {h.valid || h.status ? clipParagraph(data.description.split("\n")[0] || h.taskId) : h.name}
        </h1>
        <dl className="grid gap-x-6 gap-y-1 text-sm sm:grid-cols-[max-content_1fr]">
          <dt className="text-slate-700 dark:text-slate-300">From</dt>
          <dd className="min-w-0 font-medium" data-testid="file-from">
            {h.fromAgent ? <Who id={h.fromAgent} directory={directory} /> : "—"}
          </dd>
          <dt className="text-slate-700 dark:text-slate-300">To</dt>
          <dd className="min-w-0 font-medium" data-testid="file-to">
            {h.status ? <Who id={h.toAgent} directory={directory} anyone="anyone (not yet taken)" /> : "—"}
          </dd>
          <dt className="text-slate-700 dark:text-slate-300">Task id</dt>
          <dd className="flex min-w-0 items-center gap-2 font-mono text-xs">
            <span className="truncate">{h.taskId}</span>
            <CopyButton text={h.taskId} label="Copy task id" />
          </dd>
          <dt className="text-slate-700 dark:text-slate-300">File</dt>
          <dd className="min-w-0 font-mono text-xs break-all">
            {h.dir}/{h.name}
          </dd>
          {h.createdAt ? (
            <>
              <dt className="text-slate-700 dark:text-slate-300">Created · updated</dt>
              <dd className="min-w-0 text-xs">
                <Timestamp ms={Date.parse(h.createdAt)} /> · <Timestamp ms={Date.parse(h.updatedAt)} />
              </dd>
            </>
          ) : null}
        </dl>
      </header>

      {!h.valid ? (
        <div
          className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-950 dark:border-red-800 dark:bg-red-950 dark:text-red-50"
          role="note"
          data-testid="file-invalid"
        >
          <p className="flex items-start gap-1.5 font-medium">
            <Icon name="alert" className="mt-0.5 h-4 w-4 shrink-0" />
            {h.present ? "Not a valid v0.1 handoff. Baton shows it and never modifies, renames or deletes it." : "The file was removed."}
          </p>
          {h.problem ? <p className="mt-1 break-words">{clipParagraph(h.problem)}</p> : null}
          {data.excerpt ? (
            <pre className="mt-2 max-h-40 overflow-auto rounded bg-white/60 p-2 font-mono text-xs whitespace-pre-wrap dark:bg-black/30">
              {data.excerpt}
            </pre>
          ) : null}
        </div>
      ) : h.problem ? (
        <p className="text-sm text-amber-900 dark:text-amber-300" data-testid="file-step-note">
          {clipParagraph(h.problem)}
        </p>
      ) : null}

      {h.valid ? (
        <Section title="What you can do" testId="file-actions-section">
          <FileActions handoff={h} me={me ? { role: me.role, participantId: me.participantId } : null} nameOf={nameOf} />
        </Section>
      ) : null}

      {data.description ? (
        <Section title="Description">
          <p className="text-sm break-words whitespace-pre-wrap text-slate-900 dark:text-slate-100">{clipParagraph(data.description)}</p>
        </Section>
      ) : null}

      {data.contextJson ? (
        <Section title="Context" testId="file-context">
          {context !== undefined ? (
            <JsonView value={context} label="context" />
          ) : (
            <pre className="max-h-96 overflow-auto rounded border border-slate-200 p-2 font-mono text-xs whitespace-pre-wrap dark:border-slate-800">
              {data.contextJson}
              {data.contextTruncated ? "\n… (cut: the context is larger than 64 KiB)" : ""}
            </pre>
          )}
        </Section>
      ) : null}

      <Section title={`Timeline (${h.snapshots} change${h.snapshots === 1 ? "" : "s"} recorded)`}>
        <p className="text-xs text-slate-700 dark:text-slate-300">A v0.1 file keeps no history: Baton records every change it sees.</p>
        <Timeline events={data.timeline} directory={directory} pruned={h.pruned} />
        {data.nextAfterSeq > 0 ? (
          <p className="text-xs text-slate-700 dark:text-slate-300">Showing the first 1,000 recorded changes.</p>
        ) : null}
      </Section>
    </div>
  );
}
