// What the server read for the /inbox page's first view (app/inbox/page.tsx,
// lib/server/console-page-data.ts): the inbox stream's first update for the
// signed-in person and the names of who sent each item, handed to the browser
// with the HTML so the page shows its items (or that nothing waits) before
// its live machinery has loaded. Types from lib/gen only: this is part of the
// inbox's JavaScript loaded before `load`.

import type { InboxItem } from "@/lib/gen/baton/v1/actions_pb";

export interface InboxFirstView {
  /** How many items wait on the person. */
  count: number;
  /** The newest of them (at most FIRST_VIEW_ITEMS), newest first as the inbox state orders them. */
  items: readonly InboxItem[];
  /** Approvals that will be theirs once an offer is answered, newest first (at most FIRST_VIEW_ITEMS). */
  ahead: readonly InboxItem[];
  /** Display names of the items' senders, by participant id (as the console's directory names them). */
  names: Readonly<Record<string, string>>;
}

/** Items shown in the page's HTML at most (the live view shows the rest, virtualized). */
export const FIRST_VIEW_ITEMS = 40;

/** The inbox's order: newest first. */
export const newestFirst = (a: InboxItem, b: InboxItem): number => Number(b.sinceUnixMs - a.sinceUnixMs);
