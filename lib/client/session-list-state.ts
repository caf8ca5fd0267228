// Pure fold of a WatchSessionList stream: a map of SessionSummary rows keyed
// by session id. Every connection starts with a (possibly chunked) snapshot;
// rows shown so far stay on screen until the new snapshot is complete, then
// the snapshot replaces them (so sessions gone while disconnected disappear).
// Upserts replace a row; applying the same upsert twice changes nothing, and
// an upsert older than the row it would replace is ignored.

import type { SessionSummary, WatchSessionListResponse } from "@/lib/gen/baton/v1/console_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";

export interface SessionListState {
  rows: ReadonlyMap<string, SessionSummary>;
  /** A complete snapshot has been received at least once. */
  loaded: boolean;
  /** Snapshot being assembled on the current connection. */
  pending?: Map<string, SessionSummary>;
  /** Bumped on every change, for cheap memo keys. */
  version: number;
  ignoredMessages: number;
}

export function initialSessionListState(): SessionListState {
  return { rows: new Map(), loaded: false, version: 0, ignoredMessages: 0 };
}

/** A new connection is about to deliver a fresh snapshot. */
export function beginListConnection(state: SessionListState): SessionListState {
  return { ...state, pending: new Map() };
}

function isTerminal(state: SessionState | undefined): boolean {
  return state === SessionState.RESOLVED || state === SessionState.EXPIRED || state === SessionState.CANCELLED;
}

/**
 * True when `incoming` is older than `current`: fewer events, or an open
 * state replacing a terminal one (terminal states are final).
 */
export function isStaleSummary(current: SessionSummary | undefined, incoming: SessionSummary): boolean {
  if (!current) return false;
  if (incoming.eventCount < current.eventCount) return true;
  const cur = current.metadata?.state;
  const inc = incoming.metadata?.state;
  return isTerminal(cur) && !isTerminal(inc);
}

function sessionIdOf(summary: SessionSummary): string {
  return summary.metadata?.sessionId ?? "";
}

/** Fold a batch of messages. Pure: maps are copied at most once per batch. */
export function applyListBatch(state: SessionListState, messages: readonly WatchSessionListResponse[]): SessionListState {
  let rows: Map<string, SessionSummary> | undefined;
  let pending = state.pending;
  let loaded = state.loaded;
  let changed = false;
  let ignored = state.ignoredMessages;

  const liveRows = (): Map<string, SessionSummary> => {
    if (!rows) rows = new Map(state.rows);
    return rows;
  };

  // Never mutate the previous state's pending map; copy it on first write.
  const writablePending = (): Map<string, SessionSummary> => {
    if (!pending) pending = new Map();
    else if (pending === state.pending) pending = new Map(pending);
    return pending;
  };

  const put = (target: Map<string, SessionSummary>, summary: SessionSummary): boolean => {
    const id = sessionIdOf(summary);
    if (id === "") return false;
    if (isStaleSummary(target.get(id), summary)) return false;
    target.set(id, summary);
    return true;
  };

  for (const msg of messages) {
    const item = msg.item;
    switch (item.case) {
      case "snapshot": {
        const target = writablePending();
        for (const s of item.value.sessions) {
          const id = sessionIdOf(s);
          if (id === "") ignored += 1;
          else target.set(id, s);
        }
        if (item.value.complete) {
          rows = target;
          pending = undefined;
          loaded = true;
          changed = true;
        }
        break;
      }
      case "upsert": {
        const summary = item.value;
        if (pending) {
          // Mid-snapshot: the upsert is newer than the snapshot chunk for its row.
          if (!put(writablePending(), summary) && sessionIdOf(summary) === "") ignored += 1;
        } else if (put(liveRows(), summary)) {
          changed = true;
        } else if (sessionIdOf(summary) === "") {
          ignored += 1;
        }
        break;
      }
      case "heartbeat":
        break;
      default:
        ignored += 1;
        break;
    }
  }

  if (!changed && pending === state.pending && ignored === state.ignoredMessages) return state;
  const next: SessionListState = {
    rows: changed && rows ? rows : state.rows,
    loaded,
    version: changed ? state.version + 1 : state.version,
    ignoredMessages: ignored,
  };
  if (pending) next.pending = pending;
  return next;
}
