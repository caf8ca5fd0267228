// The items of /inbox as drawn: what waits on me, the empty state, and what
// comes up next; by the server's first view (InboxPreview.tsx, no inbox
// JavaScript before `load`) and by the live inbox (InboxRows.tsx, which adds
// the news). A long inbox is virtualized by the live code (InboxItems.tsx),
// handed in as `Virtual`; until then the newest FIRST_VIEW_ITEMS items are
// drawn in flow. No hooks and no "use client".

import Link from "next/link";
import type { ComponentType, ReactNode } from "react";
import type { InboxItem } from "@/lib/gen/baton/v1/actions_pb";
import { FIRST_VIEW_ITEMS } from "@/lib/views/inbox-first-view";
import { INBOX_ITEM_KIND, type InboxItemKindValue } from "@/features/inbox/inbox-kinds";
import { inboxKey } from "@/features/inbox/inbox-state";
import { sessionHref } from "@/lib/views/route-params";
import { clipLine } from "@/lib/views/clip";
import { Badge } from "@/components/ui/Badge";
import { Icon } from "@/components/ui/Icon";
import { RelativeTime, TtlCountdown } from "@/components/ui/Time";
import { InboxEmpty } from "@/features/inbox/InboxEmpty";
import { TASK_MODE } from "@/lib/macp/constants";

const K = INBOX_ITEM_KIND;

const INBOX_KIND_LABEL: Readonly<Record<InboxItemKindValue, string>> = Object.freeze({
  [K.UNSPECIFIED]: "Waiting",
  [K.OFFER]: "Offer to you",
  [K.APPROVAL]: "Needs your commit",
  [K.TASK]: "Task for you",
  [K.APPROVAL_AHEAD]: "Your approval next",
  [K.ESCALATION]: "Unanswered offer",
  [K.DECLINED]: "Back with you",
  [K.ACCEPTED]: "Accepted",
  [K.CLOSED]: "Closed",
});

const INBOX_KIND_ICON: Readonly<Record<InboxItemKindValue, "send" | "seal" | "inbox" | "question" | "x" | "check">> = Object.freeze({
  [K.UNSPECIFIED]: "question",
  [K.OFFER]: "send",
  [K.APPROVAL]: "seal",
  [K.TASK]: "inbox",
  [K.APPROVAL_AHEAD]: "seal",
  [K.ESCALATION]: "question",
  [K.DECLINED]: "x",
  [K.ACCEPTED]: "check",
  [K.CLOSED]: "seal",
});

const KIND_TONE = {
  [K.OFFER]: "info",
  [K.APPROVAL]: "success",
  [K.TASK]: "progress",
  [K.APPROVAL_AHEAD]: "neutral",
  [K.ESCALATION]: "warning",
  [K.DECLINED]: "warning",
  [K.ACCEPTED]: "success",
  [K.CLOSED]: "neutral",
  [K.UNSPECIFIED]: "neutral",
} as const;

const ACTION_HINT: Readonly<Record<InboxItemKindValue, string>> = Object.freeze({
  [K.UNSPECIFIED]: "Open",
  [K.OFFER]: "Accept or decline",
  [K.APPROVAL]: "Review and commit",
  [K.TASK]: "Work on the task",
  [K.APPROVAL_AHEAD]: "See the offer",
  [K.ESCALATION]: "Follow it up",
  [K.DECLINED]: "Offer it again or cancel",
  [K.ACCEPTED]: "See the session",
  [K.CLOSED]: "See the session",
});

/** The kind's name as the generated enum spells it (data-kind, for tests and styling). */
const KIND_NAME: Readonly<Record<InboxItemKindValue, string>> = Object.freeze(
  Object.fromEntries(Object.entries(K).map(([name, value]) => [value, name])) as Record<InboxItemKindValue, string>,
);

/** Who sent an item, by name. */
export type FromOf = (item: InboxItem) => string;

