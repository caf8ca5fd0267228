"use client";
// Small pieces shared by the v0.1 file pages: the status pill, the v0.1 mode
// label, an agent/person name, and the answer line of a file action.

import clsx from "clsx";
import type { FileHandoff } from "@/lib/gen/baton/v1/files_pb";
import { actorKindOf, type Directory } from "@/lib/views/directory";
import { fileBadge, V01_MODE_LABEL, type FileOutcome } from "@/lib/views/file-handoffs";
import { Badge } from "@/components/ui/Badge";
import { Icon } from "@/components/ui/Icon";

export function FileStatusBadge({ handoff, size }: { handoff: Pick<FileHandoff, "present" | "valid" | "status">; size?: "sm" | "md" }) {
  return <Badge info={fileBadge(handoff)} kind="Status" {...(size ? { size } : {})} />;
}

export function ModeLabel() {
  return (
    <span
      className="inline-flex items-center gap-1 rounded border border-slate-300 px-1.5 py-0.5 text-xs font-medium text-slate-700 dark:border-slate-600 dark:text-slate-300"
      title="A v0.1 file-based handoff (one JSON file in a watched directory), not an MACP session"
    >
      <Icon name="document" className="h-3.5 w-3.5" />
      {V01_MODE_LABEL}
    </span>
  );
}

/** A participant by name when they are a console person, else the id; "anyone" for an empty to_agent. */
export function Who({ id, directory, anyone = "anyone" }: { id: string; directory: Directory; anyone?: string }) {
  if (id === "") return <span className="italic">{anyone}</span>;
  const person = directory.byParticipant.get(id);
  const kind = actorKindOf(directory, id);
  return (
    <span className="inline-flex min-w-0 items-center gap-1" title={id}>
      <Icon name={kind === "person" ? "user" : "bot"} className="h-3.5 w-3.5 shrink-0" />
      <span className="sr-only">{kind}: </span>
      <span className="truncate">{person ? person.displayName : id}</span>
    </span>
  );
}

export function FileResultLine({
  outcome,
  sentence,
  testId = "file-result",
}: {
  outcome?: FileOutcome;
  sentence?: string;
  testId?: string;
}) {
  if (!outcome || !sentence) return null;
  const ok = outcome.kind === "ok";
  const warn = outcome.kind === "retryable" || outcome.kind === "conflict";
  return (
    <div
      role={ok ? "status" : "alert"}
      className={clsx(
        "flex items-start gap-2 rounded-md border px-3 py-2 text-sm",
        ok
          ? "border-emerald-300 bg-emerald-50 text-emerald-950 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-50"
          : warn
            ? "border-amber-300 bg-amber-50 text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-50"
            : "border-red-300 bg-red-50 text-red-950 dark:border-red-800 dark:bg-red-950 dark:text-red-50",
      )}
      data-testid={testId}
      data-outcome={outcome.kind}
    >
      <Icon name={ok ? "check-circle" : "alert"} className="mt-0.5 h-4 w-4 shrink-0" />
      <p className="min-w-0 break-words">{sentence}</p>
    </div>
  );
}
