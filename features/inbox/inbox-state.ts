// "Waiting on me": the WatchInbox stream folded for the page, the navigation
// badge and browser notifications. Each update replaces the whole inbox; the
// fold keeps which items are new since the previous update so a notification
// is raised once per new item, never for items already seen. Pure, and only
// type imports from lib/gen: the navigation badge (in the layout) reads this,
// so it must not pull protobuf-es into every page.

import type { InboxItem, WatchInboxResponse } from "@/lib/gen/baton/v1/actions_pb";
import { newestFirst } from "@/lib/views/inbox-first-view";

export interface InboxState {
  items: readonly InboxItem[];
  /** Told early, not counted: approvals that will be mine once an offer is answered. */
  ahead: readonly InboxItem[];
  /** Told, not counted: what happened to sessions I started (offer accepted, committed, expired, cancelled). */
  news: readonly InboxItem[];
  /** Keys of every item ever shown in this page's life (to spot new ones). */
  seen: ReadonlySet<string>;
  /** Items (items ahead, news) that arrived in the latest update and were never seen before. */
  fresh: readonly InboxItem[];
  /** An update has arrived (the first one is the inbox as it was; nothing in it is "new"). */
  loaded: boolean;
}

export const INITIAL_INBOX: InboxState = Object.freeze({
  items: [],
  ahead: [],
  news: [],
  seen: new Set<string>(),
  fresh: [],
  loaded: false,
});

export function inboxKey(item: InboxItem): string {
  return `${item.kind}:${item.sessionId}:${item.subjectId}`;
}

export function applyInboxMessage(state: InboxState, m: WatchInboxResponse): InboxState {
  if (m.item.case !== "update") return state;
  const items = [...m.item.value.items].sort(newestFirst);
  const ahead = [...m.item.value.ahead].sort(newestFirst);
  const news = [...m.item.value.news].sort(newestFirst);
  const seen = new Set(state.seen);
  const fresh: InboxItem[] = [];
  for (const it of [...items, ...ahead, ...news]) {
    const key = inboxKey(it);
    if (!seen.has(key)) {
      seen.add(key);
      if (state.loaded) fresh.push(it);
    }
  }
  return { items, ahead, news, seen, fresh, loaded: true };
}

/** "Waiting on me (3)" style count text for the navigation. */
export function inboxCountLabel(count: number): string {
  return count === 0 ? "Nothing is waiting on you" : `${count} item${count === 1 ? "" : "s"} waiting on you`;
}
