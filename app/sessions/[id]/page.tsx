import type { Metadata } from "next";
import { headers } from "next/headers";
import { parseEventParam, parseSessionIdParam } from "@/lib/views/route-params";
import { NotASessionId } from "@/features/session/NotASessionId";
import { pageData } from "@/lib/server/page-data";
import { LiveSession } from "@/features/session/LiveSession";
import { SessionPreview } from "@/features/session/SessionPreview";
import { encodeHandover, windowForHandover } from "@/lib/views/session-handover";
import { resumeAfterSequence } from "@/lib/views/session-stream-state";
import { earlySubscribeRequest } from "@/features/session/early-stream";
import { EARLY_REQUEST_ATTRIBUTE, EARLY_REQUEST_ELEMENT } from "@/lib/client/early-fetch";

export const metadata: Metadata = { title: "Session" };

export default async function SessionPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { id: raw } = await params;
  const sessionId = parseSessionIdParam(raw);
  if (!sessionId) return <NotASessionId />;
  // The first view comes from the console process itself (same sign-in rule
  // as the Connect reads); without it the live view loads straight away.
  const data = pageData();
  const first = data ? await data.sessionPreview(await headers(), sessionId) : undefined;
  const event = (await searchParams).event;
  const around = parseEventParam(typeof event === "string" ? event : undefined);
  // One fold: the first view's state, windowed to its last events, is handed
  // to the live view, which resumes the stream after its last sequence.
  const handed = first?.kind === "ready" ? windowForHandover(first.state) : undefined;
  // A deep link before the window is shown from the whole fold (the live view then reads the earlier events).
  const shown = handed && around !== undefined && around < (handed.heldFrom ?? 1) && first?.kind === "ready" ? first.state : handed;
  const preview = shown ? <SessionPreview state={shown} {...(around !== undefined ? { aroundSequence: around } : {})} /> : null;
  // The live stream's request, for the browser to send before it hydrates the page (lib/client/early-fetch.ts): it resumes where the handover ends.
  const early = earlySubscribeRequest(sessionId, handed ? resumeAfterSequence(handed) : 0n);
  return (
    <>
      {/* Read by instrumentation-client.ts before hydration (LiveSession gets it as a prop, for client-side navigations). */}
      <div hidden id={EARLY_REQUEST_ELEMENT} {...{ [EARLY_REQUEST_ATTRIBUTE]: JSON.stringify(early) }} />
      <LiveSession
        key={sessionId}
        sessionId={sessionId}
        preview={preview}
        handover={handed ? encodeHandover(handed) : undefined}
        early={early}
      />
    </>
  );
}
