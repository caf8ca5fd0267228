"use client";
// Timestamps honour the global local/UTC toggle; the other zone is in the
// tooltip. Countdowns and relative times share one page clock.

import clsx from "clsx";
import { formatClock, formatCompact, formatRelative, formatTimestamp, toIso, ttlStatus } from "@/lib/views/format";
import { useUiStore } from "@/lib/client/ui-store";
import { useNow } from "@/lib/client/use-now";

type Ms = number | bigint | undefined | null;

export function Timestamp({ ms, clockOnly, className }: { ms: Ms; clockOnly?: boolean; className?: string }) {
  const tz = useUiStore((s) => s.timeZone);
  const iso = toIso(ms);
  if (!iso) return <span className={className}>—</span>;
  const shown = clockOnly ? formatClock(ms, tz) : formatTimestamp(ms, tz);
  const other = formatTimestamp(ms, tz === "utc" ? "local" : "utc");
  return (
    <time dateTime={iso} title={other} className={clsx("tabular-nums", className)}>
      {shown}
    </time>
  );
}

/** Clock time for today, "MM-DD HH:mm" otherwise; the full timestamp in the tooltip. */
export function CompactTime({ ms, className }: { ms: Ms; className?: string }) {
  const tz = useUiStore((s) => s.timeZone);
  const now = useNow();
  const iso = toIso(ms);
  if (!iso) return <span className={className}>—</span>;
  return (
    <time dateTime={iso} title={formatTimestamp(ms, tz)} className={clsx("tabular-nums", className)}>
      {now === 0 ? formatClock(ms, tz) : formatCompact(ms, tz, now)}
    </time>
  );
}

export function RelativeTime({ ms, className }: { ms: Ms; className?: string }) {
  const now = useNow();
  const tz = useUiStore((s) => s.timeZone);
  const iso = toIso(ms);
  if (!iso) return <span className={className}>—</span>;
  return (
    <time dateTime={iso} title={formatTimestamp(ms, tz)} className={clsx("tabular-nums", className)}>
      {now === 0 ? "" : formatRelative(ms, now)}
    </time>
  );
}

/** Live countdown to `expiresAt`; `terminalLabel` replaces it for closed sessions. */
export function TtlCountdown({
  expiresAt,
  terminalLabel,
  frozen,
  className,
}: {
  expiresAt: Ms;
  terminalLabel?: string;
  frozen?: boolean;
  className?: string;
}) {
  const now = useNow();
  if (terminalLabel) return <span className={clsx("text-slate-600 dark:text-slate-400", className)}>{terminalLabel}</span>;
  if (now === 0) return <span className={className}>—</span>;
  const ttl = ttlStatus(expiresAt, now);
  const iso = toIso(expiresAt);
  return (
    <span
      className={clsx(
        "tabular-nums",
        ttl.kind === "remaining" && ttl.urgent && "font-semibold text-red-700 dark:text-red-300",
        ttl.kind === "elapsed" && "text-slate-600 dark:text-slate-400",
        className,
      )}
      title={iso ? `Expires ${iso}` : undefined}
    >
      {ttl.kind === "remaining" ? (
        <>
          {ttl.text}
          {frozen ? " (frozen)" : ""}
          <span className="sr-only"> left</span>
        </>
      ) : (
        ttl.text
      )}
    </span>
  );
}
