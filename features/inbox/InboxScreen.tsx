"use client";
// /inbox, "Waiting on me": offers made to me, commits waiting for my
// approval, tasks assigned to me — live from WatchInbox, newest first.
// The inbox stream starts after `load` (InboxWatcher, in the layout); the
// items' code (InboxItems: the directory read through Connect and TanStack
// Query, the virtualizer, the file handoffs card) is fetched then too, so
// none of it is loaded before `load`. On a client-side navigation with the
// inbox already live it is fetched at once.

import { inboxCountLabel } from "@/features/inbox/inbox-state";
import { componentLoader, useAfterLoadComponent } from "@/lib/client/after-load-import";
import { useInbox } from "@/features/inbox/use-inbox";
import { useOutage } from "@/lib/client/runtime-status";
import { ConnectionBadge } from "@/components/ui/ConnectionIndicator";
import { NotificationToggle } from "@/features/inbox/NotificationToggle";
import { InboxEmpty } from "@/features/inbox/InboxEmpty";
import type { InboxItemsProps } from "@/features/inbox/InboxItems";

const loadItems = componentLoader<InboxItemsProps>(() => import("@/features/inbox/InboxItems").then((m) => m.InboxItems));

export function InboxScreen() {
  const { inbox, connection } = useInbox();
  const Items = useAfterLoadComponent(loadItems, "the inbox's items", inbox.loaded);
  // Until the inbox has loaded, an outage says why it has not (instead of "Loading…" for ever).
  const outage = useOutage();
  const waiting =
    outage?.kind === "runtime"
      ? `What waits on you can't be checked: the MACP runtime at ${outage.address} is unreachable. This fills in by itself when it answers again.`
      : outage?.kind === "console"
        ? "What waits on you can't be checked: Baton's console server is not answering. This fills in by itself when it answers again."
        : "Loading what is waiting on you…";
  return (
    <div className="mx-auto max-w-3xl space-y-4">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-xl font-semibold tracking-tight sm:text-2xl">Waiting on me</h1>
        <ConnectionBadge info={connection} label="Inbox" />
        <div className="ml-auto">
          <NotificationToggle />
        </div>
      </div>
      <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="inbox-count">
        {inbox.loaded ? `${inboxCountLabel(inbox.items.length)}.` : waiting}
      </p>
      {Items ? (
        <Items loaded={inbox.loaded} items={inbox.items} ahead={inbox.ahead} news={inbox.news} />
      ) : inbox.loaded && inbox.items.length === 0 ? (
        <InboxEmpty />
      ) : null}
    </div>
  );
}
