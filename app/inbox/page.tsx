import type { Metadata } from "next";
import { headers } from "next/headers";
import { LiveInbox } from "@/features/inbox/LiveInbox";
import { InboxPreview } from "@/features/inbox/InboxPreview";
import type { InboxFirstView } from "@/lib/views/inbox-first-view";
import { pageData } from "@/lib/server/page-data";

export const metadata: Metadata = { title: "Inbox" };

export default async function InboxPage() {
  // The first view: what the inbox stream would send first to the signed-in
  // person, read by the console process (same sign-in rule as WatchInbox).
  // Without it (signed out, the console unavailable) the page waits for the
  // live inbox.
  const data = pageData();
  const read = data?.inboxFirstView ? await data.inboxFirstView(await headers()) : undefined;
  const first: InboxFirstView | undefined =
    read?.kind === "ready" ? { count: read.count, items: read.items, ahead: read.ahead, names: read.names } : undefined;
  // The first view is drawn here (InboxPreview: no inbox JavaScript of its
  // own before `load`); the live inbox takes over after `load`.
  return <LiveInbox first={first} preview={<InboxPreview first={first} />} />;
}
