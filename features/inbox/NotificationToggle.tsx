"use client";
// "Enable notifications": the only control that asks the browser for the
// Notification permission, and only when the person clicks. Shown on /inbox
// and, compact, in the account menu of every page.

import { useEffect, useState } from "react";
import {
  notificationPermission,
  notificationsWanted,
  requestNotificationPermission,
  setNotificationsWanted,
  type NotifyPermission,
} from "@/features/inbox/notifications";
import { Icon } from "@/components/ui/Icon";
import { Button } from "@/components/ui/button";

export function NotificationToggle({ compact = false }: { compact?: boolean } = {}) {
  const [permission, setPermission] = useState<NotifyPermission | null>(null);
  const [wanted, setWanted] = useState(false);
  useEffect(() => {
    setPermission(notificationPermission());
    setWanted(notificationsWanted());
  }, []);

  if (permission === null || permission === "unsupported") return null;
  if (permission === "denied") {
    return (
      <p
        className={compact ? "text-xs text-slate-700 dark:text-slate-300" : "text-sm text-slate-700 dark:text-slate-300"}
        data-testid="notifications-blocked"
      >
        Notifications are blocked for this site in the browser’s settings.
      </p>
    );
  }
  if (wanted && permission === "granted") {
    return (
      <div
        className={compact ? "flex flex-wrap items-center gap-2 text-xs" : "flex flex-wrap items-center gap-2 text-sm"}
        data-testid="notifications-on"
      >
        <span className="inline-flex items-center gap-1.5 text-emerald-800 dark:text-emerald-300">
          <Icon name="check-circle" /> Notifications are on for new items
        </span>
        <Button
          variant="quiet"
          onClick={() => {
            setNotificationsWanted(false);
            setWanted(false);
          }}
        >
          Turn off
        </Button>
      </div>
    );
  }
  return (
    <Button
      variant={compact ? "quiet" : "secondary"}
      className={compact ? "w-full justify-start px-0" : undefined}
      data-testid="enable-notifications"
      onClick={() => {
        void requestNotificationPermission().then((p) => {
          setPermission(p);
          if (p === "granted") {
            setNotificationsWanted(true);
            setWanted(true);
          }
        });
      }}
    >
      <Icon name="inbox" /> Enable notifications
    </Button>
  );
}
