"use client";
// The items of /inbox and the v0.1 file handoffs card, loaded after `load` by
// InboxScreen (the items arrive with the inbox stream, which starts then
// too): the directory that names who sent each item is read through Connect
// and TanStack Query, which stay out of the page's JavaScript before `load`.
// A short inbox is rendered whole; a long one is window-virtualized, so the
// page stays light however many items wait.

import { useWindowVirtualizer } from "@tanstack/react-virtual";
import Link from "next/link";
import { useState } from "react";
import { InboxItemKind, type InboxItem } from "@/lib/gen/baton/v1/actions_pb";
import { inboxKey } from "@/features/inbox/inbox-state";
import { nameIn } from "@/lib/views/directory";
import { QueryProvider } from "@/lib/client/query-provider";
import { sessionHref } from "@/lib/views/route-params";
import { useDirectory } from "@/lib/client/use-console-data";
import { useElementOffsetTop } from "@/lib/client/use-offset-top";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { Badge } from "@/components/ui/Badge";
import { Icon } from "@/components/ui/Icon";
import { RelativeTime, TtlCountdown } from "@/components/ui/Time";
import { FileInboxCard } from "@/features/inbox/FileInboxCard";
import { newsKey, useDismissedNews } from "@/features/inbox/news-dismissed";
import { InboxEmpty } from "@/features/inbox/InboxEmpty";
import { clipLine } from "@/lib/views/clip";
import { TASK_MODE } from "@/lib/macp/constants";

const INBOX_KIND_LABEL: Readonly<Record<InboxItemKind, string>> = Object.freeze({
  [InboxItemKind.UNSPECIFIED]: "Waiting",
  [InboxItemKind.OFFER]: "Offer to you",
  [InboxItemKind.APPROVAL]: "Needs your commit",
  [InboxItemKind.TASK]: "Task for you",
  [InboxItemKind.APPROVAL_AHEAD]: "Your approval next",
  [InboxItemKind.ESCALATION]: "Unanswered offer",
  [InboxItemKind.DECLINED]: "Back with you",
  [InboxItemKind.ACCEPTED]: "Accepted",
  [InboxItemKind.CLOSED]: "Closed",
});

const INBOX_KIND_ICON: Readonly<Record<InboxItemKind, "send" | "seal" | "inbox" | "question" | "x" | "check">> = Object.freeze({
  [InboxItemKind.UNSPECIFIED]: "question",
  [InboxItemKind.OFFER]: "send",
  [InboxItemKind.APPROVAL]: "seal",
  [InboxItemKind.TASK]: "inbox",
  [InboxItemKind.APPROVAL_AHEAD]: "seal",
  [InboxItemKind.ESCALATION]: "question",
  [InboxItemKind.DECLINED]: "x",
  [InboxItemKind.ACCEPTED]: "check",
  [InboxItemKind.CLOSED]: "seal",
});

const KIND_TONE = {
  [InboxItemKind.OFFER]: "info",
  [InboxItemKind.APPROVAL]: "success",
  [InboxItemKind.TASK]: "progress",
  [InboxItemKind.APPROVAL_AHEAD]: "neutral",
  [InboxItemKind.ESCALATION]: "warning",
  [InboxItemKind.DECLINED]: "warning",
  [InboxItemKind.ACCEPTED]: "success",
  [InboxItemKind.CLOSED]: "neutral",
  [InboxItemKind.UNSPECIFIED]: "neutral",
} as const;

const ACTION_HINT: Record<InboxItemKind, string> = {
  [InboxItemKind.UNSPECIFIED]: "Open",
  [InboxItemKind.OFFER]: "Accept or decline",
  [InboxItemKind.APPROVAL]: "Review and commit",
  [InboxItemKind.TASK]: "Work on the task",
  [InboxItemKind.APPROVAL_AHEAD]: "See the offer",
  [InboxItemKind.ESCALATION]: "Follow it up",
  [InboxItemKind.DECLINED]: "Offer it again or cancel",
  [InboxItemKind.ACCEPTED]: "See the session",
  [InboxItemKind.CLOSED]: "See the session",
};

/** Above this many items the list is virtualized. */
const VIRTUALIZE_ABOVE = 40;
const ITEM_GAP = 8;

