"use client";
// In the layout: starts the live inbox (<InboxStreamWatcher/>) for a signed-in
// person, but only once the page has loaded and the browser is idle, and
// fetches its code only then: the stream needs the Connect transport and
// protobuf-es, which must not weigh on every page's first load. Until then
// the navigation badge and /inbox show the inbox as not loaded yet. A failed
// chunk fetch (flaky network, a deploy in between) is retried a few times
// instead of breaking the page.

import { useEffect, useState, type ComponentType } from "react";
import { afterLoadAndIdle } from "@/lib/client/after-load";
import { useWhoAmI } from "@/lib/client/use-whoami";

/** Waits before re-fetching the watcher's code after a failed fetch. */
const RETRY_DELAYS_MS = [2_000, 10_000, 30_000];

let loading: Promise<ComponentType> | undefined;

function loadStreamWatcher(): Promise<ComponentType> {
  loading ??= import("@/features/inbox/InboxStreamWatcher").then(
    (m) => m.InboxStreamWatcher,
    (e: unknown) => {
      loading = undefined;
      throw e;
    },
  );
  return loading;
}

export function InboxWatcher() {
  const { me } = useWhoAmI();
  const wanted = Boolean(me && !me.mustChangePassword);
  const [Watcher, setWatcher] = useState<ComponentType | null>(null);
  useEffect(() => {
    if (!wanted || Watcher) return;
    let cancelled = false;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const attempt = (n: number): void => {
      loadStreamWatcher().then(
        (c) => {
          if (!cancelled) setWatcher(() => c);
        },
        (e: unknown) => {
          const delay = RETRY_DELAYS_MS[n];
          if (cancelled) return;
          if (delay === undefined) console.warn("inbox: could not load the live inbox", e);
          else retry = setTimeout(() => attempt(n + 1), delay);
        },
      );
    };
    const cancelIdle = afterLoadAndIdle(window, () => attempt(0));
    return () => {
      cancelled = true;
      cancelIdle();
      clearTimeout(retry);
    };
  }, [wanted, Watcher]);
  return wanted && Watcher ? <Watcher /> : null;
}
