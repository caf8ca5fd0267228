"use client";
// Which news items (InboxUpdate.news) the person dismissed, kept in this
// browser's localStorage per person: news is told, not asked, so dismissing
// is a reader's choice and needs no server state. Bounded to the newest
// MAX_DISMISSED keys (the server sends at most 10 items from the last day).
// Other tabs follow through the storage event.

import { useCallback, useSyncExternalStore } from "react";
import type { InboxItem } from "@/lib/gen/baton/v1/actions_pb";
import { inboxKey } from "@/features/inbox/inbox-state";

const MAX_DISMISSED = 200;
const EMPTY: readonly string[] = Object.freeze([]);

/** One news item's key: the same item told again later (a new time) is new news. */
export function newsKey(item: InboxItem): string {
  return `${inboxKey(item)}:${item.sinceUnixMs}`;
}

const storageKey = (participantId: string) => `baton:inbox-news-dismissed:${participantId}`;

const listeners = new Set<() => void>();
const cache = new Map<string, { raw: string | null; keys: readonly string[] }>();

function read(participantId: string): readonly string[] {
  let raw: string | null = null;
  try {
    raw = window.localStorage.getItem(storageKey(participantId));
  } catch {
    return EMPTY;
  }
  const hit = cache.get(participantId);
  if (hit && hit.raw === raw) return hit.keys;
  let keys: readonly string[] = EMPTY;
  try {
    const parsed: unknown = raw ? JSON.parse(raw) : [];
    if (Array.isArray(parsed)) keys = parsed.filter((k): k is string => typeof k === "string").slice(-MAX_DISMISSED);
  } catch {
    keys = EMPTY;
  }
  cache.set(participantId, { raw, keys });
  return keys;
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  const onStorage = (e: StorageEvent) => {
    if (e.key?.startsWith("baton:inbox-news-dismissed:")) listener();
  };
  window.addEventListener("storage", onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("storage", onStorage);
  };
}

/** The dismissed keys of this person's news, and a way to dismiss one more. */
export function useDismissedNews(participantId: string): { dismissed: ReadonlySet<string>; dismiss: (item: InboxItem) => void } {
  const keys = useSyncExternalStore(
    subscribe,
    () => (participantId ? read(participantId) : EMPTY),
    () => EMPTY,
  );
  const dismiss = useCallback(
    (item: InboxItem) => {
      if (!participantId) return;
      const next = [...read(participantId).filter((k) => k !== newsKey(item)), newsKey(item)].slice(-MAX_DISMISSED);
      try {
        window.localStorage.setItem(storageKey(participantId), JSON.stringify(next));
      } catch {
        // Storage full or refused: the item stays shown.
      }
      for (const l of listeners) l();
    },
    [participantId],
  );
  return { dismissed: new Set(keys), dismiss };
}
