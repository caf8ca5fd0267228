// Code a page needs once it has loaded, asked for by the shell in the page's
// `load` event. The shell's modules are evaluated first when React hydrates
// (the root layout renders them), while a page's own client modules are
// evaluated only when hydration reaches them: on the 2-core machine that was
// up to 265 ms after `load` for the session page (2026-11-27), and its live
// view waited for it. Only fetches start here; the page itself uses what
// came (the loaders are shared).

import { onLoad } from "@/lib/client/after-load";
import { isSessionPagePath, liveCode, streamCode } from "@/features/session/live-code";

/** Starts fetching the code of the page at `pathname` that waits for `load`, if any. */
export function askForPageCode(pathname: string): void {
  if (isSessionPagePath(pathname)) {
    // Failures are the page's to handle (LiveSession retries and says so).
    streamCode().catch(() => undefined);
    liveCode().catch(() => undefined);
  }
}

if (typeof window !== "undefined") onLoad(window, () => askForPageCode(window.location.pathname));
