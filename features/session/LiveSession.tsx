"use client";
// The session page in two steps. The server-rendered first view (`preview`)
// is what the browser paints; as soon as the page has loaded (not waiting
// for an idle period: the reader is waiting for it), the live view's code is
// fetched (LiveSessionScreen: SessionScreen with its query cache). Once it is
// in, its stream is opened at once (resuming after the first view's handed
// over state, lib/views/session-handover.ts) and the live view takes the
// preview's place in one render: the component is swapped only when its
// code is there, so React never suspends on it (a suspended render is
// retried in slices that other updates restart). Without a preview (a very
// long session, or the server could not read it in time) the live view's
// code is asked for at once, with a loading line meanwhile. A press on the
// first view holds the swap back until its click (lib/client/swap-after-press.ts).
//
// The live stream's request does not wait for that code: the server built it
// (features/session/early-stream.ts) and the browser sends it from the
// page's HTML before React hydrates anything (instrumentation-client.ts),
// or, after a client-side navigation, with this component's first render. Its
// answer is there when the stream's code opens the stream and takes it over
// (lib/client/early-fetch.ts).

import { useEffect, useState, type ReactNode } from "react";
import { onLoad } from "@/lib/client/after-load";
import { dropEarlyFetches, startEarlyFetch, type EarlyRequest } from "@/lib/client/early-fetch";
import { fetchWithRetries } from "@/lib/client/after-load-import";
import { liveCode, streamCode, type LiveCode } from "@/features/session/live-code";
import { useHydrated } from "@/lib/client/use-hydrated";
import { useSwapWhenUnpressed } from "@/lib/client/swap-after-press";

/** The session the page shows, as its first render said (the stream may open before React's effects run). */
let shown: { sessionId: string; handover: string | undefined } | undefined;

// Ask for the live view's code in the load event itself (the shell has
// usually asked already, features/shell/page-code.ts): only the scripts'
// fetch starts here. The stream opens as soon as its part is in, even while
// React is still hydrating the first view (its effects, which swap the
// screen in, run only once the whole page has hydrated).
if (typeof window !== "undefined")
  onLoad(window, () => {
    streamCode().then(
      (m) => {
        if (shown) m.openSessionStream(shown.sessionId, shown.handover);
      },
      () => undefined,
    );
    void liveCode().catch(() => undefined);
  });

function Loading() {
  return (
    <p className="text-sm text-slate-700 dark:text-slate-300" aria-busy="true">
      Loading session…
    </p>
  );
}

export function LiveSession({
  sessionId,
  preview,
  handover,
  early,
}: {
  sessionId: string;
  preview: ReactNode;
  handover?: string | undefined;
  /** The live stream's request, sent at once (the stream's code takes its response over). */
  early?: EarlyRequest | undefined;
}) {
  // Whether this render is React's own, not the hydration of the server's HTML (false while hydrating).
  const clientRender = useHydrated();
  // The screen's code once it is in; undefined while the first view shows. Without a preview, code
  // already fetched (on an earlier page, or by the shell at `load`) is used at once, but never while
  // hydrating: the server rendered the loading line, and anything else is a hydration error.
  const [code, setCode] = useState<LiveCode | undefined>(() => (preview === null && clientRender ? liveCode.loaded() : undefined));
  const [failed, setFailed] = useState<string | undefined>();
  const hasPreview = preview !== null;
  const swap = useSwapWhenUnpressed(code !== undefined);
  // Remembered for the load event above; the same values on every render of this page. The first
  // render in the browser also sends the stream's request (once: a later render finds it waiting).
  if (typeof window !== "undefined" && shown?.sessionId !== sessionId) {
    shown = { sessionId, handover };
    if (early) startEarlyFetch(early, window.location.origin);
  }
  useEffect(() => {
    if (code) return;
    let active = true;
    const cancel = fetchWithRetries(
      window,
      hasPreview ? "load" : "now",
      // The stream is opened as soon as its part of the code is in, before
      // the screen's part has run; the screen renders in a later task, once
      // the request is out, so the round trip overlaps the render.
      () => {
        const opened = streamCode().then((m) => {
          if (active) m.openSessionStream(sessionId, handover);
        });
        return Promise.all([liveCode(), opened]).then(([m]) => m);
      },
      (m) =>
        setTimeout(() => {
          if (active) setCode(m);
        }, 0),
      (e) => setFailed(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      active = false;
      cancel();
    };
  }, [code, hasPreview, sessionId, handover]);
  useEffect(
    () => () => {
      // The page was left: a stream opened for it that the screen never took over is closed now, not after its timeout.
      streamCode.loaded()?.closeOpenedStream(sessionId);
      dropEarlyFetches();
      if (shown?.sessionId === sessionId) shown = undefined;
    },
    [sessionId],
  );
  if (code && (swap || !hasPreview)) return <code.LiveSessionScreen sessionId={sessionId} preview={preview} handover={handover} />;
  return (
    <>
      {failed && (
        <p
          role="alert"
          className="mb-3 rounded border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
        >
          Live updates could not be loaded ({failed}). What you see may be out of date; Baton tries again by itself, or reload the page.
        </p>
      )}
      {preview ?? (failed ? null : <Loading />)}
    </>
  );
}
