"use client";
// The signed-in person's inbox, live: one WatchInbox stream per page (started
// by <InboxWatcher/> in the layout, through a dynamic import once the page has
// loaded, while someone is signed in), folded into the inbox store that
// useInbox() reads (features/inbox/use-inbox.ts), reconnecting like the other
// streams. New items are handed to `onFresh` (announcement, notification).

import { useEffect } from "react";
import type { WatchInboxResponse } from "@/lib/gen/baton/v1/actions_pb";
import { connectionFromRunner } from "@/lib/client/connection";
import { applyInboxMessage, type InboxState } from "@/features/inbox/inbox-state";
import { runResilientStream } from "@/lib/client/stream-runner";
import { actionClient } from "@/lib/client/transport";
import { inboxStore, type InboxData } from "@/features/inbox/use-inbox";
import { abortOnPageHide, useStreamLifetime } from "@/lib/client/use-stream-lifetime";

function startInboxStream(signal: AbortSignal, onFresh: (state: InboxState) => void): void {
  let data: InboxData = inboxStore.getState();
  const publish = (): void => {
    if (!signal.aborted) inboxStore.setState(data, true);
  };
  runResilientStream<WatchInboxResponse>(
    {
      connect: (s) => actionClient().watchInbox({}, { signal: s }),
      onMessage: (m) => {
        if (m.item.case !== "update") return "continue";
        data = { ...data, inbox: applyInboxMessage(data.inbox, m) };
        publish();
        if (data.inbox.fresh.length > 0) onFresh(data.inbox);
        return "continue";
      },
      onStatus: (status) => {
        data = { ...data, connection: connectionFromRunner(data.connection, status) };
        publish();
      },
    },
    signal,
  );
}

/** Runs the inbox stream while mounted and `enabled`. */
export function useInboxStream(enabled: boolean, onFresh: (state: InboxState) => void): void {
  const generation = useStreamLifetime();
  useEffect(() => {
    if (!enabled) return;
    const ac = new AbortController();
    const dispose = abortOnPageHide(ac);
    startInboxStream(ac.signal, onFresh);
    return () => {
      ac.abort();
      dispose();
    };
  }, [enabled, generation, onFresh]);
}
