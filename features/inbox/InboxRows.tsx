"use client";
// The items of /inbox as the live inbox draws them (InboxRowView.tsx: what
// waits on me, the empty state, what comes up next) and the news about my
// sessions, dismissible in this browser.

import type { InboxItem } from "@/lib/gen/baton/v1/actions_pb";
import { newsKey, useDismissedNews } from "@/features/inbox/news-dismissed";
import { InboxItemsView, InboxRow, InboxSection, type InboxRowsProps } from "@/features/inbox/InboxRowView";

export { InboxRow, type FromOf, type InboxRowsProps, type VirtualItemsProps } from "@/features/inbox/InboxRowView";

export function InboxRows({ loaded, items, ahead, news, participantId, fromOf, Virtual }: InboxRowsProps) {
  const { dismissed, dismiss } = useDismissedNews(participantId);
  const shownNews = news.filter((item: InboxItem) => !dismissed.has(newsKey(item)));
  return (
    <>
      <InboxItemsView loaded={loaded} items={items} ahead={ahead} fromOf={fromOf} Virtual={Virtual} />
      {shownNews.length > 0 ? (
        <InboxSection
          id="news"
          title="News about your sessions"
          note="Nothing to do: what happened over the last day to sessions you started."
        >
          {shownNews.map((item) => (
            <li key={newsKey(item)}>
              <InboxRow item={item} from={fromOf(item)} onDismiss={() => dismiss(item)} />
            </li>
          ))}
        </InboxSection>
      ) : null}
    </>
  );
}
