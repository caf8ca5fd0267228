"use client";
// /inbox, "Waiting on me": offers made to me, commits waiting for my
// approval, tasks assigned to me — live from WatchInbox, newest first.
//
// In steps, as the session list: the server reads the inbox stream's first
// update for the signed-in person (`first`, app/inbox/page.tsx) and draws it
// (InboxPreview.tsx); this screen is fetched right after `load`
// (LiveInbox.tsx) and draws the same items, or that nothing waits, until the
// inbox stream (InboxWatcher, in the layout, started after `load`) takes over
// once its first update arrives; the live code (InboxItems: the directory
// read through Connect and TanStack Query, the virtualizer for a long inbox,
// the file handoffs card) is fetched then too, so none of it is loaded before
// `load`. Without a first view (a client-side navigation with the inbox
// already live, the console unavailable) the page waits for the stream; with
// the inbox already live, the live code is fetched at once.

import { useMemo, useState } from "react";
import { inboxCountLabel } from "@/features/inbox/inbox-state";
import { componentLoader, useAfterLoadComponent } from "@/lib/client/after-load-import";
import { useInbox } from "@/features/inbox/use-inbox";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { useOutage } from "@/lib/client/runtime-status";
import { ConnectionBadge } from "@/components/ui/ConnectionIndicator";
import { NotificationToggle } from "@/features/inbox/NotificationToggle";
import { InboxRows, type FromOf, type VirtualItemsProps } from "@/features/inbox/InboxRows";
import { INBOX_LOADING, InboxFrame } from "@/features/inbox/InboxFrame";
import type { InboxFirstView } from "@/lib/views/inbox-first-view";
import type { InboxLiveProps } from "@/features/inbox/InboxItems";
import { EMPTY_DIRECTORY, nameIn, type Directory } from "@/lib/views/directory";

const loadLive = componentLoader<InboxLiveProps>(() => import("@/features/inbox/InboxItems").then((m) => m.InboxLive));
const loadVirtual = componentLoader<VirtualItemsProps>(() => import("@/features/inbox/InboxItems").then((m) => m.VirtualItems));

export function InboxScreen({ first }: { first?: InboxFirstView | undefined }) {
  const { inbox, connection } = useInbox();
  const { me } = useWhoAmI();
  const Live = useAfterLoadComponent(loadLive, "the inbox's live code", inbox.loaded ? "now" : "after-load-idle");
  const Virtual = useAfterLoadComponent(loadVirtual, "the inbox's long list", inbox.loaded ? "now" : "after-load-idle");
  const [directory, setDirectory] = useState<Directory | null>(null);
  // Names: the console's directory once the live code has read it, the server's until then.
  const fromOf: FromOf = useMemo(
    () => (item) =>
      directory
        ? nameIn(directory, item.fromParticipant)
        : (first?.names[item.fromParticipant] ?? nameIn(EMPTY_DIRECTORY, item.fromParticipant)),
    [directory, first],
  );
  // The live inbox once its first update has arrived, the server's first view until then.
  const shown = inbox.loaded
    ? { loaded: true, count: inbox.items.length, items: inbox.items, ahead: inbox.ahead, news: inbox.news }
    : first
      ? { loaded: true, count: first.count, items: first.items, ahead: first.ahead, news: [] }
      : { loaded: false, count: 0, items: [], ahead: [], news: [] };
  // Until the inbox has loaded, an outage says why it has not (instead of "Loading…" for ever).
  const outage = useOutage();
  const waiting =
    outage?.kind === "runtime"
      ? `What waits on you can't be checked: the MACP runtime at ${outage.address} is unreachable. This fills in by itself when it answers again.`
      : outage?.kind === "console"
        ? "What waits on you can't be checked: Baton's console server is not answering. This fills in by itself when it answers again."
        : INBOX_LOADING;
  return (
    <InboxFrame
      badge={<ConnectionBadge info={connection} label="Inbox" />}
      toggle={<NotificationToggle />}
      // Until the live inbox has loaded, an outage wins over the server's first view: that view is as of the console's last word from the runtime.
      count={inbox.loaded || (shown.loaded && !outage) ? `${inboxCountLabel(shown.count)}.` : waiting}
      rows={
        <InboxRows
          loaded={shown.loaded}
          items={shown.items}
          ahead={shown.ahead}
          news={shown.news}
          participantId={me?.participantId ?? ""}
          fromOf={fromOf}
          Virtual={Virtual}
        />
      }
      live={Live ? <Live onDirectory={setDirectory} /> : null}
    />
  );
}
