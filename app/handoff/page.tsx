import type { Metadata } from "next";
import { Suspense } from "react";
import { HandOffScreen } from "@/features/hand-off/HandOffScreen";
import { QueryProvider } from "@/lib/client/query-provider";

export const metadata: Metadata = { title: "Hand off" };

export default function HandOffPage() {
  return (
    <QueryProvider>
      <Suspense fallback={<p className="text-sm text-slate-700 dark:text-slate-300">Loading…</p>}>
        <HandOffScreen />
      </Suspense>
    </QueryProvider>
  );
}
