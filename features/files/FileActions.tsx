"use client";
// The buttons a person may press on one v0.1 handoff, decided by the same
// decide() the server runs (lib/authz): accept or turn down an offer made to
// them (or to anyone), complete or fail what they accepted, offer again what
// they offered and failed. Every write carries the hash of the snapshot on
// screen, so it lands only on exactly what the person saw.

import { useId, useState, type FormEvent } from "react";
import { decide, type FileAction } from "@/lib/authz/decide";
import type { Role } from "@/lib/authz/roles";
import { FileHandoffAction, type FileHandoff } from "@/lib/gen/baton/v1/files_pb";
import { isFileStatus } from "@/lib/views/file-handoffs";
import { fileClient } from "@/lib/client/transport";
import { useFileAction } from "@/lib/client/use-file-handoffs";
import { Button, Field, TextInput, type ButtonVariant } from "@/components/ui/forms";
import { FileResultLine } from "@/features/files/FileBits";

interface Spec {
  action: FileAction;
  proto: FileHandoffAction;
  label: string;
  done: string;
  variant: ButtonVariant;
  /** An optional note, written into the context under this key. */
  note?: { key: string; label: string };
  /** Re-offer: who to offer it to. */
  to?: boolean;
}

const SPECS: readonly Spec[] = [
  {
    action: "fileAccept",
    proto: FileHandoffAction.ACCEPT,
    label: "Accept",
    done: "Accepted: the file now names you as to_agent",
    variant: "primary",
  },
  {
    action: "fileComplete",
    proto: FileHandoffAction.COMPLETE,
    label: "Complete",
    done: "Marked completed",
    variant: "primary",
    note: { key: "result", label: "Result" },
  },
  {
    action: "fileReject",
    proto: FileHandoffAction.REJECT,
    label: "Turn down",
    done: "Turned down",
    variant: "secondary",
    note: { key: "reason", label: "Reason" },
  },
  {
    action: "fileFail",
    proto: FileHandoffAction.FAIL,
    label: "Mark failed",
    done: "Marked failed",
    variant: "danger",
    note: { key: "reason", label: "Reason" },
  },
  { action: "fileReoffer", proto: FileHandoffAction.REOFFER, label: "Offer again", done: "Offered again", variant: "secondary", to: true },
];

type Submit = ReturnType<typeof useFileAction>["submit"];

/** The action that moves a handoff on from each status (final ones have none). */
const NEXT_STEP: Readonly<Record<string, FileAction | undefined>> = Object.freeze({
  offered: "fileAccept",
  accepted: "fileComplete",
  failed: "fileReoffer",
});

function ActionForm({ spec, handoff, submit, pending }: { spec: Spec; handoff: FileHandoff; submit: Submit; pending: boolean }) {
  const id = useId();
  const [note, setNote] = useState("");
  const [to, setTo] = useState("");
  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const context: Record<string, string> = spec.note && note.trim() !== "" ? { [spec.note.key]: note.trim() } : {};
    await submit(
      { a: spec.action, hash: handoff.hash, context, to },
      () =>
        fileClient().actOnFileHandoff({
          dirKey: handoff.dirKey,
          taskId: handoff.taskId,
          action: spec.proto,
          expectHash: handoff.hash,
          context,
          toAgent: spec.to ? to.trim() : "",
        }),
      spec.done,
    );
  };
  return (
    <form
      onSubmit={onSubmit}
      className="space-y-2 rounded-md border border-slate-200 p-3 dark:border-slate-800"
      data-testid={`file-action-${spec.action}`}
    >
      {spec.note ? (
        <Field id={`${id}-note`} label={spec.note.label} optional>
          <TextInput id={`${id}-note`} value={note} onChange={(e) => setNote(e.target.value)} maxLength={2000} />
        </Field>
      ) : null}
      {spec.to ? (
        <Field id={`${id}-to`} label="Offer to" optional hint="Empty: anyone may take it.">
          <TextInput id={`${id}-to`} value={to} onChange={(e) => setTo(e.target.value)} hasHint spellCheck={false} autoComplete="off" />
        </Field>
      ) : null}
      <Button type="submit" variant={spec.variant} pending={pending} aria-disabled={pending} data-testid={`file-${spec.action}`}>
        {spec.label}
      </Button>
    </form>
  );
}

export function FileActions({
  handoff,
  me,
  nameOf,
}: {
  handoff: FileHandoff;
  me: { role: Role; participantId: string } | null;
  nameOf: (id: string) => string;
}) {
  const { state, submit } = useFileAction("Done");
  // A success is shown while the file is what it made; a later change by someone else replaces it.
  const stale = state.outcome?.kind === "ok" && state.result?.handoff !== undefined && state.result.handoff.hash !== handoff.hash;
  const result = stale ? null : <FileResultLine outcome={state.outcome} sentence={state.sentence} />;
  if (!me) return <p className="text-sm text-slate-700 dark:text-slate-300">Sign in to act on this handoff.</p>;
  if (!isFileStatus(handoff.status)) return null;
  const file = {
    present: handoff.present,
    valid: handoff.valid,
    status: handoff.status,
    fromAgent: handoff.fromAgent,
    toAgent: handoff.toAgent,
  };
  const decisions = SPECS.map((spec) => ({ spec, d: decide(me, undefined, spec.action, { file, nameOf }) }));
  const allowed = decisions.filter((x) => x.d.allowed);
  if (allowed.length === 0) {
    // The most telling reason: why not the step that comes next from this status.
    const next = NEXT_STEP[handoff.status];
    const why = next ? decisions.find((x) => x.spec.action === next) : undefined;
    const reason =
      why && !why.d.allowed ? why.d.reason : `This handoff is ${handoff.status}, which is final: nothing more can happen to it.`;
    return (
      <div className="space-y-2">
        {result}
        <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="file-no-actions">
          Nothing for you to do here. {reason}
        </p>
      </div>
    );
  }
  return (
    <div className="space-y-3">
      {result}
      <div className="grid items-start gap-3 sm:grid-cols-2" data-testid="file-actions">
        {allowed.map(({ spec }) => (
          <ActionForm key={spec.action} spec={spec} handoff={handoff} submit={submit} pending={state.pending} />
        ))}
      </div>
    </div>
  );
}
