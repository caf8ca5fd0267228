"use client";
// "Inbox" in the navigation with a live count of what waits on the person,
// also put in front of the tab title ("(2) Sessions · Baton").

import clsx from "clsx";
import Link from "next/link";
import { useEffect } from "react";
import { inboxCountLabel } from "@/features/inbox/inbox-state";
import { keepTitleCount } from "@/features/inbox/title-count";
import { useInbox } from "@/features/inbox/use-inbox";

export function InboxNavLink({ active, className }: { active: boolean; className: string }) {
  const { inbox } = useInbox();
  const count = inbox.items.length;
  const shown = inbox.loaded ? count : 0;
  // The tab title carries the count too, so a background tab shows that something waits.
  useEffect(() => keepTitleCount(document, shown), [shown]);
  return (
    <Link
      href="/inbox"
      prefetch={false}
      aria-current={active ? "page" : undefined}
      className={clsx(className, "inline-flex items-center gap-1.5")}
      data-testid="nav-inbox"
    >
      Inbox
      {inbox.loaded && count > 0 ? (
        <span
          className="inline-flex min-w-5 items-center justify-center rounded-full bg-red-700 px-1.5 text-xs leading-5 font-bold text-white tabular-nums dark:bg-red-300 dark:text-red-950"
          data-testid="nav-inbox-count"
        >
          {count > 99 ? "99+" : count}
        </span>
      ) : null}
      <span className="sr-only">{inbox.loaded ? `: ${inboxCountLabel(count)}` : ""}</span>
    </Link>
  );
}
