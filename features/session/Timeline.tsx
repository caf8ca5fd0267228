"use client";
// The session timeline, window-virtualized (20,000 events stay smooth).
// Keyboard: j/k or ↑/↓ move between events, Home/g first, End/G newest,
// Enter expands (or folds) the focused event's raw envelope.
// Deep links (?event=N or #e-N) scroll to, focus and highlight the event.
// While the newest event is in view, new events keep it in view.

import { useWindowVirtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { EventRow, Timeline as TimelineModel } from "@/lib/views/timeline";
import { useOffsetTop } from "@/lib/client/use-offset-top";
import { EventCard, GroupHeader, RefusalNote } from "@/features/session/TimelineRows";

function isTypingTarget(el: Element | null): boolean {
  if (!el) return false;
  const tag = el.tagName;
  return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (el as HTMLElement).isContentEditable;
}

export interface TimelineHandle {
  jumpToLatest(): void;
}

export function Timeline({
  sessionId,
  timeline,
  target,
  onTargetHandled,
  registerHandle,
  onLatestVisibleChange,
}: {
  sessionId: string;
  timeline: TimelineModel;
  /** Sequence to scroll to and focus (deep link); handled once present. */
  target: number | undefined;
  onTargetHandled: (sequence: number, found: boolean) => void;
  registerHandle: (h: TimelineHandle) => void;
  onLatestVisibleChange: (visible: boolean) => void;
}) {
  const { rows, rowOfSequence, newestSequence } = timeline;
  const listRef = useRef<HTMLDivElement | null>(null);
  const scrollMargin = useOffsetTop(listRef);
  const [focusedSeq, setFocusedSeq] = useState<number | undefined>(undefined);
  const [highlight, setHighlight] = useState<number | undefined>(undefined);
  const [rawOpen, setRawOpen] = useState<ReadonlySet<number>>(() => new Set());
  const focusRequest = useRef<number | null>(null);
  const followRef = useRef(false);

  const eventIndexes = useMemo(() => {
    const out: number[] = [];
    rows.forEach((r, i) => {
      if (r.kind === "event") out.push(i);
    });
    return out;
  }, [rows]);

  // The first render draws the rows in view and 2 more, the next frame 8
  // more on each side: each row drawn is a card with its payload, and the
  // first render is what the reader waits for (the whole overscan cost the
  // live view's first render about 60 ms on the 2-core machine, 2026-11-27).
  const [overscan, setOverscan] = useState(2);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const raf = requestAnimationFrame(() => {
      timer = setTimeout(() => setOverscan(8), 0);
    });
    return () => {
      cancelAnimationFrame(raf);
      if (timer !== undefined) clearTimeout(timer);
    };
  }, []);
  const virtualizer = useWindowVirtualizer({
    count: rows.length,
    estimateSize: (i) => (rows[i]?.kind === "group" ? 64 : rows[i]?.kind === "refusal" ? 72 : 96),
    overscan,
    scrollMargin,
    getItemKey: (i) => rows[i]?.key ?? i,
  });

  const focusedIndex = focusedSeq !== undefined ? rowOfSequence.get(focusedSeq) : undefined;
  const tabStopSeq = focusedIndex !== undefined ? focusedSeq : (rows[eventIndexes[0] ?? -1] as EventRow | undefined)?.sequence;

  const goToSequence = useCallback(
    (sequence: number, align: "start" | "center" | "end" | "auto" = "auto") => {
      const index = rowOfSequence.get(sequence);
      if (index === undefined) return false;
      setFocusedSeq(sequence);
      focusRequest.current = sequence;
      virtualizer.scrollToIndex(index, { align });
      return true;
    },
    [rowOfSequence, virtualizer],
  );

  const jumpToLatest = useCallback(() => {
    if (newestSequence === undefined) return;
    followRef.current = true;
    goToSequence(newestSequence, "end");
  }, [goToSequence, newestSequence]);

  useEffect(() => registerHandle({ jumpToLatest }), [registerHandle, jumpToLatest]);

  // Focus the requested row once the virtualizer has rendered it.
  useEffect(() => {
    const seq = focusRequest.current;
    if (seq === null) return;
    let frames = 0;
    let raf = 0;
    const tryFocus = (): void => {
      const el = document.getElementById(`e-${seq}`);
      if (el) {
        el.focus({ preventScroll: true });
        focusRequest.current = null;
        // Re-align after measurement settled (dynamic row heights).
        const index = rowOfSequence.get(seq);
        const rect = el.getBoundingClientRect();
        if (index !== undefined && (rect.top < 56 || rect.bottom > window.innerHeight)) {
          virtualizer.scrollToIndex(index, { align: "center" });
        }
      } else if (frames++ < 30) raf = requestAnimationFrame(tryFocus);
    };
    raf = requestAnimationFrame(tryFocus);
    return () => cancelAnimationFrame(raf);
  });

  // Deep link: wait until the event exists, then go there once.
  useEffect(() => {
    if (target === undefined) return;
    if (rowOfSequence.has(target)) {
      followRef.current = false;
      goToSequence(target, "center");
      setHighlight(target);
      onTargetHandled(target, true);
    }
  }, [target, rowOfSequence, goToSequence, onTargetHandled]);

  // Track whether the newest event is on screen (for follow mode and the jump button).
  useEffect(() => {
    const check = (): void => {
      const doc = document.documentElement;
      const atBottom = window.scrollY + window.innerHeight >= doc.scrollHeight - 120;
      // Follow only once the reader has scrolled down to the end themselves
      // (or jumped there); opening a session keeps its header in view.
      followRef.current = atBottom && window.scrollY > 0;
      onLatestVisibleChange(atBottom);
    };
    check();
    window.addEventListener("scroll", check, { passive: true });
    window.addEventListener("resize", check);
    return () => {
      window.removeEventListener("scroll", check);
      window.removeEventListener("resize", check);
    };
  }, [onLatestVisibleChange]);

  // Follow: new events while at the bottom keep the newest in view.
  const prevCount = useRef(rows.length);
  useLayoutEffect(() => {
    if (rows.length > prevCount.current && followRef.current && rows.length > 0 && target === undefined) {
      virtualizer.scrollToIndex(rows.length - 1, { align: "end" });
    }
    prevCount.current = rows.length;
  }, [rows.length, virtualizer, target]);

  const move = (delta: number): void => {
    const current = focusedIndex ?? eventIndexes[0];
    if (current === undefined) return;
    const pos = eventIndexes.indexOf(current);
    const nextIdx = eventIndexes[Math.max(0, Math.min(eventIndexes.length - 1, (pos < 0 ? 0 : pos) + delta))];
    const row = nextIdx !== undefined ? rows[nextIdx] : undefined;
    if (row?.kind === "event") goToSequence(row.sequence);
  };

  const onKeyDown = (e: React.KeyboardEvent): void => {
    if (e.altKey || e.ctrlKey || e.metaKey || isTypingTarget(e.target as Element)) return;
    if ((e.target as HTMLElement).closest("summary, button, a, details[open] pre")) {
      // Let interactive children keep their own keys (Enter/Space), but still allow navigation keys.
      if (e.key === "Enter" || e.key === " ") return;
    }
    const page = Math.max(1, Math.floor(window.innerHeight / 96) - 1);
    switch (e.key) {
      case "Enter": {
        // On the row itself (not a link or button inside it): expand or fold the event.
        const row = (e.target as HTMLElement).closest<HTMLElement>("[data-row]");
        const seq = row === e.target ? Number(row.dataset.sequence) : Number.NaN;
        if (!Number.isFinite(seq)) return;
        onToggleRaw(seq, !rawOpen.has(seq));
        break;
      }
      case "j":
      case "ArrowDown":
        move(1);
        break;
      case "k":
      case "ArrowUp":
        move(-1);
        break;
      case "PageDown":
        move(page);
        break;
      case "PageUp":
        move(-page);
        break;
      case "Home":
      case "g": {
        const first = rows[eventIndexes[0] ?? -1];
        if (first?.kind === "event") goToSequence(first.sequence, "start");
        break;
      }
      case "End":
      case "G":
        jumpToLatest();
        break;
      default:
        return;
    }
    e.preventDefault();
  };

  // End / G anywhere on the page (outside text fields) reaches the newest event.
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
      if (isTypingTarget(document.activeElement)) return;
      if (listRef.current?.contains(document.activeElement)) return;
      if (e.key === "End" || e.key === "G") {
        e.preventDefault();
        jumpToLatest();
      } else if (e.key === "j" || e.key === "k") {
        e.preventDefault();
        if (tabStopSeq !== undefined) goToSequence(tabStopSeq);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [jumpToLatest, goToSequence, tabStopSeq]);

  const onToggleRaw = useCallback((sequence: number, open: boolean) => {
    setRawOpen((prev) => {
      const next = new Set(prev);
      if (open) next.add(sequence);
      else next.delete(sequence);
      return next;
    });
  }, []);
  const onFocusRow = useCallback((sequence: number) => setFocusedSeq(sequence), []);

  const items = virtualizer.getVirtualItems();
  return (
    // Roving focus: the rows are the focusable elements; the container only
    // moves focus between them with the arrow keys.
    // eslint-disable-next-line jsx-a11y/no-static-element-interactions
    <div
      ref={listRef}
      onKeyDown={onKeyDown}
      className="relative"
      style={{ height: virtualizer.getTotalSize() }}
      data-testid="timeline"
      data-rows={rows.length}
    >
      {items.map((vi) => {
        const row = rows[vi.index];
        if (!row) return null;
        return (
          <div
            key={vi.key}
            data-index={vi.index}
            ref={virtualizer.measureElement}
            className="absolute top-0 left-0 w-full"
            style={{ transform: `translateY(${vi.start - virtualizer.options.scrollMargin}px)` }}
          >
            {row.kind === "group" ? (
              <GroupHeader row={row} />
            ) : row.kind === "refusal" ? (
              <RefusalNote refusal={row.refusal} />
            ) : (
              <EventCard
                row={row}
                sessionId={sessionId}
                focused={row.sequence === tabStopSeq}
                highlighted={row.sequence === highlight}
                rawOpen={rawOpen.has(row.sequence)}
                onToggleRaw={onToggleRaw}
                onFocusRow={onFocusRow}
              />
            )}
          </div>
        );
      })}
    </div>
  );
}
