// The session page's live code, in its two parts (LiveSession.tsx): the
// stream's part (Connect, the generated descriptors, the fold) and the
// screen's. One loader each, shared by LiveSession and by the shell, which
// asks for both in the page's `load` event (features/shell/page-code.ts):
// LiveSession's own module is evaluated only when React's hydration reaches
// it, up to a few hundred milliseconds after `load` on a busy machine, while
// the shell's runs first. Whoever asks first starts the fetch; the other gets
// the same promise (a failed fetch is forgotten, so LiveSession's retries
// fetch again).

import { moduleLoader } from "@/lib/client/after-load-import";
import { parseSessionIdParam } from "@/lib/views/route-params";

export type LiveCode = typeof import("@/features/session/LiveSessionScreen");
export type StreamCode = typeof import("@/features/session/open-session-stream");

export const liveCode = moduleLoader<LiveCode>(() => import("@/features/session/LiveSessionScreen"));
export const streamCode = moduleLoader<StreamCode>(() => import("@/features/session/open-session-stream"));

/** Whether `pathname` is a session's page (/sessions/<id>), whose live view this code is. */
export function isSessionPagePath(pathname: string): boolean {
  const m = /^\/sessions\/([^/]+)\/?$/.exec(pathname);
  return m !== null && parseSessionIdParam(m[1]) !== undefined;
}
