"use client";
// Filter bar for the session list. Every control writes to the URL; text
// fields debounce and replace the history entry, selects push a new one.

import { memo, useEffect, useRef, useState } from "react";
import { STATE_KEYS, type StateKey } from "@/lib/views/labels";
import { defaultDirFor, DEFAULT_LIST_QUERY, SORT_KEYS, type ListQuery, isModeFilter, type SortKey } from "@/lib/views/list-query";
import { isPhase } from "@/lib/views/labels";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { offersWaitingOnMe } from "@/lib/views/list-query";
import { FiltersView, type FilterHandlers } from "@/features/sessions-list/FiltersView";

export { SORT_LABELS } from "@/features/sessions-list/FiltersView";

/** What was typed or picked in the server's first view before the live list took over: its controls' values by test id. */
export type CarriedFilters = Readonly<Record<string, string>>;

function useDebouncedText(value: string, commit: (v: string) => void): [string, (v: string) => void] {
  const [text, setText] = useState(value);
  const lastCommitted = useRef(value);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  // The URL changed from elsewhere (back button, clear filters): follow it.
  useEffect(() => {
    if (value !== lastCommitted.current) {
      lastCommitted.current = value;
      setText(value);
    }
  }, [value]);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);
  const update = (v: string): void => {
    setText(v);
    if (timer.current) clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      lastCommitted.current = v.trim();
      commit(v.trim());
    }, 200);
  };
  return [text, update];
}

export const SessionFilters = memo(function SessionFilters({
  query,
  setQuery,
  searchRef,
  paused,
  onTogglePause,
  waiting,
  stuckAfterMs,
  carried,
}: {
  query: ListQuery;
  setQuery: (patch: Partial<ListQuery>, opts?: { replace?: boolean }) => void;
  searchRef: React.RefObject<HTMLInputElement | null>;
  paused: boolean;
  onTogglePause: () => void;
  waiting: number;
  /** The stuck threshold, for the toggle's explanation. */
  stuckAfterMs: number;
  /** The first view's controls as they were when the live list took over (ListPreview.tsx). */
  carried?: CarriedFilters | undefined;
}) {
  const [q, setQ] = useDebouncedText(query.q, (v) => setQuery({ q: v }, { replace: true }));
  const [participant, setParticipant] = useDebouncedText(query.participant, (v) => setQuery({ participant: v }, { replace: true }));
  // Below lg the secondary filters fold away behind a toggle.
  const [moreOpen, setMoreOpen] = useState(false);
  // "Waiting on me": the signed-in person's participant id in ?waiting= (a link can name someone else).
  const { me } = useWhoAmI();
  // Only people who can be asked to act are offered it (a viewer never is); a link naming someone keeps its toggle to turn it off.
  const mine = offersWaitingOnMe(me) ? (me?.participantId ?? "") : "";
  const onMode = (v: string): void => setQuery({ mode: isModeFilter(v) ? v : undefined });
  const onState = (v: string): void => setQuery({ state: (STATE_KEYS as string[]).includes(v) ? (v as StateKey) : undefined });
  const onPhase = (v: string): void => setQuery({ phase: isPhase(v) ? v : undefined });
  const onSort = (v: string): void => {
    if ((SORT_KEYS as readonly string[]).includes(v)) setQuery({ sort: v as SortKey, dir: defaultDirFor(v as SortKey) });
  };

  // The server's HTML shows the list before the live list has taken over;
  // what was typed or picked in the meantime is in the first view's DOM only
  // (handed over as `carried`) or, when hydrating, in this form's DOM (React
  // keeps it, but no change event reached it). Adopt it once.
  const formRef = useRef<HTMLFormElement | null>(null);
  useEffect(() => {
    const form = formRef.current;
    if (!form) return;
    const domValue = (testId: string): string | undefined =>
      carried?.[testId] ?? form.querySelector<HTMLInputElement | HTMLSelectElement>(`[data-testid="${testId}"]`)?.value;
    const typedQ = domValue("filter-q");
    if (typedQ !== undefined && typedQ !== q) setQ(typedQ);
    const typedParticipant = domValue("filter-participant");
    if (typedParticipant !== undefined && typedParticipant !== participant) setParticipant(typedParticipant);
    const picked: [string, string, (v: string) => void][] = [
      ["filter-mode", query.mode ?? "", onMode],
      ["filter-state", query.state ?? "", onState],
      ["filter-phase", query.phase ?? "", onPhase],
      ["sort", query.sort, onSort],
    ];
    for (const [testId, current, apply] of picked) {
      const v = domValue(testId);
      if (v !== undefined && v !== current) apply(v);
    }
    // Once, on the first client render after the server's HTML.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const on: FilterHandlers = {
    q: setQ,
    participant: setParticipant,
    mode: onMode,
    state: onState,
    phase: onPhase,
    sort: onSort,
    dir: () => setQuery({ dir: query.dir === "asc" ? "desc" : "asc" }),
    waiting: () => setQuery({ waiting: query.waiting !== "" ? "" : mine }),
    stuck: () => setQuery({ stuck: !query.stuck }),
    more: () => setMoreOpen(!moreOpen),
    clear: () => setQuery({ ...DEFAULT_LIST_QUERY, sort: query.sort, dir: query.dir, mode: undefined, state: undefined, phase: undefined }),
    pause: onTogglePause,
  };
  return (
    <FiltersView
      query={query}
      q={q}
      participant={participant}
      mine={mine}
      moreOpen={moreOpen}
      paused={paused}
      waiting={waiting}
      stuckAfterMs={stuckAfterMs}
      on={on}
      formRef={formRef}
      searchRef={searchRef}
    />
  );
});
