"use client";
// The session page in two steps. The server-rendered first view (`preview`)
// is what the browser paints; as soon as the page has loaded (not waiting
// for an idle period: the reader is waiting for it), the live view's code is
// fetched (LiveSessionScreen: SessionScreen with its query cache) and takes over, showing the preview until its own
// stream has caught up, or at once from the first view's handed-over state
// (`handover`, lib/views/session-handover.ts), resuming the stream after its
// last sequence. Without a preview (a very long session, or the
// server could not read it in time) the live view loads at once.

import { lazy, Suspense, useEffect, useState, type ReactNode } from "react";
import { afterLoad } from "@/lib/client/after-load";

let liveCode: Promise<typeof import("@/features/session/LiveSessionScreen")> | undefined;
/** The live view's code, fetched once (the same promise for the early fetch and the lazy component). */
const loadLiveCode = () => (liveCode ??= import("@/features/session/LiveSessionScreen"));
const LiveSessionScreen = lazy(() => loadLiveCode().then((m) => ({ default: m.LiveSessionScreen })));

// Fetch and run the live view's code as soon as the page has loaded, while
// React may still be hydrating the first view: by the time the effect below
// asks for the live view (after hydration), its code is usually in.
if (typeof window !== "undefined") afterLoad(window, () => void loadLiveCode().catch(() => undefined));

function Loading() {
  return (
    <p className="text-sm text-slate-700 dark:text-slate-300" aria-busy="true">
      Loading session…
    </p>
  );
}

export function LiveSession({ sessionId, preview, handover }: { sessionId: string; preview: ReactNode; handover?: string | undefined }) {
  const [live, setLive] = useState(preview === null);
  useEffect(() => {
    if (live) return;
    return afterLoad(window, () => setLive(true));
  }, [live]);
  if (!live) return <>{preview}</>;
  return (
    <Suspense fallback={preview ?? <Loading />}>
      <LiveSessionScreen sessionId={sessionId} preview={preview} handover={handover} />
    </Suspense>
  );
}
