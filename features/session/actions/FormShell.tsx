"use client";
// The frame every action form of the session's panel shares: a titled region
// that takes focus when it opens, a Close button that hands focus back, and
// the result line. The sequence inside (validate, focus, confirm, send, server
// errors) is lib/client/use-action-form.ts.

import { useEffect, useId, useRef, type FormEvent, type ReactNode } from "react";
import type { Actor, DecideContext } from "@/lib/authz/decide";
import type { SessionView } from "@/lib/macp/projections/session";
import type { ActionState } from "@/lib/client/use-action";
import { ActionResultLine, Button } from "@/components/ui/forms";

export interface FormProps {
  onClose(): void;
  /** The action went through: the panel closes the form and shows the sentence. */
  onDone(sentence: string): void;
}

/** What every form of the session's panel is given: the session, the person, and decide()'s context. */
export interface SessionFormProps extends FormProps {
  sessionId: string;
  view: SessionView;
  me: Actor;
  ctx: DecideContext;
  nameOf: (id: string) => string;
}

export function FormShell({
  title,
  description,
  onSubmit,
  onClose,
  state,
  submitLabel,
  pendingLabel,
  submitVariant = "primary",
  testId,
  children,
}: {
  title: string;
  description?: ReactNode;
  onSubmit(e: FormEvent<HTMLFormElement>): void;
  onClose(): void;
  state: ActionState;
  submitLabel: string;
  pendingLabel: string;
  submitVariant?: "primary" | "danger";
  testId: string;
  children: ReactNode;
}) {
  const titleId = useId();
  const ref = useRef<HTMLFormElement | null>(null);
  useEffect(() => {
    const first = ref.current?.querySelector<HTMLElement>("input:not([type=hidden]):not([disabled]), textarea, select");
    first?.focus();
  }, []);
  return (
    // Escape closes the form (the handler listens for that key only).
    // eslint-disable-next-line jsx-a11y/no-noninteractive-element-interactions
    <form
      ref={ref}
      aria-labelledby={titleId}
      onSubmit={onSubmit}
      onKeyDown={(e) => {
        if (e.key === "Escape" && !state.pending) {
          e.stopPropagation();
          onClose();
        }
      }}
      noValidate
      className="space-y-4 rounded-lg border border-blue-300 bg-blue-50/40 p-4 dark:border-sky-800 dark:bg-slate-900"
      data-testid={testId}
    >
      <div>
        <h3 id={titleId} className="text-base font-semibold">
          {title}
        </h3>
        {description ? <div className="mt-0.5 text-sm text-slate-700 dark:text-slate-300">{description}</div> : null}
      </div>
      {children}
      <ActionResultLine outcome={state.outcome?.kind === "ok" ? undefined : state.outcome} sentence={state.sentence} />
      <div className="flex flex-wrap gap-2">
        <Button
          type="submit"
          variant={submitVariant}
          pending={state.pending}
          aria-disabled={state.pending ? true : undefined}
          data-testid={`${testId}-submit`}
        >
          {state.pending ? pendingLabel : submitLabel}
        </Button>
        <Button onClick={onClose} disabled={state.pending}>
          Close
        </Button>
      </div>
    </form>
  );
}
