import type { Metadata } from "next";
import Link from "next/link";
import { Suspense } from "react";
import { parseSessionIdParam } from "@/lib/client/route-params";
import { SessionScreen } from "@/components/session/SessionScreen";

export const metadata: Metadata = { title: "Session" };

export default async function SessionPage({ params }: { params: Promise<{ id: string }> }) {
  const { id: raw } = await params;
  const sessionId = parseSessionIdParam(raw);
  if (!sessionId) {
    return (
      <div className="space-y-3">
        <h1 className="text-xl font-semibold">Not a session id</h1>
        <p className="text-sm text-slate-700 dark:text-slate-300">
          Session ids are UUIDs or at least 22 letters, digits, “-” or “_”. Check the link, or pick the session from the list.
        </p>
        <Link href="/" className="text-sm text-blue-800 underline dark:text-sky-300">
          Back to sessions
        </Link>
      </div>
    );
  }
  return (
    <Suspense fallback={<p className="text-sm text-slate-700 dark:text-slate-300">Loading session…</p>}>
      <SessionScreen key={sessionId} sessionId={sessionId} />
    </Suspense>
  );
}
