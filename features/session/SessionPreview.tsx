// The session page's first view, rendered on the server from the same folded
// stream state the live view uses (lib/gateway/session-preview.ts): header,
// outcome, summaries and the first rows of the timeline, as plain HTML. It
// needs none of the live JavaScript; LiveSession swaps in the live view once
// the page has loaded and the browser's own stream has caught up.

import { eventCount, indexOfSequence, type SessionStreamState } from "@/lib/views/session-stream-state";
import { buildTimeline } from "@/lib/views/timeline";
import { describeEvent, type PayloadBlob } from "@/lib/views/event-details";
import { SessionHeader } from "@/features/session/SessionHeader";
import { SessionSummaries } from "@/features/session/Summaries";
import { ActorLabelView } from "@/features/session/ActorLabelView";
import { StaticPayload } from "@/features/session/StaticPayload";
import { EventCardView, GroupHeaderView, RefusalNoteView, TimelineBar } from "@/features/session/TimelineRowViews";
import { formatCount } from "@/lib/views/format";

/**
 * Rows shown before the live view. The timeline starts about 600 px down a
 * desktop page, below the header and summaries, and a row is 100–300 px
 * tall: a 1440×900 screen shows one or two rows, a phone none before it
 * scrolls. Each row costs about 4.5 KiB of markup and as much again of the
 * page's RSC payload, rendered by the server before its first byte, then
 * parsed and hydrated by the browser: at 12 rows the page was 65 KiB larger
 * (2026-11-28).
 */
export const PREVIEW_ROWS = 6;
/**
 * Events the first view's timeline is built from (the first ones, or those
 * around a deep-linked event): the server's work per request stays the same
 * however long the history is.
 */
export const PREVIEW_WINDOW_EVENTS = 200;

const CONNECTING = { state: "connecting", reconnects: 0 } as const;

const renderPayload = (blob: PayloadBlob, typed: boolean) => <StaticPayload blob={blob} typed={typed} />;
const renderOutput = (blob: PayloadBlob) => <StaticPayload blob={blob} typed={false} />;

export function SessionPreview({ state, aroundSequence }: { state: SessionStreamState; aroundSequence?: number }) {
  const { sessionId, view, metadata, events } = state;
  // A handed-over window (lib/views/session-handover.ts) counts the events before it too.
  const total = eventCount(state);
  // A deep link to one event shows the rows around it; otherwise the first rows.
  const linked = aroundSequence !== undefined ? indexOfSequence(events, aroundSequence) : -1;
  const first = linked >= 0 ? Math.max(0, linked - PREVIEW_WINDOW_EVENTS / 2) : 0;
  const timeline = buildTimeline(view, events.slice(first, first + PREVIEW_WINDOW_EVENTS));
  // Only the events the summaries link to (offers, the commitment) need their sequence.
  const linkedIds = new Set<string>(view.handoff?.offers.map((o) => o.offerMessageId) ?? []);
  if (view.commitment) linkedIds.add(view.commitment.messageId);
  const sequences = new Map<string, number>();
  for (const e of events)
    if (e.sequence !== undefined && linkedIds.has(e.envelope.messageId)) sequences.set(e.envelope.messageId, e.sequence);
  const sequenceOf = (id: string) => sequences.get(id) ?? state.linkedSequences?.[id];
  const at = aroundSequence !== undefined ? timeline.rowOfSequence.get(aroundSequence) : undefined;
  const from = at !== undefined ? Math.max(0, at - 4) : 0;
  const rows = timeline.rows.slice(from, from + PREVIEW_ROWS);
  const shown = rows.reduce((n, r) => n + (r.kind === "event" ? 1 : 0), 0);
  const hidden = total - shown;
  return (
    <div className="space-y-4" data-testid="session-preview">
      <SessionHeader sessionId={sessionId} view={view} metadata={metadata} connection={CONNECTING} eventCount={total} />
      <SessionSummaries view={view} sessionId={sessionId} sequenceOf={sequenceOf} renderOutput={renderOutput} omitted={state.omitted} />
      <section aria-labelledby="timeline-title" className="space-y-2">
        <TimelineBar count={total} sticky={false}>
          <span className="ml-auto text-sm text-slate-700 dark:text-slate-300" role="status">
            Connecting the live timeline…
          </span>
        </TimelineBar>
        <div data-testid="timeline-preview">
          {rows.map((row) =>
            row.kind === "group" ? (
              <GroupHeaderView key={row.key} row={row} />
            ) : row.kind === "refusal" ? (
              <RefusalNoteView key={row.key} refusal={row.refusal} />
            ) : (
              <EventCardView
                key={row.key}
                row={row}
                sessionId={sessionId}
                details={describeEvent(row.event)}
                focused={false}
                highlighted={row.sequence === aroundSequence}
                actor={<ActorLabelView id={row.event.envelope.sender} />}
                renderPayload={renderPayload}
                raw={null}
              />
            ),
          )}
        </div>
        {hidden > 0 ? (
          <p className="pt-2 text-center text-sm text-slate-700 dark:text-slate-300">
            {formatCount(hidden)} more event{hidden === 1 ? " appears" : "s appear"} with the live timeline.
          </p>
        ) : null}
      </section>
    </div>
  );
}
