"use client";
// A list row's age: time since the session started, coarse, from the page's
// shared clock (empty until the browser runs it); the start itself on hover.

import { formatAge, formatTimestamp } from "@/lib/views/format";
import { useNow } from "@/lib/client/use-now";
import { useUiStore } from "@/lib/client/ui-store";

/** Time since the session started, coarse; the start itself on hover. */
export function RowAge({ startedMs }: { startedMs: bigint | undefined }) {
  const now = useNow();
  const tz = useUiStore((s) => s.timeZone);
  const ms = Number(startedMs ?? 0n);
  if (ms <= 0) return <span>—</span>;
  return (
    <time dateTime={new Date(ms).toISOString()} title={`Started ${formatTimestamp(ms, tz)}`} className="tabular-nums">
      {now === 0 ? "" : formatAge(now - ms)}
    </time>
  );
}
