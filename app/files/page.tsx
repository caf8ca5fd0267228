import type { Metadata } from "next";
import { Suspense } from "react";
import { FilesScreen } from "@/features/files/FilesScreen";
import { QueryProvider } from "@/lib/client/query-provider";

export const metadata: Metadata = { title: "File handoffs" };

export default function FilesPage() {
  return (
    <QueryProvider>
      <Suspense fallback={<p className="text-sm text-slate-700 dark:text-slate-300">Loading handoffs…</p>}>
        <FilesScreen />
      </Suspense>
    </QueryProvider>
  );
}
