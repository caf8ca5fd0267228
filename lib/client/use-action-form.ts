"use client";
// The one sequence every action form follows, written once:
//
//   validate → show the problems and focus the first invalid field
//            → (ask to confirm, for final actions) → send
//            → show the field the server refused, next to its input.
//
// useFormSequence() is the sequence with any sender (the hand-off dialog's
// several calls, the file-handoff forms); useActionForm() is it with one
// ActionService call through useAction (attempt ids, double-submit guard,
// CSRF retry, the announced sentence). The forms keep their own fields,
// labels and test ids; the wording of problems is in lib/client/action-forms.ts.

import { useState, type Dispatch, type FormEvent, type SetStateAction } from "react";
import type { ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import type { ActionOutcome } from "@/lib/views/action-attempt";
import { serverFieldErrors, type Errors, type Validation } from "@/lib/client/action-forms";
import { useAction, type ActionState, type UseAction } from "@/lib/client/use-action";

/** Move focus to the first field marked invalid, after the errors render. */
export function focusInvalid(form: HTMLFormElement | null): void {
  requestAnimationFrame(() => form?.querySelector<HTMLElement>("[aria-invalid=true]")?.focus());
}

/** What a send ends with: an ActionService outcome, or another kind (the file forms'). */
interface Outcome {
  kind: string;
}

export interface FormSequenceOptions<V, O extends Outcome = ActionOutcome> {
  /** The fields as the sender takes them, or the problems (the first is focused). */
  validate(): Validation<V>;
  /** Send the checked value; the outcome decides which field the server refused. */
  send(value: V): Promise<O | undefined>;
  /** Ask before sending: submit opens the confirmation, `confirm()` sends. */
  confirm?: boolean;
  /** Where focus goes when there are problems; default: the first `aria-invalid` field of the form. */
  focus?(errors: Errors, form: HTMLFormElement | null): void;
  /** The server's refusal as field problems; default (ActionOutcome): `serverFieldErrors`. */
  serverErrors?(outcome: O | undefined): Errors | null;
  /** Focus the field the server refused too (default: only show it). */
  focusServerErrors?: boolean;
  /** Called with the problems validation found (e.g. leave a preview to show the field). */
  onInvalid?(errors: Errors): void;
  /** The confirmation's open state, when the caller must close it itself. */
  confirmState?: [boolean, Dispatch<SetStateAction<boolean>>];
}

export interface FormSequence {
  errors: Errors;
  setErrors: Dispatch<SetStateAction<Errors>>;
  /** The form's onSubmit. */
  onSubmit(e: FormEvent<HTMLFormElement>): void;
  /** The confirmation is open (only with `confirm`). */
  confirming: boolean;
  /** Send from the confirmation. */
  confirm(): void;
  /** Close the confirmation without sending. */
  cancelConfirm(): void;
}

export function useFormSequence<V, O extends Outcome = ActionOutcome>(o: FormSequenceOptions<V, O>): FormSequence {
  const [errors, setErrors] = useState<Errors>({});
  const own = useState(false);
  const [confirming, setConfirming] = o.confirmState ?? own;

  const fail = (errs: Errors, form: HTMLFormElement | null): void => {
    setErrors(errs);
    o.onInvalid?.(errs);
    (o.focus ?? ((_e: Errors, f: HTMLFormElement | null) => focusInvalid(f)))(errs, form);
  };

  const send = async (value: V, form: HTMLFormElement | null): Promise<void> => {
    const outcome = await o.send(value);
    if (o.confirm && outcome && outcome.kind !== "ok") setConfirming(false);
    // Without serverErrors the outcome is an ActionOutcome (the default O).
    const errs = o.serverErrors ? o.serverErrors(outcome) : serverFieldErrors(outcome as ActionOutcome | undefined);
    if (!errs) return;
    setErrors(errs);
    if (o.focusServerErrors) (o.focus ?? ((_e: Errors, f: HTMLFormElement | null) => focusInvalid(f)))(errs, form);
  };

  const onSubmit = (e: FormEvent<HTMLFormElement>): void => {
    e.preventDefault();
    const form = e.currentTarget;
    const checked = o.validate();
    if (!checked.ok) {
      fail(checked.errors, form);
      return;
    }
    setErrors({});
    if (o.confirm) {
      setConfirming(true);
      return;
    }
    void send(checked.value, form);
  };

  const confirm = (): void => {
    const checked = o.validate();
    if (!checked.ok) return;
    void send(checked.value, null);
  };

  return { errors, setErrors, onSubmit, confirming, confirm, cancelConfirm: () => setConfirming(false) };
}

export interface ActionFormOptions<V> extends Omit<FormSequenceOptions<V>, "send" | "confirmState"> {
  /** The success sentence without a full stop (announced), as useAction takes it. */
  done: string;
  /** The action went through (the confirmation is closed first). */
  onOk?(outcome: Extract<ActionOutcome, { kind: "ok" }>): void;
  /** One ActionService call with the attempt's message id. */
  send(value: V, messageId: string): Promise<ActionResult>;
  /** What identifies the attempt (same fields, same message id); default: the value. */
  fingerprint?(value: V): unknown;
}

export interface ActionForm extends FormSequence {
  state: ActionState;
  action: UseAction;
}

/** useFormSequence with one ActionService call (useAction). */
export function useActionForm<V>(o: ActionFormOptions<V>): ActionForm {
  const confirmState = useState(false);
  const [, setConfirming] = confirmState;
  const action = useAction(o.done, (ok) => {
    setConfirming(false);
    o.onOk?.(ok);
  });
  const seq = useFormSequence<V>({
    ...o,
    confirmState,
    send: (value) => action.submit(o.fingerprint ? o.fingerprint(value) : value, (messageId) => o.send(value, messageId)),
  });
  return { ...seq, state: action.state, action };
}

/** A checked value turned into what the sender takes (problems pass through). */
export function mapValidation<T, U>(checked: Validation<T>, f: (value: T) => U): Validation<U> {
  return checked.ok ? { ok: true, value: f(checked.value) } : checked;
}
