"use client";
// Code a page needs only once it is live (Connect, protobuf-es, TanStack
// Query and what uses them), fetched after the page has loaded and the
// browser is idle, so it is not part of the JavaScript loaded before `load`.
// A failed fetch (flaky network, a deploy in between) is retried a few times
// instead of breaking the page.

import { useEffect, useState, type ComponentType } from "react";
import { afterLoad, afterLoadAndIdle, onLoad, type LoadIdleWindow } from "@/lib/client/after-load";

/** Waits before fetching the code again after a failed fetch. */
export const RETRY_DELAYS_MS = [2_000, 10_000, 30_000];

/** A memoized dynamic import: one fetch at a time, a failed one forgotten (the next call fetches again). */
export interface ModuleLoader<T> {
  (): Promise<T>;
  /** The module, once a fetch has succeeded. */
  loaded(): T | undefined;
}

export function moduleLoader<T>(fetchModule: () => Promise<T>): ModuleLoader<T> {
  let loading: Promise<T> | undefined;
  let value: T | undefined;
  const load = (): Promise<T> => {
    loading ??= fetchModule().then(
      (m) => (value = m),
      (e: unknown) => {
        loading = undefined;
        throw e;
      },
    );
    return loading;
  };
  return Object.assign(load, { loaded: () => value });
}

/** One fetch of a module's component at a time; a failed one is forgotten, so the next call fetches again. */
export function componentLoader<P>(fetchComponent: () => Promise<ComponentType<P>>): ModuleLoader<ComponentType<P>> {
  return moduleLoader(fetchComponent);
}

/** When the first fetch starts: at once, inside the `load` event, right after `load`, or after `load` and an idle moment. */
export type FetchStart = "now" | "load" | "after-load" | "after-load-idle";

const SCHEDULE = { load: onLoad, "after-load": afterLoad, "after-load-idle": afterLoadAndIdle } as const;

/**
 * Calls `fetch` at `start`, and again after each of RETRY_DELAYS_MS while it fails, until it
 * succeeds (`onValue`) or the delays run out. `onFailure` hears of every failure, and whether
 * another attempt follows. Returns a canceller: after it nothing is fetched and neither callback is
 * called.
 */
export function fetchWithRetries<T>(
  win: LoadIdleWindow,
  start: FetchStart,
  fetch: () => Promise<T>,
  onValue: (value: T) => void,
  onFailure: (error: unknown, retrying: boolean) => void,
): () => void {
  let cancelled = false;
  let retry: number | undefined;
  const attempt = (n: number): void => {
    fetch().then(
      (value) => {
        if (!cancelled) onValue(value);
      },
      (e: unknown) => {
        if (cancelled) return;
        const delay = RETRY_DELAYS_MS[n];
        onFailure(e, delay !== undefined);
        if (delay !== undefined) retry = win.setTimeout(() => attempt(n + 1), delay);
      },
    );
  };
  const first = (): void => attempt(0);
  let cancelStart = (): void => undefined;
  if (start === "now") first();
  else cancelStart = SCHEDULE[start](win, first);
  return () => {
    cancelled = true;
    cancelStart();
    if (retry !== undefined) win.clearTimeout(retry);
  };
}

/**
 * The component `load` resolves to, once fetched from `start` on: by default
 * after `load` and an idle moment; right after `load` when someone may be
 * waiting on it; "now" when there is nothing to show until it arrives. Nothing
 * is fetched while `enabled` is false. Null until then.
 */
export function useAfterLoadComponent<P>(
  load: () => Promise<ComponentType<P>>,
  what: string,
  start: FetchStart = "after-load-idle",
  enabled = true,
): ComponentType<P> | null {
  const [Component, setComponent] = useState<ComponentType<P> | null>(null);
  useEffect(() => {
    if (Component || !enabled) return;
    return fetchWithRetries(
      window,
      start,
      load,
      (c) => setComponent(() => c),
      (e, retrying) => {
        if (!retrying) console.warn(`could not load ${what}`, e);
      },
    );
  }, [Component, load, what, start, enabled]);
  return Component;
}
