"use client";
// Keeps the signed-in person's inbox live on every page (for the navigation
// badge and /inbox) and, when they opted in, raises a browser notification for
// each new item; screen readers hear a short announcement either way. Loaded
// lazily by <InboxWatcher/> after the page has loaded: it brings the Connect
// transport and protobuf-es with it.

import { useRouter } from "next/navigation";
import { useCallback } from "react";
import { announce } from "@/lib/client/announcer";
import type { InboxState } from "@/features/inbox/inbox-state";
import { notificationPermission, notificationsWanted, shouldNotify, showNotification } from "@/features/inbox/notifications";
import { useInboxStream } from "@/features/inbox/inbox-stream";
import { useWhoAmI } from "@/lib/client/use-whoami";

/** At most this many notifications per update (a burst becomes a count). */
const MAX_NOTIFICATIONS = 3;

export function InboxStreamWatcher() {
  const { me } = useWhoAmI();
  const router = useRouter();
  const onFresh = useCallback(
    (state: InboxState) => {
      const n = state.fresh.length;
      announce(n === 1 ? `New in your inbox: ${state.fresh[0]?.summary ?? "an item"}` : `${n} new items in your inbox.`);
      if (!shouldNotify(notificationsWanted(), notificationPermission())) return;
      for (const item of state.fresh.slice(0, MAX_NOTIFICATIONS)) showNotification(item, (url) => router.push(url));
    },
    [router],
  );
  useInboxStream(Boolean(me && !me.mustChangePassword), onFresh);
  return null;
}
