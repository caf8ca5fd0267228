"use client";
// Code a page needs only once it is live (Connect, protobuf-es, TanStack
// Query and what uses them), fetched after the page has loaded and the
// browser is idle, so it is not part of the JavaScript loaded before `load`.
// A failed fetch (flaky network, a deploy in between) is retried a few times
// instead of breaking the page.

import { useEffect, useState, type ComponentType } from "react";
import { afterLoad, afterLoadAndIdle } from "@/lib/client/after-load";

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

/**
 * The component `load` resolves to, once fetched: after `load` and an idle
 * moment (right after `load` when not `idle`: someone may be waiting on it),
 * or straight away when `now` (nothing to show until it arrives). Null until
 * then.
 */
export function useAfterLoadComponent<P>(
  load: () => Promise<ComponentType<P>>,
  what: string,
  now = false,
  idle = true,
): ComponentType<P> | null {
  const [Component, setComponent] = useState<ComponentType<P> | null>(null);
  useEffect(() => {
    if (Component) return;
    let cancelled = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const attempt = (n: number): void => {
      load().then(
        (c) => {
          if (!cancelled) setComponent(() => c);
        },
        (e: unknown) => {
          const delay = RETRY_DELAYS_MS[n];
          if (cancelled) return;
          if (delay === undefined) console.warn(`could not load ${what}`, e);
          else retry = setTimeout(() => attempt(n + 1), delay);
        },
      );
    };
    let cancelIdle = (): void => {};
    if (now) attempt(0);
    else cancelIdle = (idle ? afterLoadAndIdle : afterLoad)(window, () => attempt(0));
    return () => {
      cancelled = true;
      cancelIdle();
      clearTimeout(retry);
    };
  }, [Component, load, what, now, idle]);
  return Component;
}
