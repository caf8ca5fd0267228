"use client";
// One shared clock for countdowns and relative times: a single interval for
// the whole page instead of one per row.

import { useSyncExternalStore } from "react";

const listeners = new Set<() => void>();
let now = 0;
let timer: ReturnType<typeof setInterval> | undefined;

function tick(): void {
  now = Date.now();
  for (const l of listeners) l();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  if (!timer) {
    now = Date.now();
    timer = setInterval(tick, 1000);
  }
  return () => {
    listeners.delete(l);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

const noSubscription = (): (() => void) => () => {};
const never = (): number => 0;
const current = (): number => now || Date.now();

/**
 * useNow() only while `active` (0 otherwise, and during server rendering): a
 * row that has nothing to count (most list rows) does not re-render every second.
 */
export function useNowWhen(active: boolean): number {
  return useSyncExternalStore(active ? subscribe : noSubscription, active ? current : never, never);
}

/** Current time (ms), updated every second; 0 during server rendering. */
export function useNow(): number {
  return useSyncExternalStore(
    subscribe,
    () => now || Date.now(),
    () => 0,
  );
}
