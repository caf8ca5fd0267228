// What server-rendered pages may read from the console process. Next.js
// runs inside the console server (lib/server/console.ts) but bundles its own
// copy of our modules, so the two meet through one process-wide slot keyed by
// a registered symbol rather than through a shared module instance.
//
// Every read applies the same rule as the Connect read API: when reads need
// sign-in, the request's session cookie must name a signed-in person (who has
// already replaced a one-time password).
import type { SessionPreview } from "@/lib/gateway/session-preview";

export interface PageData {
  /** The session page's first view, or why there is none. */
  sessionPreview(headers: Headers, sessionId: string): Promise<SessionPreview | { kind: "signed-out" }>;
  /** The console watches v0.1 handoff directories (BATON_HANDOFF_DIRS): the header shows "Files". */
  fileHandoffsEnabled?(): boolean;
}

const SLOT = Symbol.for("baton.console.page-data");

type Slot = { [SLOT]?: PageData };

/** Make `data` what pages read; returns a function that withdraws it again (if still current). */
export function registerPageData(data: PageData): () => void {
  (globalThis as Slot)[SLOT] = data;
  return () => {
    if ((globalThis as Slot)[SLOT] === data) delete (globalThis as Slot)[SLOT];
  };
}

/** The console's page data, or undefined when Next.js runs without the console server. */
export function pageData(): PageData | undefined {
  return (globalThis as Slot)[SLOT];
}
