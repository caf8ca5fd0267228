// Connection status of the page's live streams, for the header indicator and
// the per-page indicators. A tiny external store (useSyncExternalStore).

import { useSyncExternalStore } from "react";
import type { RunnerStatus } from "@/lib/client/stream-runner";

export type ConnectionState = "connecting" | "live" | "reconnecting" | "ended";

export interface ConnectionInfo {
  state: ConnectionState;
  /** When the next attempt happens (reconnecting). */
  retryAt?: number;
  /** Why the last connection failed or ended. */
  error?: string;
  /** Ended because retrying cannot help (e.g. not found). */
  fatal?: boolean;
  /** Number of reconnects after the first connection. */
  reconnects: number;
}

export const INITIAL_CONNECTION: ConnectionInfo = { state: "connecting", reconnects: 0 };

/** Map the runner's transport-level status to what people see. */
export function connectionFromRunner(prev: ConnectionInfo, status: RunnerStatus): ConnectionInfo {
  switch (status.phase) {
    case "connecting":
      // A first attempt is a fresh start (e.g. a restart after a fatal end).
      if (status.attempt === 1) return { state: "connecting", reconnects: prev.reconnects };
      return { ...prev, state: "reconnecting", retryAt: undefined };
    case "open":
      return { state: "live", reconnects: status.attempt > 1 ? prev.reconnects + 1 : prev.reconnects };
    case "waiting":
      return { ...prev, state: "reconnecting", retryAt: status.retryAt, error: status.error };
    case "ended": {
      const next: ConnectionInfo = { state: "ended", reconnects: prev.reconnects, fatal: status.fatal };
      if (status.error) next.error = status.error;
      return next;
    }
  }
}

interface Entry {
  label: string;
  info: ConnectionInfo;
  order: number;
}

const entries = new Map<string, Entry>();
const listeners = new Set<() => void>();
let order = 0;
let snapshot: readonly (ConnectionInfo & { id: string; label: string })[] = [];

function emit(): void {
  snapshot = [...entries.entries()].sort((a, b) => b[1].order - a[1].order).map(([id, e]) => ({ id, label: e.label, ...e.info }));
  for (const l of listeners) l();
}

export function reportConnection(id: string, label: string, info: ConnectionInfo): void {
  const existing = entries.get(id);
  entries.set(id, { label, info, order: existing?.order ?? ++order });
  emit();
}

export function clearConnection(id: string): void {
  if (entries.delete(id)) emit();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

const EMPTY: readonly (ConnectionInfo & { id: string; label: string })[] = [];

/** All active streams, most recently started first. */
export function useConnections(): readonly (ConnectionInfo & { id: string; label: string })[] {
  return useSyncExternalStore(
    subscribe,
    () => snapshot,
    () => EMPTY,
  );
}
