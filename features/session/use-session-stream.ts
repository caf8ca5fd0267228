"use client";
// useSessionStream(sessionId): one session, live. Folds SubscribeSession
// (metadata, history events with explicit sequences, caught_up, live events,
// heartbeats) with the pure applySubscribeBatch — which drops sequences at or
// below lastSequence and detects gaps — and reconnects with
// after_sequence = lastSequence after a drop or > 35 s of heartbeat silence.
// State lives in the query cache, so returning to a session resumes from
// where this tab left off. Phase changes seen live go to the announcer.
//
// The server's first view hands its folded state over (a window of the last
// events, lib/views/session-handover.ts): it is the query's initial data, and
// the stream resumes after its lastSequence instead of replaying the history.
// The events before the window are read on demand (loadFullHistory), on a
// separate stream from the start up to caught_up, and adopted into the state.

import { useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useEffect, useReducer, useRef, useState } from "react";
import type { SubscribeSessionResponse } from "@/lib/gen/baton/v1/console_pb";
import { announce } from "@/lib/client/announcer";
import { clearConnection, connectionFromRunner, INITIAL_CONNECTION, reportConnection, type ConnectionInfo } from "@/lib/client/connection";
import { queryKeys } from "@/lib/client/query-keys";
import { getQueryClient } from "@/lib/client/query-provider";
import {
  applySubscribeBatch,
  beginConnection,
  initialSessionStreamState,
  isWindowed,
  resumeAfterSequence,
  type SessionStreamState,
  type StreamDirective,
} from "@/lib/views/session-stream-state";
import { adoptFullHistory, decodeHandover } from "@/lib/views/session-handover";
import { runResilientStream, type RunnerHandle } from "@/lib/client/stream-runner";
import { consoleClient } from "@/lib/client/transport";
import { abortOnPageHide, useStreamLifetime } from "@/lib/client/use-stream-lifetime";

export interface SessionStreamData {
  stream: SessionStreamState;
  connection: ConnectionInfo;
  /** Reading the events before a handed-over window: not asked, under way, or failed (with why). */
  earlier: { state: "idle" | "loading" } | { state: "failed"; error: string };
}

const IDLE = { state: "idle" } as const;

const initialData = (sessionId: string): SessionStreamData => ({
  stream: initialSessionStreamState(sessionId),
  connection: INITIAL_CONNECTION,
  earlier: IDLE,
});

/** The last handover decoded: the same page's state is decoded once, however often it is asked for. */
let lastHanded: { sessionId: string; handover: string; data: SessionStreamData | undefined } | undefined;

/** The page's handed-over state, or undefined when there is none or it does not check out (the stream then replays). */
function handedOver(sessionId: string, handover: string | undefined): SessionStreamData | undefined {
  if (!handover) return undefined;
  if (lastHanded?.sessionId === sessionId && lastHanded.handover === handover) return lastHanded.data;
  let data: SessionStreamData | undefined;
  try {
    data = { ...initialData(sessionId), stream: decodeHandover(handover, sessionId) };
  } catch (e) {
    console.warn(
      `Session ${sessionId}: the first view's state could not be used (${e instanceof Error ? e.message : String(e)}); replaying the history`,
    );
  }
  lastHanded = { sessionId, handover, data };
  return data;
}

/** Seeds the cache with the first view's state unless this tab already holds a newer one. */
function seedFromHandover(qc: QueryClient, sessionId: string, handover: string | undefined): void {
  const handed = handedOver(sessionId, handover);
  const key = queryKeys.session(sessionId);
  const cached = qc.getQueryData<SessionStreamData>(key);
  if (handed && (!cached || cached.stream.lastSequence < handed.stream.lastSequence)) qc.setQueryData(key, handed);
}

interface SessionStreamHandle {
  runner: RunnerHandle;
  /** Read the events before the window and adopt them; resolves with the complete state. */
  loadFullHistory(): Promise<SessionStreamState>;
}

/**
 * Fold at least this often while events arrive. Live (caught up), the first
 * event after a quiet spell is folded and published at once and only what
 * follows it within these intervals waits (leading edge): a lone envelope
 * reaches the DOM without waiting for either timer.
 */
