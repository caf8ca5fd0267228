"use client";
// Whether no press is in progress on the page. A server-drawn first view is
// swapped for its live screen once the live code is in (the session list,
// the inbox, the session page); the swap replaces the elements under the pointer. A
// press that began on the first view and is released after the swap loses
// its click: the browser sends it to no link, and the row someone pressed
// does not open. So a swap waits while a press is in progress, and runs just
// after its click (the task after the release). A press held longer than
// MAX_HOLD_MS (dragged off the window, a long-press menu) stops holding.

import { useCallback, useLayoutEffect, useRef, useSyncExternalStore } from "react";

/** The longest a press holds a swap back. */
export const MAX_HOLD_MS = 2000;

export interface PressTracker {
  /** True while a press is in progress (until the task after its release). */
  pressed(): boolean;
  subscribe(listener: () => void): () => void;
  dispose(): void;
}

/** Follows presses on `win` (capture phase, so no handler can hide them). */
export function trackPresses(win: Window, maxHoldMs = MAX_HOLD_MS): PressTracker {
  let pressed = false;
  let timer: number | undefined;
  const listeners = new Set<() => void>();
  const set = (next: boolean): void => {
    if (timer !== undefined) win.clearTimeout(timer);
    timer = undefined;
    if (pressed === next) return;
    pressed = next;
    for (const l of listeners) l();
  };
  const down = (): void => {
    set(true);
    timer = win.setTimeout(() => set(false), maxHoldMs);
  };
  // The click is dispatched with the release, in the same task: end the press in the next one.
  const up = (): void => {
    if (!pressed) return;
    if (timer !== undefined) win.clearTimeout(timer);
    timer = win.setTimeout(() => set(false), 0);
  };
  const options = { capture: true, passive: true } as const;
  win.addEventListener("pointerdown", down, options);
  win.addEventListener("pointerup", up, options);
  win.addEventListener("pointercancel", up, options);
  return {
    pressed: () => pressed,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    dispose() {
      win.removeEventListener("pointerdown", down, options);
      win.removeEventListener("pointerup", up, options);
      win.removeEventListener("pointercancel", up, options);
      if (timer !== undefined) win.clearTimeout(timer);
      listeners.clear();
    },
  };
}

// One tracker for the page, from the moment this module is evaluated (before hydration: it is in
// the first view's code), so a press that began before the swap was even asked for is known.
const pageTracker = typeof window !== "undefined" ? trackPresses(window) : undefined;
const subscribe = (listener: () => void): (() => void) => pageTracker?.subscribe(listener) ?? (() => {});
const onServer = (): boolean => true;

/**
 * Whether a first view may be swapped for its live screen now that `ready`
 * (its code is in): not while a press is in progress. Once a swap has been
 * committed it stays allowed, and later presses do not render anything again.
 */
export function useSwapWhenUnpressed(ready: boolean): boolean {
  const swapped = useRef(false);
  const settled = useCallback((): boolean => swapped.current || !(pageTracker?.pressed() ?? false), []);
  const allowed = useSyncExternalStore(subscribe, settled, onServer) && ready;
  useLayoutEffect(() => {
    if (allowed) swapped.current = true;
  }, [allowed]);
  return allowed;
}
