// Refused attempts as local annotations of a session's timeline. The runtime
// does not broadcast refusals (a refused envelope is not in the history), so
// the console keeps the ones this tab saw: an action the console or the
// runtime refused (lib/client/use-action.ts), and the demo player's refused
// steps (features/admin/DemoRunner.tsx). They are marked as local wherever
// they show, and kept in memory only, bounded.
//
// Placement is pure (`withRefusals`): a refusal goes after the last event
// whose timestamp is not later than the attempt's.

import { createContext } from "react";
import { create } from "zustand";

import type { LocalRefusal } from "@/lib/views/timeline";

export type { LocalRefusal };

/** Refusals kept per session, and sessions kept, in one tab. */
export const MAX_REFUSALS_PER_SESSION = 50;
export const MAX_REFUSAL_SESSIONS = 50;

interface RefusalStore {
  bySession: ReadonlyMap<string, readonly LocalRefusal[]>;
  record(r: LocalRefusal): void;
}

export function addRefusal(
  bySession: ReadonlyMap<string, readonly LocalRefusal[]>,
  r: LocalRefusal,
): ReadonlyMap<string, readonly LocalRefusal[]> {
  const list = bySession.get(r.sessionId) ?? [];
  if (list.some((x) => x.id === r.id)) return bySession;
  const next = new Map(bySession);
  next.delete(r.sessionId); // most recently used last
  next.set(r.sessionId, [...list, r].slice(-MAX_REFUSALS_PER_SESSION));
  while (next.size > MAX_REFUSAL_SESSIONS) {
    const oldest = next.keys().next().value;
    if (oldest === undefined) break;
    next.delete(oldest);
  }
  return next;
}

export const useRefusalStore = create<RefusalStore>((set) => ({
  bySession: new Map(),
  record: (r) => set((s) => ({ bySession: addRefusal(s.bySession, r) })),
}));

export function recordRefusal(r: LocalRefusal): void {
  useRefusalStore.getState().record(r);
}

const NONE: readonly LocalRefusal[] = Object.freeze([]);

export function useRefusals(sessionId: string): readonly LocalRefusal[] {
  return useRefusalStore((s) => s.bySession.get(sessionId) ?? NONE);
}

/** The session and person an action form acts for (ActionPanel provides it; useAction reads it). */
export const RefusalScope = createContext<{ sessionId: string; actor: string } | null>(null);
