"use client";
// useSessionStream(sessionId): one session, live. Folds SubscribeSession
// (metadata, history events with explicit sequences, caught_up, live events,
// heartbeats) with the pure applySubscribeBatch — which drops sequences at or
// below lastSequence and detects gaps — and reconnects with
// after_sequence = lastSequence after a drop or > 35 s of heartbeat silence.
// State lives in the query cache, so returning to a session resumes from
// where this tab left off. Phase changes seen live go to the announcer.

import { useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useEffect, useReducer, useRef } from "react";
import type { SubscribeSessionResponse } from "@/lib/gen/baton/v1/console_pb";
import { announce } from "@/lib/client/announcer";
import {
  clearConnection,
  connectionFromRunner,
  INITIAL_CONNECTION,
  reportConnection,
  type ConnectionInfo,
} from "@/lib/client/connection";
import { queryKeys } from "@/lib/client/query-keys";
import {
  applySubscribeBatch,
  beginConnection,
  initialSessionStreamState,
  resumeAfterSequence,
  type SessionStreamState,
  type StreamDirective,
} from "@/lib/client/session-stream-state";
import { runResilientStream, type RunnerHandle } from "@/lib/client/stream-runner";
import { consoleClient } from "@/lib/client/transport";
import { abortOnPageHide, useStreamLifetime } from "@/lib/client/use-stream-lifetime";

export interface SessionStreamData {
  stream: SessionStreamState;
  connection: ConnectionInfo;
}

const initialData = (sessionId: string): SessionStreamData => ({
  stream: initialSessionStreamState(sessionId),
  connection: INITIAL_CONNECTION,
});

/** Fold at least this often while events arrive. */
const FOLD_MS = 16;
/** Fold immediately once this many events are buffered. */
const FOLD_MAX = 256;
/** Publish folded state to React at most this often while live… */
const PUBLISH_MS = 50;
/** …and less often while history is replayed (each publish rebuilds the timeline). */
const REPLAY_PUBLISH_MS = 250;
/** Yield to the browser after this much folding work. */
const YIELD_AFTER_MS = 12;

function startSessionStream(qc: QueryClient, sessionId: string, signal: AbortSignal): RunnerHandle {
  const key = queryKeys.session(sessionId);
  let data: SessionStreamData = qc.getQueryData<SessionStreamData>(key) ?? initialData(sessionId);
  let buffer: SubscribeSessionResponse[] = [];
  let foldTimer: ReturnType<typeof setTimeout> | undefined;
  let publishTimer: ReturnType<typeof setTimeout> | undefined;
  let pendingAnnouncement: string | undefined;
  let workSince = 0;

  const publish = (): void => {
    publishTimer = undefined;
    if (signal.aborted) return;
    qc.setQueryData<SessionStreamData>(key, data);
    if (pendingAnnouncement) {
      announce(pendingAnnouncement);
      pendingAnnouncement = undefined;
    }
  };
  const schedulePublish = (): void => {
    if (!publishTimer) publishTimer = setTimeout(publish, data.stream.caughtUp ? PUBLISH_MS : REPLAY_PUBLISH_MS);
  };

  const fold = (): StreamDirective => {
    if (foldTimer) {
      clearTimeout(foldTimer);
      foldTimer = undefined;
    }
    if (buffer.length === 0) return "continue";
    const t0 = performance.now();
    const r = applySubscribeBatch(data.stream, buffer);
    buffer = [];
    workSince += performance.now() - t0;
    if (r.state !== data.stream) data = { ...data, stream: r.state };
    if (r.announcement) pendingAnnouncement = r.announcement;
    schedulePublish();
    return r.directive;
  };

  let handle: RunnerHandle | undefined;
  const foldLater = (): void => {
    if (foldTimer) return;
    foldTimer = setTimeout(() => {
      foldTimer = undefined;
      const d = fold();
      if (d !== "continue") handle?.command(d);
    }, FOLD_MS);
  };

  signal.addEventListener(
    "abort",
    () => {
      if (foldTimer) clearTimeout(foldTimer);
      if (publishTimer) clearTimeout(publishTimer);
    },
    { once: true },
  );

  handle = runResilientStream<SubscribeSessionResponse>(
    {
      connect: (s) =>
        consoleClient().subscribeSession({ sessionId, afterSequence: resumeAfterSequence(data.stream) }, { signal: s }),
      onConnect: () => {
        // Leftovers from the previous connection are valid events: fold them first.
        fold();
        data = { ...data, stream: beginConnection(data.stream) };
      },
      onMessage: (m) => {
        buffer.push(m);
        const isEvent = m.item.case === "event";
        if (m.item.case === "heartbeat" && buffer.length === 1) {
          buffer = [];
          return "continue";
        }
        if (!isEvent || buffer.length >= FOLD_MAX) {
          const directive = fold();
          if (m.item.case === "caughtUp" || m.item.case === "metadata") {
            // History is complete (or the lifecycle changed): show it now.
            if (publishTimer) clearTimeout(publishTimer);
            publish();
          }
          if (workSince > YIELD_AFTER_MS) {
            workSince = 0;
            return new Promise<StreamDirective>((resolve) => setTimeout(() => resolve(directive), 0));
          }
          return directive;
        }
        foldLater();
        return "continue";
      },
      onStatus: (status) => {
        if (status.phase === "waiting" || status.phase === "ended") fold();
        data = { ...data, connection: connectionFromRunner(data.connection, status) };
        reportConnection(`session:${sessionId}`, "Session", data.connection);
        publish();
      },
    },
    signal,
  );
  return handle;
}

export interface SessionStreamResult extends SessionStreamData {
  retryNow(): void;
}

export function useSessionStream(sessionId: string): SessionStreamResult {
  const qc = useQueryClient();
  const key = queryKeys.session(sessionId);
  const { data } = useQuery({
    queryKey: key,
    queryFn: () => qc.getQueryData<SessionStreamData>(key) ?? initialData(sessionId),
    initialData: () => initialData(sessionId),
  });
  const handle = useRef<RunnerHandle | null>(null);
  const generation = useStreamLifetime();
  const [restart, setRestart] = useRestartCounter();

  useEffect(() => {
    const ac = new AbortController();
    const disposePageHide = abortOnPageHide(ac);
    handle.current = startSessionStream(qc, sessionId, ac.signal);
    const onOnline = (): void => handle.current?.retryNow();
    window.addEventListener("online", onOnline);
    return () => {
      ac.abort();
      disposePageHide();
      window.removeEventListener("online", onOnline);
      handle.current = null;
      clearConnection(`session:${sessionId}`);
    };
  }, [qc, sessionId, generation, restart]);

  return {
    ...data,
    retryNow: () => {
      // After a fatal end there is no loop to wake: start a new one.
      if (data.connection.state === "ended") setRestart();
      else handle.current?.retryNow();
    },
  };
}

function useRestartCounter(): [number, () => void] {
  const [n, bump] = useReducer((x: number) => x + 1, 0);
  return [n, bump];
}