export function InboxRow({ item, from, onDismiss }: { item: InboxItem; from: string; onDismiss?: (() => void) | undefined }) {
  const kind = item.kind as InboxItemKindValue;
  const ahead = kind === K.APPROVAL_AHEAD;
  const label = item.asApprover && !ahead ? "Needs your approval" : (INBOX_KIND_LABEL[kind] ?? INBOX_KIND_LABEL[K.UNSPECIFIED]);
  return (
    <div
      className="rounded-lg border border-slate-200 p-3 dark:border-slate-800"
      data-testid="inbox-item"
      data-kind={KIND_NAME[kind] ?? KIND_NAME[K.UNSPECIFIED]}
      data-session={item.sessionId}
    >
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1.5">
        <Badge
          info={{
            label,
            tone: KIND_TONE[kind] ?? KIND_TONE[K.UNSPECIFIED],
            icon: INBOX_KIND_ICON[kind] ?? INBOX_KIND_ICON[K.UNSPECIFIED],
            hint: label,
          }}
        />
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
          : kind === K.DECLINED && item.mode === TASK_MODE
            ? "Cancel or ask someone else"
            : (ACTION_HINT[kind] ?? ACTION_HINT[K.UNSPECIFIED])}{" "}
        <Icon name="chevron-right" className="h-3.5 w-3.5" />
        <span className="sr-only">: {clipLine(item.intent)}</span>
      </Link>
    </div>
  );
}

/** The live code's virtualized list's props. */
export interface VirtualItemsProps {
  items: readonly InboxItem[];
  fromOf: FromOf;
}

export interface InboxRowsProps {
  /** What waits is known (the first view or the live inbox); until then nothing is drawn. */
  loaded: boolean;
  items: readonly InboxItem[];
  ahead: readonly InboxItem[];
  /** What happened to sessions I started (not counted; dismissible in this browser). */
  news: readonly InboxItem[];
  /** The signed-in person (whose dismissed news this browser keeps). */
  participantId: string;
  fromOf: FromOf;
  /** The live code's virtualized list, for more than FIRST_VIEW_ITEMS items (null until it has loaded). */
  Virtual: ComponentType<VirtualItemsProps> | null;
}

/** A titled list below what waits on me: what comes up next, and the news. */
export function InboxSection({ id, title, note, children }: { id: string; title: string; note: string; children: ReactNode }) {
  return (
    <section aria-labelledby={`inbox-${id}-title`} className="space-y-2" data-testid={`inbox-${id}`}>
      <h2 id={`inbox-${id}-title`} className="pt-2 text-base font-semibold">
        {title}
      </h2>
      <p className="text-sm text-slate-700 dark:text-slate-300">{note}</p>
      <ul className="space-y-2" aria-label={title}>
        {children}
      </ul>
    </section>
  );
}

/** What waits on me (or that nothing does), and what comes up next. */
export function InboxItemsView({
  loaded,
  items,
  ahead,
  fromOf,
  Virtual,
}: Pick<InboxRowsProps, "loaded" | "items" | "ahead" | "fromOf" | "Virtual">) {
  return (
    <>
      {loaded && items.length === 0 ? (
        <InboxEmpty />
      ) : items.length > FIRST_VIEW_ITEMS && Virtual ? (
        <Virtual items={items} fromOf={fromOf} />
      ) : items.length > 0 ? (
        <ul className="space-y-2" aria-label="Waiting on me">
          {items.slice(0, FIRST_VIEW_ITEMS).map((item) => (
            <li key={inboxKey(item)}>
              <InboxRow item={item} from={fromOf(item)} />
            </li>
          ))}
        </ul>
      ) : null}
      {ahead.length > 0 ? (
        <InboxSection
          id="ahead"
          title="Coming up for you"
          note="Nothing to do yet: you approve these once the person offered the handoff answers."
        >
          {ahead.slice(0, FIRST_VIEW_ITEMS).map((item) => (
            <li key={inboxKey(item)}>
              <InboxRow item={item} from={fromOf(item)} />
            </li>
          ))}
        </InboxSection>
      ) : null}
    </>
  );
}
