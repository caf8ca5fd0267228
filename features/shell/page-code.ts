// Code a page needs once it has loaded, asked for by the shell in the page's
// `load` event. The shell's modules are evaluated first when React hydrates
// (the root layout renders them), while a page's own client modules are
// evaluated only when hydration reaches them: on the 2-core machine that was
// up to 265 ms after `load` for the session page (2026-11-27), and its live
// view waited for it. Only fetches start here; the page itself uses what
// came (the loaders are shared). The session page's stream request is sent
// here too, before its code is in (features/session/early-session-stream.ts).

import { onLoad } from "@/lib/client/after-load";
import { liveCode, sessionOfPagePath, streamCode } from "@/features/session/live-code";
import { sendSessionStreamEarly } from "@/features/session/early-session-stream";

/** Starts fetching the code of the page at `pathname` that waits for `load`, if any (and the session page's stream). */
export function askForPageCode(pathname: string): void {
  const sessionId = sessionOfPagePath(pathname);
  if (sessionId !== undefined) {
    sendSessionStreamEarly(document, window.location.origin, sessionId);
    // Failures are the page's to handle (LiveSession retries and says so).
    streamCode().catch(() => undefined);
    liveCode().catch(() => undefined);
  }
}

if (typeof window !== "undefined") onLoad(window, () => askForPageCode(window.location.pathname));
