"use client";
// The signed-in person's inbox as the page sees it: the query cache entry
// under queryKeys.inbox, the one place the navigation badge and the /inbox
// page read. The WatchInbox stream that fills it lives in
// lib/client/inbox-stream.ts and is started by <InboxWatcher/> (layout) once
// the page has loaded; this module stays free of Connect and protobuf-es so
// the layout does not carry them.

import { useQuery, useQueryClient } from "@tanstack/react-query";
import { INITIAL_CONNECTION, type ConnectionInfo } from "@/lib/client/connection";
import { INITIAL_INBOX, type InboxState } from "@/lib/client/inbox-state";
import { queryKeys } from "@/lib/client/query-keys";

export interface InboxData {
  inbox: InboxState;
  connection: ConnectionInfo;
}

export const initialInboxData = (): InboxData => ({ inbox: INITIAL_INBOX, connection: INITIAL_CONNECTION });

/** The inbox as last folded (empty until the stream's first update). */
export function useInbox(): InboxData {
  const qc = useQueryClient();
  const { data } = useQuery({
    queryKey: queryKeys.inbox,
    queryFn: () => qc.getQueryData<InboxData>(queryKeys.inbox) ?? initialInboxData(),
    initialData: initialInboxData,
    staleTime: Number.POSITIVE_INFINITY,
  });
  return data;
}
