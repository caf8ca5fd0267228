"use client";
// The live timeline's rows: the plain views of TimelineRowViews.tsx with the
// interactive parts added (payload viewers, raw envelope, roving focus),
// memoized because thousands of them re-render as the session grows.

import { memo, useContext } from "react";
import { nameResolver } from "@/lib/views/directory";
import { describeEvent } from "@/lib/views/event-details";
import type { EventRow } from "@/lib/views/timeline";
import { Icon } from "@/components/ui/Icon";
import { PayloadView, UntypedPayloadView } from "@/features/session/PayloadView";
import { RawEnvelope } from "@/features/session/RawEnvelope";
import { ActorDirectoryContext, ActorLabel } from "@/features/session/ActorLabel";
import { EventCardView, GroupHeaderView, RefusalNoteView } from "@/features/session/TimelineRowViews";
import { useEscalationMark } from "@/features/session/EscalationPanel";

export const RefusalNote = memo(function RefusalNote(props: Omit<Parameters<typeof RefusalNoteView>[0], "nameOf">) {
  return <RefusalNoteView {...props} nameOf={nameResolver(useContext(ActorDirectoryContext))} />;
});

export const GroupHeader = memo(function GroupHeader(props: Omit<Parameters<typeof GroupHeaderView>[0], "nameOf">) {
  return <GroupHeaderView {...props} nameOf={nameResolver(useContext(ActorDirectoryContext))} />;
});

const renderPayload = (blob: Parameters<typeof PayloadView>[0]["blob"], typed: boolean) =>
  typed ? <PayloadView blob={blob} /> : <UntypedPayloadView blob={blob} />;

export const EventCard = memo(function EventCard({
  row,
  sessionId,
  focused,
  highlighted,
  rawOpen,
  onToggleRaw,
  onFocusRow,
}: {
  row: EventRow;
  sessionId: string;
  focused: boolean;
  highlighted: boolean;
  rawOpen: boolean;
  onToggleRaw: (sequence: number, open: boolean) => void;
  onFocusRow: (sequence: number) => void;
}) {
  const nameOf = nameResolver(useContext(ActorDirectoryContext));
  const env = row.event.envelope;
  const escalatedFor = useEscalationMark(env.messageId, env.messageType);
  return (
    <EventCardView
      row={row}
      sessionId={sessionId}
      details={describeEvent(row.event, nameOf)}
      focused={focused}
      highlighted={highlighted}
      onFocus={() => onFocusRow(row.sequence)}
      actor={
        escalatedFor !== undefined ? (
          <span className="inline-flex flex-wrap items-center gap-1.5">
            <ActorLabel id={env.sender} />
            <span
              className="inline-flex items-center gap-1 rounded-full bg-violet-100 px-2 py-0.5 text-xs font-medium text-violet-900 ring-1 ring-violet-300 ring-inset dark:bg-violet-950 dark:text-violet-100 dark:ring-violet-700"
              title="Sent by the Baton console for this person, under their identity, by the escalation they set up"
              data-testid="escalation-mark"
            >
              <Icon name="clock" className="h-3 w-3" /> by Baton for {nameOf(escalatedFor)} · escalation
            </span>
          </span>
        ) : (
          <ActorLabel id={env.sender} />
        )
      }
      renderPayload={renderPayload}
      raw={
        <details
          className="mt-1.5 text-xs"
          open={rawOpen}
          onToggle={(e) => {
            const open = (e.currentTarget as HTMLDetailsElement).open;
            if (open !== rawOpen) onToggleRaw(row.sequence, open);
          }}
        >
          <summary className="inline-flex cursor-pointer items-center gap-1 rounded px-1 text-slate-700 select-none hover:bg-slate-100 dark:text-slate-300 dark:hover:bg-slate-800">
            <Icon name="code" className="h-3.5 w-3.5" />
            Raw envelope
          </summary>
          {rawOpen ? (
            <div className="mt-1.5">
              <RawEnvelope event={row.event} />
            </div>
          ) : null}
        </details>
      }
    />
  );
});
