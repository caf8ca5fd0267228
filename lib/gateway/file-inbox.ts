// Which v0.1 file handoffs wait on a person: those they can act on now, by
// the same decide() the buttons use. A handoff offered to their participant
// id, or to anyone (to_agent empty) by someone else, is theirs to accept or
// turn down; one they accepted is theirs to complete or fail. Read from the
// history store a page at a time (newest change first): the cost is bounded
// by the pages scanned, not by the directories' history.
import type { Role } from "@/lib/authz/roles";
import { decide, type FileAction, type FileHandoffFacts } from "@/lib/authz/decide";
import type { HandoffHistoryStore, HandoffSummary, ListQuery } from "@/lib/handoff-files";

export interface InboxActor {
  role: Role;
  participantId: string;
}

/** The store query whose rows may wait on `participantId` (a superset: decide() filters). */
export function fileInboxQuery(participantId: string, dirs?: readonly string[]): ListQuery {
  return {
    statuses: ["offered", "accepted"],
    toAgentIn: [participantId, ""],
    ...(dirs && dirs.length > 0 ? { dirs } : {}),
  };
}

export function factsOf(s: HandoffSummary): FileHandoffFacts | undefined {
  if (s.status === undefined) return undefined;
  return { present: s.present, valid: s.valid, status: s.status, fromAgent: s.fromAgent ?? "", toAgent: s.toAgent ?? "" };
}

const INBOX_ACTIONS: readonly FileAction[] = ["fileAccept", "fileComplete"];

/** Whether `actor` can move this handoff on now (accept it, or complete it). */
export function waitsOn(actor: InboxActor, s: HandoffSummary): boolean {
  const file = factsOf(s);
  if (!file) return false;
  return INBOX_ACTIONS.some((a) => decide(actor, undefined, a, { file }).allowed);
}

export interface InboxPage {
  items: HandoffSummary[];
  /** Cursor for the next page ("" at the end). */
  next: string;
}

/**
 * Up to `limit` handoffs waiting on `actor`, newest change first, scanning at
 * most `maxScanned` stored rows (rows the person cannot act on are skipped).
 */
export function fileInboxPage(
  store: Pick<HandoffHistoryStore, "list">,
  actor: InboxActor,
  opts: { limit: number; cursor?: string; dirs?: readonly string[]; maxScanned?: number },
): InboxPage {
  const maxScanned = opts.maxScanned ?? 2_000;
  const items: HandoffSummary[] = [];
  const base = fileInboxQuery(actor.participantId, opts.dirs);
  let cursor = opts.cursor;
  let scanned = 0;
  while (items.length < opts.limit && scanned < maxScanned) {
    const page = store.list({ ...base, limit: Math.min(200, maxScanned - scanned), ...(cursor ? { cursor } : {}) });
    scanned += page.items.length;
    for (const s of page.items) {
      if (waitsOn(actor, s)) items.push(s);
      if (items.length >= opts.limit) {
        const last = items[items.length - 1] as HandoffSummary;
        // More may follow this row: continue right after it.
        return { items, next: `${last.lastChangeMs}.${last.id}` };
      }
    }
    if (!page.next) return { items, next: "" };
    cursor = page.next;
  }
  return { items, next: cursor ?? "" };
}
