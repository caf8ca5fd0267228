"use client";
// The sign-in form. Without JavaScript it is a plain form post to
// /auth/login (the server redirects back here with ?error= on failure);
// with JavaScript it posts JSON, shows the error in place, and goes on to the
// password change when the account still has a one-time password.

import { useEffect, useRef, useState, type FormEvent } from "react";
import { AuthRequestError, changePasswordHref, oidcLoginHref, safeReturnTo } from "@/lib/views/sign-in";
import { loginErrorMessage, postLogin } from "@/lib/views/sign-in-forms";
import { useAuthMethods, useWhoAmI } from "@/lib/client/use-whoami";
import { Icon } from "@/components/ui/Icon";
import { Button, Field, TextInput, buttonClass } from "@/components/ui/forms";

/** `error` and `reason` are codes from the URL; the message shown for them is fixed text (never the URL's). */
export function LoginForm({ returnTo, error, reason }: { returnTo: string; error: string | null; reason: string | null }) {
  const back = safeReturnTo(returnTo);
  const methods = useAuthMethods();
  const { me, set } = useWhoAmI();
  const [message, setMessage] = useState<string | null>(loginErrorMessage(error, reason));
  const [pending, setPending] = useState(false);
  const alertRef = useRef<HTMLDivElement | null>(null);

  useEffect(() => {
    if (message) alertRef.current?.focus();
  }, [message]);

  const onSubmit = async (e: FormEvent<HTMLFormElement>): Promise<void> => {
    e.preventDefault();
    if (pending) return;
    const form = new FormData(e.currentTarget);
    const username = String(form.get("username") ?? "").trim();
    const password = String(form.get("password") ?? "");
    if (username === "" || password === "") {
      setMessage("Enter a username and a password.");
      return;
    }
    setPending(true);
    setMessage(null);
    try {
      const signedIn = await postLogin(username, password, back);
      set(signedIn);
      // A full navigation: every stream and cache starts again as this person.
      window.location.assign(signedIn.mustChangePassword ? changePasswordHref(back) : back);
    } catch (err) {
      setPending(false);
      setMessage(
        err instanceof AuthRequestError ? err.message : "The console server can't be reached. Check your connection and try again.",
      );
    }
  };

  return (
    <div className="space-y-5">
      {me ? (
        <p className="rounded-md border border-slate-300 px-3 py-2 text-sm dark:border-slate-700" data-testid="already-signed-in">
          You are signed in as <strong>{me.displayName}</strong>.{" "}
          <a href={back} className="font-medium text-blue-800 underline dark:text-sky-300">
            Continue
          </a>
        </p>
      ) : null}
      {message ? (
        <div
          ref={alertRef}
          tabIndex={-1}
          role="alert"
          className="flex items-start gap-2 rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-950 dark:border-red-800 dark:bg-red-950 dark:text-red-50"
          data-testid="login-error"
        >
          <Icon name="alert" className="mt-0.5 h-4 w-4 shrink-0" />
          <span>{message}</span>
        </div>
      ) : null}
      <form method="post" action="/auth/login" onSubmit={(e) => void onSubmit(e)} className="space-y-4" noValidate data-testid="login-form">
        <input type="hidden" name="returnTo" value={back} />
        <Field id="login-username" label="Username">
          <TextInput
            id="login-username"
            name="username"
            autoComplete="username"
            autoCapitalize="none"
            spellCheck={false}
            required
            autoFocus
          />
        </Field>
        <Field id="login-password" label="Password">
          <TextInput id="login-password" name="password" type="password" autoComplete="current-password" required />
        </Field>
        <Button type="submit" variant="primary" className="w-full" pending={pending} disabled={pending}>
          {pending ? "Signing in…" : "Sign in"}
        </Button>
      </form>
      {methods?.oidc ? (
        <div className="space-y-3">
          <div className="flex items-center gap-3 text-xs text-slate-600 dark:text-slate-400" aria-hidden="true">
            <span className="h-px flex-1 bg-slate-300 dark:bg-slate-700" />
            or
            <span className="h-px flex-1 bg-slate-300 dark:bg-slate-700" />
          </div>
          <a href={oidcLoginHref(back)} className={buttonClass("secondary", "w-full")} data-testid="sso-login">
            <Icon name="link" /> Sign in with SSO
          </a>
        </div>
      ) : null}
    </div>
  );
}
