"use client";
// The floating "Jump to latest" button, shown while the newest event is off
// screen. The timeline reports whether it is on screen on every scroll; that
// flag lives here (a tiny store read with useSyncExternalStore), so a change
// re-renders this button only, not the whole session screen around it.

import { useSyncExternalStore } from "react";
import { Icon } from "@/components/ui/Icon";

/** Whether the newest event is on screen, as the timeline last said. */
export interface LatestVisibility {
  get(): boolean;
  set(visible: boolean): void;
  subscribe(listener: () => void): () => void;
}

export function latestVisibility(initial = true): LatestVisibility {
  let visible = initial;
  const listeners = new Set<() => void>();
  return {
    get: () => visible,
    set(next) {
      if (next === visible) return;
      visible = next;
      for (const l of [...listeners]) l();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export function FloatingLatest({ visibility, onJump }: { visibility: LatestVisibility; onJump: () => void }) {
  const visible = useSyncExternalStore(visibility.subscribe, visibility.get, () => true);
  if (visible) return null;
  return (
    <button
      type="button"
      onClick={onJump}
      className="fixed right-4 bottom-20 z-20 inline-flex sm:bottom-4 items-center gap-1.5 rounded-full bg-blue-700 px-4 py-2 text-sm font-semibold text-white shadow-lg hover:bg-blue-800 dark:bg-sky-300 dark:text-slate-950 dark:hover:bg-sky-200"
      data-testid="jump-latest-floating"
    >
      <Icon name="arrow-down" /> Jump to latest
    </button>
  );
}
