"use client";
// The hand-off dialog's own fields: "To" (people by name from the directory,
// agents seen recently, or a typed agent id), "Also on the rotation" (more
// people in the session, who may be offered it later) and the runbook (written here or
// read from a .md/.txt file, with the room left). The values and problems are
// the dialog's (use-hand-off-dialog.ts); these only draw them.

import clsx from "clsx";
import type { Errors, HandOffValues } from "@/lib/client/action-forms";
import { ROLE_LABELS } from "@/lib/views/sign-in";
import { nameIn, type Directory, type Person, type participantChoices } from "@/lib/views/directory";
import { formatBytes } from "@/lib/views/format";
import { Icon } from "@/components/ui/Icon";
import { CheckRow, Field, Select, TextArea, TextInput } from "@/components/ui/forms";

const OTHER = "__other__";

export function TargetFields({
  target,
  otherTarget,
  error,
  choices,
  directory,
  onChoose,
  onType,
}: {
  target: string;
  /** "Another agent" is chosen: its id is typed. */
  otherTarget: boolean;
  error: string | undefined;
  choices: ReturnType<typeof participantChoices>;
  directory: Directory;
  onChoose(id: string, other: boolean): void;
  onType(id: string): void;
}) {
  return (
    <>
      <Field id="ho-target" label="To" error={error} hint="The person or agent who takes it over.">
        <Select
          id="ho-target"
          data-field="target"
          value={otherTarget ? OTHER : target}
          hasHint
          invalid={Boolean(error)}
          onChange={(e) => {
            const id = e.currentTarget.value;
            onChoose(id, id === OTHER);
          }}
          data-testid="hand-off-target"
        >
          <option value="">Choose who takes it over…</option>
          {choices.people.length > 0 ? (
            <optgroup label="People">
              {choices.people.map((p) => (
                <option key={p.participantId} value={p.participantId}>
                  {p.displayName} ({ROLE_LABELS[p.role]})
                </option>
              ))}
            </optgroup>
          ) : null}
          {choices.agents.length > 0 ? (
            <optgroup label="Agents seen recently">
              {choices.agents.slice(0, 20).map((a) => (
                <option key={a} value={a}>
                  {nameIn(directory, a)}
                </option>
              ))}
            </optgroup>
          ) : null}
          <option value={OTHER}>Another agent (type its id)…</option>
        </Select>
      </Field>
      {otherTarget ? (
        <Field id="ho-target-id" label="Agent id" error={error}>
          <TextInput
            id="ho-target-id"
            data-field="target"
            value={target}
            placeholder="agent://team/name"
            spellCheck={false}
            autoCapitalize="none"
            onChange={(e) => onType(e.currentTarget.value)}
            invalid={Boolean(error)}
          />
        </Field>
      ) : null}
    </>
  );
}

/**
 * "Also on the rotation": people who join the session besides the one it is
 * offered to, so that after a decline the owner can offer it to one of them
 * in the same session. The target is left out; ids kept by a template that
 * are not in the list (an agent, a person since removed) stay as rows of
 * their own, so they can be cleared.
 */
