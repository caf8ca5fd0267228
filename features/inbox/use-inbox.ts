"use client";
// The signed-in person's inbox as the page sees it: a small zustand store,
// the one place the navigation badge and the /inbox page read. The WatchInbox
// stream that fills it lives in features/inbox/inbox-stream.ts and is started by
// <InboxWatcher/> (layout) once the page has loaded; this module stays free
// of Connect, protobuf-es and TanStack Query so the layout does not carry
// them. Written only in the browser: the server render, and the hydration
// render, see the empty inbox.

import { createStore, useStore } from "zustand";
import { INITIAL_CONNECTION, type ConnectionInfo } from "@/lib/client/connection";
import { INITIAL_INBOX, type InboxState } from "@/features/inbox/inbox-state";

export interface InboxData {
  inbox: InboxState;
  connection: ConnectionInfo;
}

export const initialInboxData = (): InboxData => ({ inbox: INITIAL_INBOX, connection: INITIAL_CONNECTION });

/** The inbox as last folded by the stream (empty until its first update). */
export const inboxStore = createStore<InboxData>()(initialInboxData);

/** The inbox as last folded (empty until the stream's first update). */
export function useInbox(): InboxData {
  return useStore(inboxStore);
}
