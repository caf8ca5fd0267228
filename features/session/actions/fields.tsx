"use client";
// The fields the session's action forms share: a short text (a reason, a
// message, a summary), the authority scope of a commitment, a participant of
// the session to address, and a commitment's outcome. Each is a labelled
// input bound to one string of its form; the form owns the values and the
// problems (lib/client/use-action-form.ts).

import clsx from "clsx";
import type { ReactNode } from "react";
import { Field, Select, TextArea, TextInput } from "@/components/ui/forms";

/** A few lines of text: a reason, a message, a summary. */
export function TextAreaField({
  id,
  label = "Reason",
  value,
  onChange,
  error,
  optional,
  hint,
  rows = 2,
}: {
  id: string;
  label?: string;
  value: string;
  onChange(value: string): void;
  error: string | undefined;
  optional?: boolean;
  hint?: string | undefined;
  rows?: number;
}) {
  return (
    <Field id={id} label={label} optional={optional} error={error} hint={hint}>
      <TextArea
        id={id}
        value={value}
        onChange={(e) => onChange(e.currentTarget.value)}
        rows={rows}
        invalid={Boolean(error)}
        hasHint={hint !== undefined}
      />
    </Field>
  );
}

/** What a commitment binds: its authority scope. */
export function AuthorityScopeField({
  id,
  value,
  onChange,
  error,
}: {
  id: string;
  value: string;
  onChange(value: string): void;
  error: string | undefined;
}) {
  return (
    <Field id={id} label="Authority scope" error={error}>
      <TextInput id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)} invalid={Boolean(error)} />
    </Field>
  );
}

/** One of the session's participants (an offer's target, a task's assignee), by name and id. */
export function ParticipantSelect({
  id,
  label,
  none,
  choices,
  nameOf,
  value,
  onChange,
  error,
}: {
  id: string;
  label: string;
  /** The first option, for "no one chosen". */
  none: string;
  choices: readonly string[];
  nameOf(id: string): string;
  value: string;
  onChange(value: string): void;
  error: string | undefined;
}) {
  return (
    <Field id={id} label={label} error={error}>
      <Select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)} invalid={Boolean(error)}>
        <option value="">{none}</option>
        {choices.map((p) => (
          <option key={p} value={p}>
            {nameOf(p)} ({p})
          </option>
        ))}
      </Select>
    </Field>
  );
}

export interface OutcomeOption<T extends string> {
  value: T;
  label: string;
  /** What the outcome means, under its label. */
  hint?: ReactNode;
  disabled?: boolean;
}

/** A commitment's outcome: one radio per option. */
export function OutcomeChoice<T extends string>({
  name,
  options,
  value,
  onChange,
}: {
  name: string;
  options: readonly OutcomeOption<NoInfer<T>>[];
  value: T;
  onChange(value: T): void;
}) {
  return (
    <fieldset className="space-y-1.5">
      <legend className="text-sm font-medium">Outcome</legend>
      {options.map((o) => (
        <label key={o.value} className={clsx("flex gap-2 text-sm has-[:disabled]:opacity-70", o.hint ? "items-start" : "items-center")}>
          <input
            type="radio"
            name={name}
            checked={value === o.value}
            disabled={o.disabled}
            onChange={() => onChange(o.value)}
            className={clsx("accent-blue-700 dark:accent-sky-300", o.hint && "mt-0.5")}
          />
          {o.hint ? (
            <span>
              <span className="font-medium">{o.label}</span>
              <span className="block text-xs text-slate-700 dark:text-slate-300">{o.hint}</span>
            </span>
          ) : (
            o.label
          )}
        </label>
      ))}
    </fieldset>
  );
}