const FOLD_MS = 16;
/** Fold immediately once this many events are buffered. */
const FOLD_MAX = 256;
/** Publish folded state to React at most this often while live… */
const PUBLISH_MS = 50;
/** …and less often while history is replayed (each publish rebuilds the timeline). */
const REPLAY_PUBLISH_MS = 250;
/** Yield to the browser after this much folding work. */
const YIELD_AFTER_MS = 12;

function startSessionStream(qc: QueryClient, sessionId: string, signal: AbortSignal): SessionStreamHandle {
  const key = queryKeys.session(sessionId);
  let data: SessionStreamData = qc.getQueryData<SessionStreamData>(key) ?? initialData(sessionId);
  let buffer: SubscribeSessionResponse[] = [];
  let foldTimer: ReturnType<typeof setTimeout> | undefined;
  let publishTimer: ReturnType<typeof setTimeout> | undefined;
  let pendingAnnouncement: string | undefined;
  let workSince = 0;
  let lastFoldAt = -Infinity;
  let lastPublishAt = -Infinity;

  const publish = (): void => {
    publishTimer = undefined;
    if (signal.aborted) return;
    lastPublishAt = performance.now();
    qc.setQueryData<SessionStreamData>(key, data);
    if (pendingAnnouncement) {
      announce(pendingAnnouncement);
      pendingAnnouncement = undefined;
    }
  };
  const schedulePublish = (): void => {
    if (publishTimer) return;
    if (!data.stream.caughtUp) {
      publishTimer = setTimeout(publish, REPLAY_PUBLISH_MS);
      return;
    }
    const wait = lastPublishAt + PUBLISH_MS - performance.now();
    if (wait <= 0) publish();
    else publishTimer = setTimeout(publish, wait);
  };
  /** Live and nothing folded within FOLD_MS: fold this event now rather than after the timer. */
  const foldDue = (): boolean => data.stream.caughtUp && !foldTimer && performance.now() - lastFoldAt >= FOLD_MS;

  const fold = (): StreamDirective => {
    if (foldTimer) {
      clearTimeout(foldTimer);
      foldTimer = undefined;
    }
    if (buffer.length === 0) return "continue";
    const t0 = performance.now();
    lastFoldAt = t0;
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

  const runner = runResilientStream<SubscribeSessionResponse>(
    {
      connect: (s) => consoleClient().subscribeSession({ sessionId, afterSequence: resumeAfterSequence(data.stream) }, { signal: s }),
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
        if (!isEvent || buffer.length >= FOLD_MAX || foldDue()) {
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
  handle = runner;

  let loading: Promise<SessionStreamState> | undefined;
  const readFullHistory = async (): Promise<SessionStreamState> => {
    const ac = new AbortController();
    const stop = (): void => ac.abort();
    signal.addEventListener("abort", stop, { once: true });
    try {
      let full = beginConnection(initialSessionStreamState(sessionId));
      let batch: SubscribeSessionResponse[] = [];
      let since = performance.now();
      for await (const m of consoleClient().subscribeSession({ sessionId, afterSequence: 0n }, { signal: ac.signal })) {
        if (m.item.case === "heartbeat") continue;
        batch.push(m);
        if (m.item.case !== "event" || batch.length >= FOLD_MAX) {
          full = applySubscribeBatch(full, batch).state;
          batch = [];
        }
        if (m.item.case === "caughtUp") return full;
        if (performance.now() - since > YIELD_AFTER_MS) {
          await new Promise((resolve) => setTimeout(resolve, 0));
          since = performance.now();
        }
      }
      throw new Error("the history ended before it was complete");
    } finally {
      signal.removeEventListener("abort", stop);
      ac.abort();
    }
  };
  const loadFullHistory = (): Promise<SessionStreamState> => {
    if (!isWindowed(data.stream)) return Promise.resolve(data.stream);
    if (loading) return loading;
    data = { ...data, earlier: { state: "loading" } };
    publish();
    loading = readFullHistory()
      .then((full) => {
        // Events the live stream delivered meanwhile are folded first, then kept on top of the history.
        const d = fold();
        if (d !== "continue") handle?.command(d);
        data = { ...data, stream: adoptFullHistory(data.stream, full), earlier: IDLE };
        publish();
        return data.stream;
      })
      .catch((e: unknown) => {
        const error = e instanceof Error ? e.message : String(e);
        if (!signal.aborted) {
          data = { ...data, earlier: { state: "failed", error } };
          publish();
        }
        throw e;
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  };
  return { runner, loadFullHistory };
}

/** A stream opened before its view mounted (openSessionStream), waiting for the view's effect to take it over. */
interface OpenedStream {
  qc: QueryClient;
  controller: AbortController;
  handle: SessionStreamHandle;
  timer: ReturnType<typeof setTimeout>;
}
const opened = new Map<string, OpenedStream>();
/** An opened stream no view took over within this time is closed. */
const UNCLAIMED_MS = 15_000;

/**
 * Seeds the cache with the first view's state and opens the session's
 * stream now, before the live view has rendered: the view's first effect
 * takes it over (useSessionStream). Called by LiveSession as soon as the
 * live view's code is in, so the stream's round trip overlaps React's render.
 */
export function openSessionStream(sessionId: string, handover: string | undefined): void {
  const qc = getQueryClient();
  seedFromHandover(qc, sessionId, handover);
  if (opened.has(sessionId)) return;
  const controller = new AbortController();
  const handle = startSessionStream(qc, sessionId, controller.signal);
  const timer = setTimeout(() => {
    if (opened.get(sessionId)?.handle !== handle) return;
    opened.delete(sessionId);
    controller.abort();
  }, UNCLAIMED_MS);
  opened.set(sessionId, { qc, controller, handle, timer });
}

/** Closes a stream openSessionStream opened that no view has taken over (its page was left first). */
export function closeOpenedStream(sessionId: string): void {
  const o = opened.get(sessionId);
  if (!o) return;
  opened.delete(sessionId);
  clearTimeout(o.timer);
  o.controller.abort();
}

/** The stream openSessionStream opened for this session and client, now owned by the caller. */
function claimOpenedStream(qc: QueryClient, sessionId: string): OpenedStream | undefined {
  const o = opened.get(sessionId);
  if (!o) return undefined;
  opened.delete(sessionId);
  clearTimeout(o.timer);
  if (o.qc === qc && !o.controller.signal.aborted) return o;
  o.controller.abort();
  return undefined;
}

export interface SessionStreamResult extends SessionStreamData {
  retryNow(): void;
  /** Read the events before a handed-over window (the complete state; rejects when the read fails). */
  loadFullHistory(): Promise<SessionStreamState>;
}

export function useSessionStream(sessionId: string, handover?: string): SessionStreamResult {
  const qc = useQueryClient();
  const key = queryKeys.session(sessionId);
  // Hydration: the first view's state seeds the cache (openSessionStream may have done so already).
  useState(() => {
    seedFromHandover(qc, sessionId, handover);
    return null;
  });
  const { data } = useQuery({
    queryKey: key,
    queryFn: () => qc.getQueryData<SessionStreamData>(key) ?? initialData(sessionId),
    initialData: () => initialData(sessionId),
  });
  const handle = useRef<SessionStreamHandle | null>(null);
  const generation = useStreamLifetime();
  const [restart, setRestart] = useRestartCounter();

  useEffect(() => {
    const early = claimOpenedStream(qc, sessionId);
    const ac = early?.controller ?? new AbortController();
    const disposePageHide = abortOnPageHide(ac);
    handle.current = early?.handle ?? startSessionStream(qc, sessionId, ac.signal);
    const onOnline = (): void => handle.current?.runner.retryNow();
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
      else handle.current?.runner.retryNow();
    },
    loadFullHistory: () => handle.current?.loadFullHistory() ?? Promise.reject(new Error("the live view is not connected")),
  };
}

function useRestartCounter(): [number, () => void] {
  const [n, bump] = useReducer((x: number) => x + 1, 0);
  return [n, bump];
}
