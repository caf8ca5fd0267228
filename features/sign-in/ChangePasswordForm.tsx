"use client";
// Choose a new password: required at the first sign-in with a one-time
// password (every other page sends the person here until it is done), and
// available from the account menu afterwards.

import { useRef, useState, type FormEvent } from "react";
import { AuthRequestError, safeReturnTo } from "@/lib/views/sign-in";
import { newPasswordProblem, postPasswordChange } from "@/lib/views/sign-in-forms";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { Icon } from "@/components/ui/Icon";
import { Button, Field, TextInput } from "@/components/ui/forms";

type FieldName = "currentPassword" | "newPassword" | "confirm";

export function ChangePasswordForm({ returnTo }: { returnTo: string }) {
  const back = safeReturnTo(returnTo);
  const { me, set } = useWhoAmI();
  const [errors, setErrors] = useState<Partial<Record<FieldName, string>>>({});
  const [message, setMessage] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const refs = {
    currentPassword: useRef<HTMLInputElement | null>(null),
    newPassword: useRef<HTMLInputElement | null>(null),
    confirm: useRef<HTMLInputElement | null>(null),
  };

  if (me === undefined) return <p className="text-sm text-slate-700 dark:text-slate-300">Checking your sign-in…</p>;
  if (me === null) return null;
  if (me.authMethod === "oidc") {
    return (
      <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="password-oidc">
        You signed in with your identity provider; change your password there.
      </p>
    );
  }

  const onSubmit = async (e: FormEvent<HTMLFormElement>): Promise<void> => {
    e.preventDefault();
    if (pending) return;
    const form = new FormData(e.currentTarget);
    const current = String(form.get("currentPassword") ?? "");
    const next = String(form.get("newPassword") ?? "");
    const confirm = String(form.get("confirm") ?? "");
    const found: Partial<Record<FieldName, string>> = {};
    if (current === "") found.currentPassword = "Enter your current password.";
    const problem = newPasswordProblem(next, confirm, current);
    if (problem) found[problem.field] = problem.message;
    setErrors(found);
    setMessage(null);
    const firstBad = (["currentPassword", "newPassword", "confirm"] as const).find((f) => found[f]);
    if (firstBad) {
      refs[firstBad].current?.focus();
      return;
    }
    setPending(true);
    try {
      const updated = await postPasswordChange(me.csrfToken, current, next);
      set(updated);
      window.location.assign(back);
    } catch (err) {
      setPending(false);
      const text = err instanceof AuthRequestError ? err.message : "The console server can't be reached. Try again.";
      if (err instanceof AuthRequestError && err.status === 401) {
        setErrors({ currentPassword: text });
        refs.currentPassword.current?.focus();
      } else setMessage(text);
    }
  };

  return (
    <form onSubmit={(e) => void onSubmit(e)} className="space-y-4" noValidate data-testid="password-form">
      {me.mustChangePassword ? (
        <p className="flex items-start gap-2 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-50">
          <Icon name="alert" className="mt-0.5 h-4 w-4 shrink-0" />
          You signed in with a one-time password. Choose your own before you continue.
        </p>
      ) : null}
      {message ? (
        <p role="alert" className="text-sm font-medium text-red-800 dark:text-red-300">
          {message}
        </p>
      ) : null}
      <input type="text" name="username" autoComplete="username" value={me.username} readOnly hidden />
      <Field id="pw-current" label="Current password" error={errors.currentPassword}>
        <TextInput
          ref={refs.currentPassword}
          id="pw-current"
          name="currentPassword"
          type="password"
          autoComplete="current-password"
          invalid={Boolean(errors.currentPassword)}
          autoFocus
        />
      </Field>
      <Field id="pw-new" label="New password" hint="At least 10 characters." error={errors.newPassword}>
        <TextInput
          ref={refs.newPassword}
          id="pw-new"
          name="newPassword"
          type="password"
          autoComplete="new-password"
          invalid={Boolean(errors.newPassword)}
          hasHint
        />
      </Field>
      <Field id="pw-confirm" label="New password again" error={errors.confirm}>
        <TextInput
          ref={refs.confirm}
          id="pw-confirm"
          name="confirm"
          type="password"
          autoComplete="new-password"
          invalid={Boolean(errors.confirm)}
        />
      </Field>
      <Button type="submit" variant="primary" pending={pending} disabled={pending}>
        {pending ? "Saving…" : "Save the new password"}
      </Button>
    </form>
  );
}
