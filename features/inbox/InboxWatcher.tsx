"use client";
// In the layout: starts the live inbox (<InboxStreamWatcher/>) for a signed-in
// person, but only once the page has loaded and the browser is idle, and
// fetches its code only then: the stream needs the Connect transport and
// protobuf-es, which must not weigh on every page's first load. Until then
// the navigation badge and /inbox show the inbox as not loaded yet. A failed
// chunk fetch (flaky network, a deploy in between) is retried a few times
// instead of breaking the page.

import { useEffect, useState, type ComponentType } from "react";
import { componentLoader, fetchWithRetries } from "@/lib/client/after-load-import";
import { useWhoAmI } from "@/lib/client/use-whoami";

const loadStreamWatcher = componentLoader(() => import("@/features/inbox/InboxStreamWatcher").then((m) => m.InboxStreamWatcher));

export function InboxWatcher() {
  const { me } = useWhoAmI();
  const wanted = Boolean(me && !me.mustChangePassword);
  const [Watcher, setWatcher] = useState<ComponentType | null>(null);
  useEffect(() => {
    if (!wanted || Watcher) return;
    return fetchWithRetries(
      window,
      "after-load-idle",
      loadStreamWatcher,
      (c) => setWatcher(() => c),
      (e, retrying) => {
        if (!retrying) console.warn("inbox: could not load the live inbox", e);
      },
    );
  }, [wanted, Watcher]);
  return wanted && Watcher ? <Watcher /> : null;
}
