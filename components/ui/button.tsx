// A button, and its look for links that look like one. Its own module (no
// "use client") so the header (its links, the notification toggle in the
// user menu) takes only this, not the form building blocks of forms.tsx, into
// every page's first load.

import clsx from "clsx";
import { forwardRef, type ButtonHTMLAttributes } from "react";

const BUTTON: Record<"primary" | "secondary" | "danger" | "quiet", string> = {
  primary:
    "bg-blue-700 text-white hover:bg-blue-800 ring-blue-700 dark:bg-sky-300 dark:text-slate-950 dark:hover:bg-sky-200 dark:ring-sky-300",
  secondary:
    "bg-white text-slate-900 ring-slate-400 hover:bg-slate-100 dark:bg-slate-900 dark:text-slate-100 dark:ring-slate-500 dark:hover:bg-slate-800",
  danger: "bg-red-700 text-white hover:bg-red-800 ring-red-700 dark:bg-red-300 dark:text-red-950 dark:hover:bg-red-200 dark:ring-red-300",
  quiet: "text-blue-800 ring-transparent hover:bg-slate-100 dark:text-sky-300 dark:hover:bg-slate-800",
};

export type ButtonVariant = keyof typeof BUTTON;

export function buttonClass(variant: ButtonVariant, extra?: string): string {
  return clsx(
    "inline-flex min-h-9 items-center justify-center gap-1.5 rounded-md px-3 py-1.5 text-sm font-semibold ring-1 ring-inset",
    "aria-disabled:cursor-not-allowed aria-disabled:opacity-60 disabled:cursor-not-allowed disabled:opacity-60",
    BUTTON[variant],
    extra,
  );
}

type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & { variant?: ButtonVariant; pending?: boolean };

export const Button = forwardRef<HTMLButtonElement, ButtonProps>(function Button(
  { variant = "secondary", pending, className, children, type = "button", ...rest },
  ref,
) {
  return (
    <button ref={ref} type={type} className={buttonClass(variant, className)} aria-busy={pending ? true : undefined} {...rest}>
      {pending ? (
        <span
          className="h-3.5 w-3.5 rounded-full border-2 border-current border-t-transparent motion-safe:animate-spin"
          aria-hidden="true"
        />
      ) : null}
      {children}
    </button>
  );
});