function Row({ item, from, onDismiss }: { item: InboxItem; from: string; onDismiss?: () => void }) {
  const ahead = item.kind === InboxItemKind.APPROVAL_AHEAD;
  const label = item.asApprover && !ahead ? "Needs your approval" : INBOX_KIND_LABEL[item.kind];
  return (
    <div
      className="rounded-lg border border-slate-200 p-3 dark:border-slate-800"
      data-testid="inbox-item"
      data-kind={InboxItemKind[item.kind]}
      data-session={item.sessionId}
    >
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1.5">
        <Badge info={{ label, tone: KIND_TONE[item.kind], icon: INBOX_KIND_ICON[item.kind], hint: label }} />
        <span className="text-xs text-slate-700 dark:text-slate-300">
          {item.fromParticipant ? (
            <>
              from <strong className="font-semibold">{from}</strong> ·{" "}
            </>
          ) : null}
          <RelativeTime ms={item.sinceUnixMs} />
        </span>
        {onDismiss ? (
          <button
            type="button"
            onClick={onDismiss}
            className="ml-auto rounded px-2 py-0.5 text-xs font-medium text-slate-700 ring-1 ring-slate-300 hover:bg-slate-100 dark:text-slate-300 dark:ring-slate-700 dark:hover:bg-slate-800"
            data-testid="inbox-news-dismiss"
          >
            Dismiss<span className="sr-only">: {clipLine(item.summary)}</span>
          </button>
        ) : null}
        {item.expiresAtUnixMs > 0n ? (
          <span className="inline-flex items-center gap-1 text-xs text-slate-700 dark:text-slate-300">
            <Icon name="clock" className="h-3.5 w-3.5" /> <span className="sr-only">Time left: </span>
            <TtlCountdown expiresAt={item.expiresAtUnixMs} />
          </span>
        ) : null}
      </div>
      <p className="mt-1.5 text-sm font-medium break-words text-slate-900 dark:text-slate-50">{clipLine(item.summary)}</p>
      <p className="mt-0.5 text-sm break-words text-slate-700 dark:text-slate-300">
        {clipLine(item.intent)}
        {item.scope && item.scope !== item.intent ? <span> · {clipLine(item.scope)}</span> : null}
      </p>
      <Link
        href={sessionHref(item.sessionId)}
        className="mt-2 inline-flex items-center gap-1 text-sm font-semibold text-blue-800 hover:underline dark:text-sky-300"
        data-testid="inbox-open"
      >
        {item.asApprover && !ahead
          ? "Approve or reject"
          : item.kind === InboxItemKind.DECLINED && item.mode === TASK_MODE
            ? "Cancel or ask someone else"
            : ACTION_HINT[item.kind]}{" "}
        <Icon name="chevron-right" className="h-3.5 w-3.5" />
        <span className="sr-only">: {clipLine(item.intent)}</span>
      </Link>
    </div>
  );
}

function VirtualItems({ items, fromOf }: { items: readonly InboxItem[]; fromOf: (item: InboxItem) => string }) {
  const [listEl, setListEl] = useState<HTMLUListElement | null>(null);
  const scrollMargin = useElementOffsetTop(listEl);
  const virtualizer = useWindowVirtualizer({
    count: items.length,
    estimateSize: () => 118,
    gap: ITEM_GAP,
    overscan: 6,
    scrollMargin,
    getItemKey: (i) => (items[i] ? inboxKey(items[i]) : i),
  });
  return (
    <ul
      ref={setListEl}
      className="relative"
      style={{ height: virtualizer.getTotalSize() }}
      aria-label={`Waiting on me, ${items.length.toLocaleString("en-US")} items`}
    >
      {virtualizer.getVirtualItems().map((vi) => {
        const item = items[vi.index] as InboxItem;
        return (
          <li
            key={vi.key}
            data-index={vi.index}
            ref={virtualizer.measureElement}
            aria-setsize={items.length}
            aria-posinset={vi.index + 1}
            className="absolute top-0 left-0 w-full"
            style={{ transform: `translateY(${vi.start - virtualizer.options.scrollMargin}px)` }}
          >
            <Row item={item} from={fromOf(item)} />
          </li>
        );
      })}
    </ul>
  );
}

export interface InboxItemsProps {
  /** The stream's first update has arrived. */
  loaded: boolean;
  items: readonly InboxItem[];
  /** Approvals that will be mine once an offer is answered (not counted). */
  ahead: readonly InboxItem[];
  /** What happened to sessions I started (not counted; dismissible in this browser). */
  news: readonly InboxItem[];
}

function Items({ loaded, items, ahead, news }: InboxItemsProps) {
  const { me } = useWhoAmI();
  const { directory } = useDirectory(Boolean(me));
  const { dismissed, dismiss } = useDismissedNews(me?.participantId ?? "");
  const shownNews = news.filter((item) => !dismissed.has(newsKey(item)));
  return (
    <>
      {loaded && items.length === 0 ? (
        <InboxEmpty />
      ) : items.length > VIRTUALIZE_ABOVE ? (
        <VirtualItems items={items} fromOf={(item) => nameIn(directory, item.fromParticipant)} />
      ) : (
        <ul className="space-y-2" aria-label="Waiting on me">
          {items.map((item) => (
            <li key={inboxKey(item)}>
              <Row item={item} from={nameIn(directory, item.fromParticipant)} />
            </li>
          ))}
        </ul>
      )}
      {ahead.length > 0 ? (
        <section aria-labelledby="inbox-ahead-title" className="space-y-2" data-testid="inbox-ahead">
          <h2 id="inbox-ahead-title" className="pt-2 text-base font-semibold">
            Coming up for you
          </h2>
          <p className="text-sm text-slate-700 dark:text-slate-300">
            Nothing to do yet: you approve these once the person offered the handoff answers.
          </p>
          <ul className="space-y-2" aria-label="Coming up for you">
            {ahead.map((item) => (
              <li key={inboxKey(item)}>
                <Row item={item} from={nameIn(directory, item.fromParticipant)} />
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {shownNews.length > 0 ? (
        <section aria-labelledby="inbox-news-title" className="space-y-2" data-testid="inbox-news">
          <h2 id="inbox-news-title" className="pt-2 text-base font-semibold">
            News about your sessions
          </h2>
          <p className="text-sm text-slate-700 dark:text-slate-300">
            Nothing to do: what happened over the last day to sessions you started.
          </p>
          <ul className="space-y-2" aria-label="News about your sessions">
            {shownNews.map((item) => (
              <li key={newsKey(item)}>
                <Row item={item} from={nameIn(directory, item.fromParticipant)} onDismiss={() => dismiss(item)} />
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      <FileInboxCard />
    </>
  );
}

export function InboxItems(props: InboxItemsProps) {
  return (
    <QueryProvider>
      <Items {...props} />
    </QueryProvider>
  );
}
