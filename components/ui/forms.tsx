"use client";
// Form building blocks shared by the sign-in and action forms: a labelled
// field with hint and error (wired with aria-describedby / aria-invalid),
// inputs with one look in light and dark, a checkbox row for lists of
// choices, buttons, and the result line.

import clsx from "clsx";
import { forwardRef, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes, type TextareaHTMLAttributes } from "react";
import type { ActionOutcome } from "@/lib/views/action-attempt";
import { Icon } from "@/components/ui/Icon";

export const inputClass =
  "block w-full rounded-md border border-slate-400 bg-white px-2.5 py-1.5 text-sm text-slate-900 placeholder:text-slate-500 " +
  "aria-[invalid=true]:border-red-700 disabled:bg-slate-100 disabled:text-slate-600 " +
  "dark:border-slate-500 dark:bg-slate-900 dark:text-slate-100 dark:placeholder:text-slate-400 dark:aria-[invalid=true]:border-red-400 dark:disabled:bg-slate-800 dark:disabled:text-slate-400";

export function describedBy(id: string, hint: boolean, error: boolean): string | undefined {
  const ids = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return ids === "" ? undefined : ids;
}

export function Field({
  id,
  label,
  hint,
  error,
  optional,
  children,
  className,
}: {
  id: string;
  label: ReactNode;
  hint?: ReactNode;
  error?: string;
  optional?: boolean;
  children: ReactNode;
  className?: string;
}) {
  return (
    <div className={clsx("min-w-0 space-y-1", className)}>
      <label htmlFor={id} className="block text-sm font-medium text-slate-900 dark:text-slate-100">
        {label}
        {optional ? <span className="font-normal text-slate-600 dark:text-slate-400"> (optional)</span> : null}
      </label>
      {children}
      {hint ? (
        <p id={`${id}-hint`} className="text-xs text-slate-600 dark:text-slate-400">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p id={`${id}-error`} className="flex items-start gap-1 text-xs font-medium text-red-800 dark:text-red-300" data-field-error>
          <Icon name="alert" className="mt-px h-3.5 w-3.5 shrink-0" />
          {error}
        </p>
      ) : null}
    </div>
  );
}

type InputProps = InputHTMLAttributes<HTMLInputElement> & { invalid?: boolean; hasHint?: boolean };

export const TextInput = forwardRef<HTMLInputElement, InputProps>(function TextInput({ invalid, hasHint, className, id, ...rest }, ref) {
  return (
    <input
      ref={ref}
      id={id}
      aria-invalid={invalid ? true : undefined}
      aria-describedby={id ? describedBy(id, hasHint === true, invalid === true) : undefined}
      className={clsx(inputClass, className)}
      {...rest}
    />
  );
});

type TextAreaProps = TextareaHTMLAttributes<HTMLTextAreaElement> & { invalid?: boolean; hasHint?: boolean };

export const TextArea = forwardRef<HTMLTextAreaElement, TextAreaProps>(function TextArea(
  { invalid, hasHint, className, id, ...rest },
  ref,
) {
  return (
    <textarea
      ref={ref}
      id={id}
      aria-invalid={invalid ? true : undefined}
      aria-describedby={id ? describedBy(id, hasHint === true, invalid === true) : undefined}
      className={clsx(inputClass, "min-h-20", className)}
      {...rest}
    />
  );
});

type SelectProps = SelectHTMLAttributes<HTMLSelectElement> & { invalid?: boolean; hasHint?: boolean };

export function Select({ invalid, hasHint, className, id, ...rest }: SelectProps) {
  return (
    <select
      id={id}
      aria-invalid={invalid ? true : undefined}
      aria-describedby={id ? describedBy(id, hasHint === true, invalid === true) : undefined}
      className={clsx(inputClass, "pr-8", className)}
      {...rest}
    />
  );
}

/** One checkbox of a list of choices (people, approvers): the whole row is its label. */
export function CheckRow({
  id,
  field,
  checked,
  onChange,
  testId,
  children,
}: {
  id?: string;
  /** Marks the input to focus when this group has an error. */
  field?: string | undefined;
  checked: boolean;
  onChange: (on: boolean) => void;
  testId?: string;
  children: ReactNode;
}) {
  return (
    <li>
      <label
        htmlFor={id}
        className="flex cursor-pointer items-start gap-2 rounded-md px-2 py-1.5 text-sm hover:bg-slate-50 dark:hover:bg-slate-800"
      >
        <input
          id={id}
          type="checkbox"
          data-field={field}
          checked={checked}
          onChange={(e) => onChange(e.currentTarget.checked)}
          className="mt-0.5 h-4 w-4 shrink-0 accent-blue-700 dark:accent-sky-300"
          data-testid={testId}
        />
        <span className="min-w-0">{children}</span>
      </label>
    </li>
  );
}

export { Button, buttonClass, type ButtonVariant } from "@/components/ui/button";

/** The answer to the last submit: success, the runtime's refusal (MACP code + sentence), or why it didn't go. */
export function ActionResultLine({
  outcome,
  sentence,
  testId = "action-result",
}: {
  outcome?: ActionOutcome;
  sentence?: string;
  testId?: string;
}) {
  if (!outcome || !sentence) return null;
  const ok = outcome.kind === "ok";
  const retry = outcome.kind === "retryable";
  return (
    <div
      className={clsx(
        "flex items-start gap-2 rounded-md border px-3 py-2 text-sm",
        ok
          ? "border-emerald-300 bg-emerald-50 text-emerald-950 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-50"
          : retry
            ? "border-amber-300 bg-amber-50 text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-50"
            : "border-red-300 bg-red-50 text-red-950 dark:border-red-800 dark:bg-red-950 dark:text-red-50",
      )}
      data-testid={testId}
      data-outcome={outcome.kind}
      {...(outcome.kind === "rejected" ? { "data-code": outcome.code } : {})}
    >
      <Icon name={ok ? "check-circle" : "alert"} className="mt-0.5 h-4 w-4 shrink-0" />
      <div className="min-w-0">
        {outcome.kind === "rejected" ? (
          <p>
            <span className="font-semibold">Refused by the runtime: </span>
            <code className="rounded bg-white/60 px-1 font-mono text-xs font-semibold dark:bg-black/30">{outcome.code}</code>
            <span className="block">{outcome.explanation}</span>
            {outcome.detail ? <span className="block text-xs opacity-90">Runtime: {outcome.detail}</span> : null}
          </p>
        ) : (
          <p className="break-words">{sentence}</p>
        )}
      </div>
    </div>
  );
}
