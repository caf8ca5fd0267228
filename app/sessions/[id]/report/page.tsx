import type { Metadata } from "next";
import Link from "next/link";
import { parseSessionIdParam } from "@/lib/client/route-params";
import { ReportScreen } from "@/components/session/ReportScreen";

export const metadata: Metadata = { title: "Handover report" };

// /sessions/[id]/report: the readable handover report as a page to read and
// print (print CSS drops the console's chrome). The same report as the
// session page's "Markdown" export (lib/client/report.ts), rendered by the
// console's safe Markdown renderer.
export default async function SessionReportPage({ params }: { params: Promise<{ id: string }> }) {
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
  return <ReportScreen sessionId={sessionId} />;
}
