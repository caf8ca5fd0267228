"use client";
// One session in the live list: SessionRowView (the markup, shared with the
// server's first view) with the stuck clock, for a row that can get stuck.

import { memo } from "react";
import type { SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { stuckSince } from "@/lib/macp/projections/status";
import { summaryStatusFacts } from "@/lib/views/labels";
import type { Directory } from "@/lib/views/directory";
import { useNowWhen } from "@/lib/client/use-now";
import { SessionRowView } from "@/features/sessions-list/SessionRowView";

export { LIST_GRID, rowPeople, sessionIdOf } from "@/features/sessions-list/SessionRowView";

export const SessionRow = memo(function SessionRow({
  summary,
  selected,
  onSelect,
  directory,
  stuckAfterMs,
}: {
  summary: SessionSummary;
  selected: boolean;
  onSelect: (id: string) => void;
  /** Names for people (and agents the directory knows). */
  directory?: Directory;
  /** The stuck threshold (the console's BATON_STUCK_AFTER_MINUTES). */
  stuckAfterMs: number;
}) {
  const since = stuckSince({
    ...summaryStatusFacts(summary),
    phaseSinceMs: Number(summary.phaseSinceUnixMs),
    lastActivityMs: Number(summary.lastActivityUnixMs),
  });
  // Only a row that can get stuck follows the clock.
  const now = useNowWhen(since !== undefined);
  const stuckMs = since !== undefined && now > 0 && now - since >= stuckAfterMs ? now - since : undefined;
  return (
    <SessionRowView
      summary={summary}
      selected={selected}
      onSelect={onSelect}
      stuckAfterMs={stuckAfterMs}
      stuckMs={stuckMs}
      {...(directory ? { directory } : {})}
    />
  );
});
