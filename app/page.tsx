import type { Metadata } from "next";
import { Suspense } from "react";
import { SessionListScreen } from "@/components/sessions/SessionListScreen";
import { QueryProvider } from "@/lib/client/query-provider";

export const metadata: Metadata = { title: "Sessions" };

export default function SessionsPage() {
  return (
    <QueryProvider>
      <Suspense fallback={<p className="text-sm text-slate-700 dark:text-slate-300">Loading sessions…</p>}>
        <SessionListScreen />
      </Suspense>
    </QueryProvider>
  );
}
