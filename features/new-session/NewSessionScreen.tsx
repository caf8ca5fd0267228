"use client";
// /sessions/new: the form, once the signed-in person and the directory are known.

import Link from "next/link";
import { useDirectory } from "@/lib/client/use-console-data";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { NewSessionForm } from "@/features/new-session/NewSessionForm";

export function NewSessionScreen() {
  const { me } = useWhoAmI();
  const { directory, loaded, error } = useDirectory(Boolean(me));
  return (
    <div className="mx-auto max-w-3xl space-y-4">
      <nav aria-label="Breadcrumb" className="text-sm">
        <Link href="/" className="inline-flex items-center gap-1 text-blue-800 hover:underline dark:text-sky-300">
          <span aria-hidden="true">←</span> Sessions
        </Link>
      </nav>
      <h1 className="text-xl font-semibold tracking-tight sm:text-2xl">New session</h1>
      {!me ? null : !loaded && !error ? (
        <p className="text-sm text-slate-700 dark:text-slate-300">Loading people and agents…</p>
      ) : (
        <>
          {error ? (
            <p role="note" className="text-sm text-amber-900 dark:text-amber-200">
              The list of people and agents could not be loaded; you can still type agent ids.
            </p>
          ) : null}
          <NewSessionForm me={me} directory={directory} />
        </>
      )}
    </div>
  );
}
