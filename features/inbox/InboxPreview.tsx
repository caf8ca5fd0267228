// /inbox's first view, drawn by the server only: what the inbox stream would
// send first to the signed-in person (app/inbox/page.tsx read it), with the
// live inbox's markup (InboxFrame, InboxRowView) but not its JavaScript:
// before `load` the page loads only the islands it shares with the header
// (the stream's badge, the notification toggle, the clocks) and the loader
// (LiveInbox.tsx), which swaps in the live inbox once the page has loaded.
// No hooks and no "use client".

import type { ConnectionInfo } from "@/lib/client/connection";
import type { InboxFirstView } from "@/lib/views/inbox-first-view";
import { EMPTY_DIRECTORY, nameIn } from "@/lib/views/directory";
import { inboxCountLabel } from "@/features/inbox/inbox-state";
import { ConnectionBadge } from "@/components/ui/ConnectionIndicator";
import { NotificationToggle } from "@/features/inbox/NotificationToggle";
import { INBOX_LOADING, InboxFrame } from "@/features/inbox/InboxFrame";
import { InboxItemsView } from "@/features/inbox/InboxRowView";

/** The inbox stream before it has started (INITIAL_CONNECTION; the connection store itself is client-only). */
const NOT_CONNECTED: ConnectionInfo = { state: "connecting", reconnects: 0 };

export function InboxPreview({ first }: { first: InboxFirstView | undefined }) {
  const names = first?.names ?? {};
  return (
    <InboxFrame
      badge={<ConnectionBadge info={NOT_CONNECTED} label="Inbox" />}
      toggle={<NotificationToggle />}
      count={first ? `${inboxCountLabel(first.count)}.` : INBOX_LOADING}
      rows={
        <InboxItemsView
          loaded={first !== undefined}
          items={first?.items ?? []}
          ahead={first?.ahead ?? []}
          fromOf={(item) => names[item.fromParticipant] ?? nameIn(EMPTY_DIRECTORY, item.fromParticipant)}
          Virtual={null}
        />
      }
    />
  );
}
