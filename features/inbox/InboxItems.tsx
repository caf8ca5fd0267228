"use client";
// The live part of /inbox, loaded after `load` by InboxScreen (the items
// arrive with the inbox stream, which starts then too): the directory that
// names who sent each item, read through Connect and TanStack Query (handed
// to the screen once read, so the names of the server's first view stay
// until then), the v0.1 file handoffs card, and the virtualized list a long
// inbox is drawn with, so the page stays light however many items wait.
// None of it is part of the page's JavaScript before `load`; the rows
// themselves are InboxRows.tsx.

import { useWindowVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useState } from "react";
import type { InboxItem } from "@/lib/gen/baton/v1/actions_pb";
import { inboxKey } from "@/features/inbox/inbox-state";
import type { Directory } from "@/lib/views/directory";
import { QueryProvider } from "@/lib/client/query-provider";
import { useDirectory } from "@/lib/client/use-console-data";
import { useElementOffsetTop } from "@/lib/client/use-offset-top";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { FileInboxCard } from "@/features/inbox/FileInboxCard";
import { InboxRow, type VirtualItemsProps } from "@/features/inbox/InboxRows";
import { formatCount } from "@/lib/views/format";

const ITEM_GAP = 8;

/** A long inbox, window-virtualized. */
export function VirtualItems({ items, fromOf }: VirtualItemsProps) {
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
      aria-label={`Waiting on me, ${formatCount(items.length)} items`}
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
            <InboxRow item={item} from={fromOf(item)} />
          </li>
        );
      })}
    </ul>
  );
}

function DirectoryReader({ onDirectory }: { onDirectory: (d: Directory) => void }) {
  const { me } = useWhoAmI();
  const { directory, loaded } = useDirectory(Boolean(me));
  useEffect(() => {
    if (loaded) onDirectory(directory);
  }, [loaded, directory, onDirectory]);
  return null;
}

export interface InboxLiveProps {
  /** Told the console's directory once read (and again when it changes). */
  onDirectory: (d: Directory) => void;
}

export function InboxLive({ onDirectory }: InboxLiveProps) {
  return (
    <QueryProvider>
      <DirectoryReader onDirectory={onDirectory} />
      <FileInboxCard />
    </QueryProvider>
  );
}
