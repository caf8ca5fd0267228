"use client";
// Whether a render is React's own in the browser, not the hydration of the
// server's HTML: what a component draws while hydrating must match what the
// server sent, whatever the browser already knows.

import { useSyncExternalStore } from "react";

const noSubscription = (): (() => void) => () => {};
const onClient = (): boolean => true;
const onServer = (): boolean => false;

/** False on the server and while the server's HTML is hydrated, true from the first client render after it. */
export function useHydrated(): boolean {
  return useSyncExternalStore(noSubscription, onClient, onServer);
}
