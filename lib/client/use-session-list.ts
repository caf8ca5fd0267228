"use client";
// useSessionList(): the live session list. Folds the WatchSessionList stream
// (snapshot chunks, then upserts and heartbeats) into the query cache via the
// pure applyListBatch, reconnecting with backoff; each reconnect starts with a
// fresh snapshot. The stream stops on unmount and when the tab is closed.

import { useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useEffect, useReducer, useRef } from "react";
import type { WatchSessionListResponse } from "@/lib/gen/baton/v1/console_pb";
import {
  clearConnection,
  connectionFromRunner,
  INITIAL_CONNECTION,
  reportConnection,
  type ConnectionInfo,
} from "@/lib/client/connection";
import { queryKeys } from "@/lib/client/query-keys";
import {
  applyListBatch,
  beginListConnection,
  initialSessionListState,
  type SessionListState,
} from "@/lib/client/session-list-state";
import { runResilientStream, type RunnerHandle } from "@/lib/client/stream-runner";
import { consoleClient } from "@/lib/client/transport";
import { abortOnPageHide, useStreamLifetime } from "@/lib/client/use-stream-lifetime";

export interface SessionListData {
  list: SessionListState;
  connection: ConnectionInfo;
}

const initialData = (): SessionListData => ({ list: initialSessionListState(), connection: INITIAL_CONNECTION });

/** How long messages may wait before they are folded and shown. */
const PUBLISH_MS = 50;

function startListStream(qc: QueryClient, signal: AbortSignal): RunnerHandle {
  const key = queryKeys.sessionList;
  let data: SessionListData = qc.getQueryData<SessionListData>(key) ?? initialData();
  let buffer: WatchSessionListResponse[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;

  const publish = (): void => {
    timer = undefined;
    if (buffer.length > 0) {
      data = { ...data, list: applyListBatch(data.list, buffer) };
      buffer = [];
    }
    if (!signal.aborted) qc.setQueryData<SessionListData>(key, data);
  };
  const schedule = (): void => {
    if (!timer) timer = setTimeout(publish, PUBLISH_MS);
  };
  signal.addEventListener("abort", () => timer && clearTimeout(timer), { once: true });

  return runResilientStream<WatchSessionListResponse>(
    {
      connect: (s) => consoleClient().watchSessionList({}, { signal: s }),
      onConnect: () => {
        publish();
        data = { ...data, list: beginListConnection(data.list) };
      },
      onMessage: (m) => {
        buffer.push(m);
        // The last snapshot chunk is shown at once; everything else is batched.
        if (m.item.case === "snapshot" && m.item.value.complete) publish();
        else if (m.item.case !== "heartbeat") schedule();
        return "continue";
      },
      onStatus: (status) => {
        data = { ...data, connection: connectionFromRunner(data.connection, status) };
        reportConnection("session-list", "Session list", data.connection);
        publish();
      },
    },
    signal,
  );
}

export interface SessionListResult extends SessionListData {
  retryNow(): void;
}

export function useSessionList(): SessionListResult {
  const qc = useQueryClient();
  const { data } = useQuery({
    queryKey: queryKeys.sessionList,
    queryFn: () => qc.getQueryData<SessionListData>(queryKeys.sessionList) ?? initialData(),
    initialData,
  });
  const handle = useRef<RunnerHandle | null>(null);
  const generation = useStreamLifetime();
  const [restart, bumpRestart] = useReducer((x: number) => x + 1, 0);

  useEffect(() => {
    const ac = new AbortController();
    const disposePageHide = abortOnPageHide(ac);
    handle.current = startListStream(qc, ac.signal);
    const onOnline = (): void => handle.current?.retryNow();
    window.addEventListener("online", onOnline);
    return () => {
      ac.abort();
      disposePageHide();
      window.removeEventListener("online", onOnline);
      handle.current = null;
      clearConnection("session-list");
    };
  }, [qc, generation, restart]);

  return {
    ...data,
    retryNow: () => {
      // After a fatal end there is no loop to wake: start a new one.
      if (data.connection.state === "ended") bumpRestart();
      else handle.current?.retryNow();
    },
  };
}
