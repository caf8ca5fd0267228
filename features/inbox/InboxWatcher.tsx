"use client";
// In the layout: starts the live inbox (<InboxStreamWatcher/>) for a signed-in
// person, but only once the page has loaded and the browser is idle, and
// fetches its code only then: the stream needs the Connect transport and
// protobuf-es, which must not weigh on every page's first load. Until then
// the navigation badge and /inbox show the inbox as not loaded yet. A failed
// chunk fetch (flaky network, a deploy in between) is retried a few times
// instead of breaking the page.

import { componentLoader, useAfterLoadComponent } from "@/lib/client/after-load-import";
import { useWhoAmI } from "@/lib/client/use-whoami";

const loadStreamWatcher = componentLoader(() => import("@/features/inbox/InboxStreamWatcher").then((m) => m.InboxStreamWatcher));

export function InboxWatcher() {
  const { me } = useWhoAmI();
  const wanted = Boolean(me && !me.mustChangePassword);
  const Watcher = useAfterLoadComponent(loadStreamWatcher, "the live inbox", "after-load-idle", wanted);
  return wanted && Watcher ? <Watcher /> : null;
}
