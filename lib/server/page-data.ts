// What server-rendered pages may read from the console process. Next.js
// runs inside the console server (lib/server/console.ts) but bundles its own
// copy of our modules, so the two meet through one process-wide slot keyed by
// a registered symbol rather than through a shared module instance.
//
// Every read applies the same rule as the Connect read API: when reads need
// sign-in, the request's session cookie must name a signed-in person (who has
// already replaced a one-time password).
import type { SessionPreview } from "@/lib/gateway/session-preview";
import type { ListSessionPageResponse } from "@/lib/gen/baton/v1/console_pb";
import type { SessionListQueryFields } from "@/lib/views/list-query";
import type { ListPerson } from "@/lib/views/directory";
import type { InboxFirstView } from "@/lib/views/inbox-first-view";

/** The session list's first view: its first page and the whole catalog's counts, or why there is none. */
export type SessionListFirstView =
  | { kind: "ready"; page: ListSessionPageResponse; allCount: bigint; openCount: bigint }
  | { kind: "signed-out" }
  | { kind: "unavailable"; detail: string };

/** The inbox's first view for the signed-in person, or why there is none. */
export type InboxFirstViewRead = ({ kind: "ready" } & InboxFirstView) | { kind: "signed-out" } | { kind: "unavailable"; detail: string };

export interface PageData {
  /** The session page's first view, or why there is none. */
  sessionPreview(headers: Headers, sessionId: string): Promise<SessionPreview | { kind: "signed-out" }>;
  /** The session list's first `limit` rows for `query` (read as ListSessionPage reads them). */
  sessionListFirstView?(headers: Headers, query: SessionListQueryFields, limit: number): Promise<SessionListFirstView>;
  /** Whether the request comes from a signed-in person (who has replaced a one-time password). */
  signedIn?(headers: Headers): Promise<boolean>;
  /** What waits on the signed-in person, as the inbox stream's first update says it (the /inbox page's first view). */
  inboxFirstView?(headers: Headers): Promise<InboxFirstViewRead>;
  /** The console watches v0.1 handoff directories (BATON_HANDOFF_DIRS): the header shows "Files". */
  fileHandoffsEnabled?(): boolean;
  /** The list's stuck threshold (BATON_STUCK_AFTER_MINUTES), in ms. */
  stuckAfterMs?(): number;
  /** The console's people and the agents directory's names (for the list), for a signed-in person; null when signed out or without accounts. */
  people?(headers: Headers): Promise<{ people: ListPerson[]; agentNames: Record<string, string> } | null>;
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
