"use client";
// v0.1 file handoffs in the browser: the FileHandoffService reads as TanStack
// queries, kept live by one WatchFileHandoffs stream per page (coalesced on
// the server; each message refetches what is on screen, at most every
// REFRESH_MS), and people's actions with the attempt rules of the MACP
// actions (a double click does nothing; a CSRF refusal refreshes the token
// and retries once; an offer's message_id is reused on retry so a retried
// offer makes one file).

import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import type {
  FileActionResult,
  FileHandoff,
  GetFileHandoffResponse,
  GetFileHandoffSettingsResponse,
  WatchFileHandoffsResponse,
} from "@/lib/gen/baton/v1/files_pb";
import { attemptFor, fingerprintOf, newMessageId, outcomeSentence, type Attempt } from "@/lib/views/action-attempt";
import { announce } from "@/lib/client/announcer";
import { clearConnection, connectionFromRunner, INITIAL_CONNECTION, reportConnection, type ConnectionInfo } from "@/lib/client/connection";
import { csrfStore } from "@/lib/client/csrf-store";
import { fileOutcomeOfError, isFileOutcomeDefinitive, type FileListFilter, type FileOutcome } from "@/lib/views/file-handoffs";
import { runResilientStream } from "@/lib/client/stream-runner";
import { fileClient } from "@/lib/client/transport";
import { abortOnPageHide, useStreamLifetime } from "@/lib/client/use-stream-lifetime";

const FILES_KEY = ["baton", "files"] as const;
export const fileKeys = {
  all: FILES_KEY,
  settings: [...FILES_KEY, "settings"] as const,
  list: (f: FileListFilter) => [...FILES_KEY, "list", f.status, f.dir] as const,
  waiting: [...FILES_KEY, "waiting"] as const,
  one: (dirKey: string, taskId: string) => [...FILES_KEY, "one", dirKey, taskId] as const,
};

/** Refetches caused by the stream happen at most this often. */
const REFRESH_MS = 300;
const PAGE = 50;

export function useFileSettings(enabled = true): { settings: GetFileHandoffSettingsResponse | undefined; error: unknown } {
  const q = useQuery({
    queryKey: fileKeys.settings,
    queryFn: ({ signal }) => fileClient().getFileHandoffSettings({}, { signal }),
    enabled,
    staleTime: 10_000,
  });
  return { settings: q.data, error: q.error };
}

export function useFileList(filter: FileListFilter, enabled: boolean) {
  const q = useInfiniteQuery({
    queryKey: fileKeys.list(filter),
    queryFn: ({ signal, pageParam }) =>
      fileClient().listFileHandoffs({ status: filter.status, dirKey: filter.dir, limit: PAGE, cursor: pageParam }, { signal }),
    initialPageParam: "",
    getNextPageParam: (last) => (last.nextCursor === "" ? undefined : last.nextCursor),
    enabled,
  });
  const rows: FileHandoff[] = q.data?.pages.flatMap((p) => p.handoffs) ?? [];
  return {
    rows,
    loaded: q.data !== undefined,
    error: q.error,
    hasMore: q.hasNextPage,
    loadingMore: q.isFetchingNextPage,
    loadMore: () => void q.fetchNextPage(),
  };
}

/** What waits on the signed-in person (their v0.1 inbox), first 200. */
export function useFilesWaitingOnMe(enabled: boolean): { rows: FileHandoff[]; loaded: boolean; more: boolean } {
  const q = useQuery({
    queryKey: fileKeys.waiting,
    queryFn: ({ signal }) => fileClient().listFileHandoffs({ waitingOnMe: true, limit: 200 }, { signal }),
    enabled,
  });
  return { rows: q.data?.handoffs ?? [], loaded: q.data !== undefined, more: (q.data?.nextCursor ?? "") !== "" };
}

export function useFileHandoff(
  dirKey: string,
  taskId: string,
  enabled: boolean,
): { data: GetFileHandoffResponse | undefined; error: unknown; loading: boolean } {
  const q = useQuery({
    queryKey: fileKeys.one(dirKey, taskId),
    queryFn: ({ signal }) => fileClient().getFileHandoff({ dirKey, taskId, limit: 1_000 }, { signal }),
    enabled,
    retry: (n, e) => n < 2 && !(e instanceof Error && /not found|no handoff/i.test(e.message)),
  });
  return { data: q.data, error: q.error, loading: q.isPending };
}

