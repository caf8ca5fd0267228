import type { Metadata } from "next";
import Link from "next/link";
import { FileHandoffScreen } from "@/features/files/FileHandoffScreen";
import { parseFileParams } from "@/lib/views/file-handoffs";
import { QueryProvider } from "@/lib/client/query-provider";

export const metadata: Metadata = { title: "File handoff" };

export default async function FileHandoffPage({ params }: { params: Promise<{ dir: string; taskId: string }> }) {
  const { dir, taskId } = await params;
  const parsed = parseFileParams(dir, taskId);
  if (!parsed) {
    return (
      <div className="space-y-3">
        <h1 className="text-xl font-semibold">Not a handoff link</h1>
        <p className="text-sm text-slate-700 dark:text-slate-300">
          The link should name a watched directory and a handoff&apos;s task id. Pick the handoff from the list.
        </p>
        <Link href="/files" className="text-sm text-blue-800 underline dark:text-sky-300">
          Back to file handoffs
        </Link>
      </div>
    );
  }
  return (
    <QueryProvider>
      <FileHandoffScreen key={`${parsed.dirKey}/${parsed.taskId}`} dirKey={parsed.dirKey} taskId={parsed.taskId} />
    </QueryProvider>
  );
}