export function RotationField({
  target,
  rotation,
  people,
  directory,
  error,
  onChange,
}: {
  target: string;
  rotation: readonly string[];
  people: readonly Person[];
  directory: Directory;
  error: string | undefined;
  onChange(rotation: string[]): void;
}) {
  const shown = people.filter((p) => p.participantId !== target);
  const others = rotation.filter((id) => id !== target && !shown.some((p) => p.participantId === id));
  if (shown.length === 0 && others.length === 0) return null;
  const toggle = (id: string, on: boolean): void => {
    const rest = rotation.filter((x) => x !== id);
    onChange(on ? [...rest, id] : rest);
  };
  return (
    <fieldset className="space-y-1" aria-describedby="ho-rotation-hint" data-testid="hand-off-rotation">
      <legend className="text-sm font-medium">
        Also on the rotation <span className="font-normal text-slate-600 dark:text-slate-400">(optional)</span>
      </legend>
      <p id="ho-rotation-hint" className="text-xs text-slate-600 dark:text-slate-400">
        May be offered it later: they join the session, so if {nameIn(directory, target) || "the person you choose"} declines you can offer
        it to one of them from the session.
      </p>
      <ul className="grid max-h-48 gap-0.5 overflow-y-auto sm:grid-cols-2">
        {shown.map((p, i) => (
          <CheckRow
            key={p.participantId}
            field={i === 0 ? "rotation" : undefined}
            checked={rotation.includes(p.participantId)}
            onChange={(on) => toggle(p.participantId, on)}
            testId={`hand-off-rotation-${p.username}`}
          >
            <span className="font-medium">{p.displayName}</span>{" "}
            <span className="text-slate-600 dark:text-slate-400">({ROLE_LABELS[p.role]})</span>
          </CheckRow>
        ))}
        {others.map((id, i) => (
          <CheckRow
            key={id}
            field={shown.length === 0 && i === 0 ? "rotation" : undefined}
            checked
            onChange={(on) => toggle(id, on)}
            testId={`hand-off-rotation-other-${i}`}
          >
            <span className="font-medium break-all">{nameIn(directory, id)}</span>
          </CheckRow>
        ))}
      </ul>
      {error ? (
        <p id="ho-rotation-error" className="flex items-start gap-1 text-xs font-medium text-red-800 dark:text-red-300" data-field-error>
          <Icon name="alert" className="mt-px h-3.5 w-3.5 shrink-0" />
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

export function RunbookField({
  v,
  errors,
  locked,
  room,
  bytes,
  targetName,
  onChange,
  onFile,
}: {
  v: HandOffValues;
  errors: Errors;
  locked: boolean;
  /** The bytes a runbook may take (runbookRoom). */
  room: number;
  bytes: number;
  targetName: string;
  onChange(markdown: string): void;
  onFile(file: File): void;
}) {
  return (
    <div className="space-y-1">
      <div className="flex flex-wrap items-center gap-2">
        <label htmlFor="ho-runbook" className="text-sm font-medium">
          Runbook <span className="font-normal text-slate-600 dark:text-slate-400">(Markdown, optional)</span>
        </label>
        <label
          className={clsx(
            "ml-auto inline-flex cursor-pointer items-center gap-1 rounded-md px-2 py-1 text-sm font-medium text-blue-800 ring-1 ring-slate-300 ring-inset hover:bg-slate-100 has-[:focus-visible]:outline-2 has-[:focus-visible]:outline-blue-600 dark:text-sky-300 dark:ring-slate-600 dark:hover:bg-slate-800",
            locked && "pointer-events-none opacity-60",
          )}
        >
          <Icon name="document" className="h-4 w-4" />
          Upload .md or .txt
          <input
            type="file"
            accept=".md,.markdown,.txt,text/markdown,text/plain"
            className="sr-only"
            disabled={locked}
            data-testid="hand-off-runbook-file"
            onChange={(e) => {
              const f = e.currentTarget.files?.[0];
              e.currentTarget.value = "";
              if (f) onFile(f);
            }}
          />
        </label>
      </div>
      <TextArea
        id="ho-runbook"
        data-field="runbook"
        rows={8}
        value={v.runbook}
        className="font-mono text-xs"
        spellCheck={false}
        placeholder={"# Runbook\n\n1. Check the dashboards"}
        onChange={(e) => onChange(e.currentTarget.value)}
        invalid={Boolean(errors.runbook)}
        hasHint
      />
      <p
        id="ho-runbook-hint"
        className={clsx("text-xs", bytes > room ? "font-medium text-red-800 dark:text-red-300" : "text-slate-600 dark:text-slate-400")}
      >
        {formatBytes(bytes)} of at most {formatBytes(room)}. Sent with the offer; {targetName || "the person taking over"} sees it first.
      </p>
      {errors.runbook ? (
        <p id="ho-runbook-error" className="flex items-start gap-1 text-xs font-medium text-red-800 dark:text-red-300" data-field-error>
          <Icon name="alert" className="mt-px h-3.5 w-3.5 shrink-0" />
          {errors.runbook}
        </p>
      ) : null}
    </div>
  );
}