/**
 * Follow WatchFileHandoffs while mounted: every batch of changes refetches the
 * file queries on screen (throttled). Returns the stream's connection state.
 */
export function useFileWatch(enabled: boolean): ConnectionInfo {
  const qc = useQueryClient();
  const generation = useStreamLifetime();
  const [connection, setConnection] = useState<ConnectionInfo>(INITIAL_CONNECTION);
  useEffect(() => {
    if (!enabled) return;
    const ac = new AbortController();
    const dispose = abortOnPageHide(ac);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let last = 0;
    const refresh = (): void => {
      if (timer) return;
      const wait = Math.max(0, last + REFRESH_MS - Date.now());
      timer = setTimeout(() => {
        timer = undefined;
        last = Date.now();
        void qc.invalidateQueries({ queryKey: FILES_KEY });
      }, wait);
    };
    let info = INITIAL_CONNECTION;
    let opened = 0;
    runResilientStream<WatchFileHandoffsResponse>(
      {
        connect: (s) => fileClient().watchFileHandoffs({}, { signal: s }),
        onMessage: (m) => {
          if (m.item.case === "changes") refresh();
          return "continue";
        },
        onStatus: (status) => {
          // After a reconnect, what changed meanwhile is read again.
          if (status.phase === "open" && opened++ > 0) refresh();
          info = connectionFromRunner(info, status);
          if (!ac.signal.aborted) {
            setConnection(info);
            reportConnection("file-handoffs", "File handoffs", info);
          }
        },
      },
      ac.signal,
    );
    return () => {
      ac.abort();
      dispose();
      if (timer) clearTimeout(timer);
      clearConnection("file-handoffs");
    };
  }, [enabled, generation, qc]);
  return connection;
}

export interface FileActionState {
  pending: boolean;
  outcome?: FileOutcome;
  sentence?: string;
  result?: FileActionResult;
}

function fileSentence(o: FileOutcome, done: string, result?: FileActionResult): string {
  if (o.kind === "conflict") return o.message;
  if (o.kind === "ok" && result?.foreignWriter) return `${done}, but ${result.foreignWriter}`;
  if (o.kind === "ok") return o.duplicate ? `${done} (it had already gone through; nothing was written twice).` : `${done}.`;
  return outcomeSentence(o, done);
}

/**
 * One file action (`doneNow` overrides the success sentence per call): `call(messageId)` sends it (offers use the message_id;
 * state changes carry the hash of the snapshot the person saw instead).
 */
export function useFileAction(done: string, onOk?: (r: FileActionResult) => void) {
  const qc = useQueryClient();
  const attempt = useRef<Attempt | undefined>(undefined);
  const inFlight = useRef(false);
  const [state, setState] = useState<FileActionState>({ pending: false });
  const submit = useCallback(
    async (
      fields: unknown,
      call: (messageId: string) => Promise<FileActionResult>,
      doneNow: string = done,
    ): Promise<FileOutcome | undefined> => {
      if (inFlight.current) return undefined;
      inFlight.current = true;
      const a = attemptFor(attempt.current, fingerprintOf(fields), newMessageId);
      attempt.current = a;
      setState({ pending: true });
      const run = async (): Promise<{ outcome: FileOutcome; result?: FileActionResult }> => {
        try {
          const result = await call(a.messageId);
          return { outcome: { kind: "ok", duplicate: result.duplicate }, result };
        } catch (e) {
          return { outcome: fileOutcomeOfError(e) };
        }
      };
      let r = await run();
      if (r.outcome.kind === "denied" && r.outcome.denyCode === "csrf") {
        csrfStore.invalidate();
        await csrfStore.get();
        r = await run();
      }
      attempt.current = isFileOutcomeDefinitive(r.outcome) ? { ...a, settled: true } : a;
      inFlight.current = false;
      const sentence = fileSentence(r.outcome, doneNow, r.result);
      setState({ pending: false, outcome: r.outcome, sentence, ...(r.result ? { result: r.result } : {}) });
      announce(sentence);
      // Whatever happened, what is on screen may be stale now.
      void qc.invalidateQueries({ queryKey: FILES_KEY });
      if (r.outcome.kind === "ok" && r.result) onOk?.(r.result);
      return r.outcome;
    },
    [done, onOk, qc],
  );
  const reset = useCallback(() => {
    if (!inFlight.current) setState({ pending: false });
  }, []);
  return { state, submit, reset };
}
