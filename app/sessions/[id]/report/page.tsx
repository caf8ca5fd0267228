import type { Metadata } from "next";
import { parseSessionIdParam } from "@/lib/views/route-params";
import { NotASessionId } from "@/features/session/NotASessionId";
import { ReportScreen } from "@/features/session/ReportScreen";

export const metadata: Metadata = { title: "Handover report" };

// /sessions/[id]/report: the readable handover report as a page to read and
// print (print CSS drops the console's chrome). The same report as the
// session page's "Markdown" export (features/session/report.ts), rendered by the
// console's safe Markdown renderer.
export default async function SessionReportPage({ params }: { params: Promise<{ id: string }> }) {
  const { id: raw } = await params;
  const sessionId = parseSessionIdParam(raw);
  if (!sessionId) return <NotASessionId />;
  return <ReportScreen sessionId={sessionId} />;
}
