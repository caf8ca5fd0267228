"use client";
// useListNavigation(): the session list's window and keyboard. The rows on
// screen come from a window virtualizer (until hydration, the first rows in
// flow: the server knows no window size) and are told to the session window,
// which reads their pages. Selection is an index kept on the same session
// while rows shift under it; focus follows it once its row is rendered;
// ↑/↓ or j/k, Home/End and PageUp/PageDown move it, and on the page "/"
// searches, j/k enter the list and Enter opens the selected session.

import { useWindowVirtualizer } from "@tanstack/react-virtual";
import { useRouter } from "next/navigation";
import { useCallback, useEffect, useRef, useState, useSyncExternalStore, type Key, type KeyboardEvent, type RefObject } from "react";
import { FIRST_VIEW_ROWS, ROW_WIDE, type SessionWindow } from "@/features/sessions-list/list-first-view";
import { useElementOffsetTop } from "@/lib/client/use-offset-top";
import { useHydrated } from "@/lib/client/use-hydrated";

const WIDE = "(min-width: 1024px)";
/** Row heights before measuring: a grid row on wide screens, a card below. */
const ROW_CARD = 106;

function subscribeWide(cb: () => void): () => void {
  const mq = window.matchMedia(WIDE);
  mq.addEventListener("change", cb);
  return () => mq.removeEventListener("change", cb);
}

function useWide(): boolean {
  return useSyncExternalStore(
    subscribeWide,
    () => window.matchMedia(WIDE).matches,
    () => true,
  );
}

function isTypingTarget(el: Element | null): boolean {
  if (!el) return false;
  const tag = el.tagName;
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (el as HTMLElement).isContentEditable;
}

export function useListNavigation(win: SessionWindow, searchRef: RefObject<HTMLInputElement | null>) {
  const router = useRouter();
  const hydrated = useHydrated();
  const listRef = useRef<HTMLOListElement | null>(null);
  const [listEl, setListEl] = useState<HTMLOListElement | null>(null);
  const scrollMargin = useElementOffsetTop(listEl);
  const wide = useWide();
  const rowHeight = wide ? ROW_WIDE : ROW_CARD;

  const total = win.head?.total ?? 0;
  const { setVisible, rowAt } = win;

  const virtualizer = useWindowVirtualizer({
    count: total,
    estimateSize: () => rowHeight,
    overscan: 8,
    scrollMargin,
    // Keyed by position: pages read at different versions may briefly show
    // the same session twice while rows shift; ids would collide.
  });
  // Re-estimate unmeasured rows when the layout switches between grid and cards.
  useEffect(() => virtualizer.measure(), [rowHeight, virtualizer]);

  // Until hydrated, the first rows in flow (the server knows no window size).
  const items: readonly { key: Key; index: number; start: number; end: number }[] = hydrated
    ? virtualizer.getVirtualItems()
    : Array.from({ length: Math.min(total, FIRST_VIEW_ROWS) }, (_, index) => ({ key: index, index, start: 0, end: 0 }));
  const firstVisible = items[0]?.index ?? 0;
  const lastVisible = items[items.length - 1]?.index ?? 0;
  useEffect(() => setVisible(firstVisible, lastVisible), [firstVisible, lastVisible, setVisible]);

  // Selection: an index, kept on the same session while rows shift under it.
  const [selected, setSelected] = useState<{ index: number; id: string | null }>({ index: 0, id: null });
  let selectedIndex = total === 0 ? -1 : Math.min(selected.index, total - 1);
  if (selected.id && selectedIndex >= 0 && rowAt(selectedIndex)?.metadata?.sessionId !== selected.id) {
    const found = items.find((vi) => rowAt(vi.index)?.metadata?.sessionId === selected.id);
    if (found) selectedIndex = found.index;
  }
  const onSelect = useCallback(
    (id: string) => {
      const vi = virtualizer.getVirtualItems().find((v) => rowAt(v.index)?.metadata?.sessionId === id);
      setSelected({ index: vi ? vi.index : 0, id });
    },
    [virtualizer, rowAt],
  );

  // Focus follows the selection once its row is loaded and rendered.
  const focusRequest = useRef<number | null>(null);
  useEffect(() => {
    const index = focusRequest.current;
    if (index === null) return;
    let frames = 0;
    let raf = 0;
    const tryFocus = (): void => {
      const el = listRef.current?.querySelector<HTMLElement>(`li[data-index="${index}"] [data-row]`);
      if (el) {
        el.focus({ preventScroll: true });
        focusRequest.current = null;
      } else if (frames++ < 20) raf = requestAnimationFrame(tryFocus);
    };
    tryFocus();
    return () => cancelAnimationFrame(raf);
  });

  const moveTo = useCallback(
    (index: number) => {
      if (total === 0) return;
      const i = Math.max(0, Math.min(total - 1, index));
      setSelected({ index: i, id: rowAt(i)?.metadata?.sessionId ?? null });
      focusRequest.current = i;
      virtualizer.scrollToIndex(i, { align: "auto" });
    },
    [total, rowAt, virtualizer],
  );

  const onListKeyDown = (e: KeyboardEvent): void => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const page = Math.max(1, Math.floor(window.innerHeight / rowHeight) - 2);
    let next: number | null = null;
    switch (e.key) {
      case "ArrowDown":
      case "j":
        next = selectedIndex + 1;
        break;
      case "ArrowUp":
      case "k":
        next = selectedIndex - 1;
        break;
      case "Home":
        next = 0;
        break;
      case "End":
        next = total - 1;
        break;
      case "PageDown":
        next = selectedIndex + page;
        break;
      case "PageUp":
        next = selectedIndex - page;
        break;
      default:
        return;
    }
    e.preventDefault();
    moveTo(next);
  };

  // Page-level shortcuts when nothing else has focus: "/" searches, j/k enter the list.
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent): void => {
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
      const active = document.activeElement;
      if (isTypingTarget(active)) return;
      if (listRef.current?.contains(active)) return;
      if (e.key === "/") {
        e.preventDefault();
        searchRef.current?.focus();
      } else if (e.key === "j" || e.key === "k") {
        e.preventDefault();
        moveTo(selectedIndex < 0 ? 0 : selectedIndex);
      } else if (e.key === "Enter" && (active === document.body || active?.id === "main")) {
        const id = rowAt(selectedIndex)?.metadata?.sessionId;
        if (id) router.push(`/sessions/${encodeURIComponent(id)}`);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [moveTo, selectedIndex, rowAt, router, searchRef]);

  const setListRef = useCallback((el: HTMLOListElement | null) => {
    listRef.current = el;
    setListEl(el);
  }, []);

  return { hydrated, virtualizer, items, total, rowHeight, selectedIndex, onSelect, onListKeyDown, setListRef };
}
