import type { Metadata } from "next";
import { InboxScreen } from "@/components/inbox/InboxScreen";
import { QueryProvider } from "@/lib/client/query-provider";

export const metadata: Metadata = { title: "Inbox" };

export default function InboxPage() {
  return (
    <QueryProvider>
      <InboxScreen />
    </QueryProvider>
  );
}
