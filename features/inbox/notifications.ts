// Opt-in browser notifications for new inbox items. Nothing is asked of the
// browser until the person clicks "Enable notifications"; the choice is kept
// per browser. Pure helpers plus thin wrappers around the Notification API.

import type { InboxItem } from "@/lib/gen/baton/v1/actions_pb";

export type NotifyPermission = "unsupported" | "default" | "granted" | "denied";
const KEY = "baton.notifications";

export function notificationPermission(): NotifyPermission {
  if (typeof window === "undefined" || !("Notification" in window)) return "unsupported";
  return Notification.permission;
}

export function notificationsWanted(): boolean {
  try {
    return window.localStorage.getItem(KEY) === "on";
  } catch {
    return false;
  }
}

export function setNotificationsWanted(on: boolean): void {
  try {
    if (on) window.localStorage.setItem(KEY, "on");
    else window.localStorage.removeItem(KEY);
  } catch {
    // storage unavailable (private mode): the choice lasts for this page only
  }
}

/** Ask the browser (only ever called from the person's click). */
export async function requestNotificationPermission(): Promise<NotifyPermission> {
  if (notificationPermission() === "unsupported") return "unsupported";
  return Notification.requestPermission();
}

/** Whether to raise notifications for new items now. */
export function shouldNotify(wanted: boolean, permission: NotifyPermission): boolean {
  return wanted && permission === "granted";
}

/** Title and body of the notification for one new item. */
export function notificationFor(item: InboxItem): { title: string; body: string; tag: string; url: string } {
  return {
    title: "Baton: waiting on you",
    body: item.summary || item.intent || "Something new is waiting on you.",
    tag: `baton-${item.kind}-${item.sessionId}-${item.subjectId}`,
    url: `/sessions/${encodeURIComponent(item.sessionId)}`,
  };
}

export function showNotification(item: InboxItem, onClick: (url: string) => void): void {
  const n = notificationFor(item);
  try {
    const shown = new Notification(n.title, { body: n.body, tag: n.tag });
    shown.onclick = () => {
      window.focus();
      onClick(n.url);
      shown.close();
    };
  } catch {
    // Some browsers only allow notifications from a service worker; skip quietly.
  }
}
