"use client";
// The signed-in person in the header: name and role, and a menu with their
// participant id, the pages only they have (new session, run demo), the
// password change and sign-out. A "Sign in" link when nobody is signed in.

import clsx from "clsx";
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect, useId, useRef, useState } from "react";
import { roleAtLeast } from "@/lib/authz/roles";
import { initials, loginHref, postLogout, ROLE_LABELS } from "@/lib/views/sign-in";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { Icon } from "@/components/ui/Icon";
import { NotificationToggle } from "@/features/inbox/NotificationToggle";

const itemClass =
  "flex w-full items-center gap-2 rounded px-2.5 py-2 text-left text-sm text-slate-800 hover:bg-slate-100 dark:text-slate-100 dark:hover:bg-slate-800";

export function UserMenu() {
  const { me, set } = useWhoAmI();
  const pathname = usePathname();
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const buttonRef = useRef<HTMLButtonElement | null>(null);
  const panelRef = useRef<HTMLDivElement | null>(null);
  const panelId = useId();

  useEffect(() => setOpen(false), [pathname]);
  useEffect(() => {
    if (!open) return;
    const onDown = (e: PointerEvent): void => {
      const t = e.target as Node;
      if (!panelRef.current?.contains(t) && !buttonRef.current?.contains(t)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent): void => {
      if (e.key === "Escape") {
        setOpen(false);
        buttonRef.current?.focus();
      }
    };
    document.addEventListener("pointerdown", onDown);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("pointerdown", onDown);
      document.removeEventListener("keydown", onKey);
    };
  }, [open]);

  if (me === undefined) return <span className="h-8 w-8" aria-hidden="true" />;
  if (me === null) {
    if (pathname === "/login") return null;
    return (
      <a
        href={loginHref(pathname)}
        className="rounded-md px-2.5 py-1.5 text-sm font-medium text-blue-800 hover:underline dark:text-sky-300"
        data-testid="sign-in-link"
      >
        Sign in
      </a>
    );
  }

  const signOut = async (): Promise<void> => {
    setError(null);
    try {
      await postLogout(me.csrfToken);
      set(null);
      window.location.assign("/login");
    } catch (e) {
      setError(e instanceof Error ? e.message : "Sign-out failed. Try again.");
    }
  };

  return (
    <div className="relative">
      <button
        ref={buttonRef}
        type="button"
        aria-expanded={open}
        aria-controls={panelId}
        onClick={() => setOpen((o) => !o)}
        className="flex h-8 items-center gap-2 rounded-full pr-1 text-left ring-1 ring-slate-300 ring-inset hover:bg-slate-100 sm:rounded-md sm:pr-2 sm:pl-1 dark:ring-slate-600 dark:hover:bg-slate-800"
        data-testid="user-menu"
      >
        <span
          aria-hidden="true"
          className="flex h-8 w-8 items-center justify-center rounded-full bg-blue-700 text-xs font-semibold text-white sm:h-6 sm:w-6 sm:text-[10px] dark:bg-sky-300 dark:text-slate-950"
        >
          {initials(me.displayName)}
        </span>
        <span className="hidden leading-tight sm:block">
          <span className="block max-w-40 truncate text-xs font-semibold text-slate-900 dark:text-slate-100" data-testid="user-name">
            {me.displayName}
          </span>
          <span className="block text-[11px] text-slate-700 dark:text-slate-300" data-testid="user-role">
            {ROLE_LABELS[me.role]}
          </span>
        </span>
        <span className="sr-only sm:hidden">
          {me.displayName}, {ROLE_LABELS[me.role]}:
        </span>
        <span className="sr-only">account menu</span>
      </button>
      <div
        ref={panelRef}
        id={panelId}
        hidden={!open}
        className={clsx(
          "absolute right-0 z-40 mt-2 w-64 rounded-lg border border-slate-200 bg-white p-1.5 shadow-lg dark:border-slate-700 dark:bg-slate-900",
        )}
        data-testid="user-menu-panel"
      >
        <div className="border-b border-slate-200 px-2.5 pt-1 pb-2 dark:border-slate-700">
          <p className="text-sm font-semibold">{me.displayName}</p>
          <p className="text-xs text-slate-700 dark:text-slate-300">
            {ROLE_LABELS[me.role]} · <span className="font-mono">{me.participantId}</span>
          </p>
        </div>
        <ul className="pt-1">
          {roleAtLeast(me.role, "operator") ? (
            <li>
              <Link href="/sessions/new" className={itemClass}>
                <Icon name="plus" /> New session
              </Link>
            </li>
          ) : null}
          {roleAtLeast(me.role, "admin") ? (
            <li>
              <Link href="/admin" className={itemClass} data-testid="menu-run-demo">
                <Icon name="play" /> Run demo
              </Link>
            </li>
          ) : null}
          {me.authMethod === "password" ? (
            <li>
              <Link href="/account/password" className={itemClass}>
                <Icon name="user" /> Change password
              </Link>
            </li>
          ) : null}
          {open ? (
            <li className="px-2.5 py-1.5" data-testid="menu-notifications">
              <NotificationToggle compact />
            </li>
          ) : null}
          <li>
            <button type="button" className={itemClass} onClick={() => void signOut()} data-testid="sign-out">
              <Icon name="x" /> Sign out
            </button>
          </li>
        </ul>
        {error ? (
          <p role="alert" className="px-2.5 pb-1 text-xs text-red-800 dark:text-red-300">
            {error}
          </p>
        ) : null}
      </div>
    </div>
  );
}
