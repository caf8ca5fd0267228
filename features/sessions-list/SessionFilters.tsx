"use client";
// Filter bar for the session list. Every control writes to the URL; text
// fields debounce and replace the history entry, selects push a new one.

import clsx from "clsx";
import { memo, useEffect, useRef, useState } from "react";
import { PHASE_INFO, PHASES, STATE_INFO, STATE_KEYS, type StateKey } from "@/lib/views/labels";
import {
  defaultDirFor,
  hasActiveFilters,
  DEFAULT_LIST_QUERY,
  SORT_KEYS,
  type ListQuery,
  isModeFilter,
  type SortKey,
} from "@/lib/views/list-query";
import { isPhase } from "@/lib/views/labels";
import { V01_MODE_LABEL } from "@/lib/views/file-pill";
import { useWhoAmI } from "@/lib/client/use-whoami";
import { offersWaitingOnMe } from "@/lib/views/list-query";
import { formatDuration } from "@/lib/views/format";
import { Icon } from "@/components/ui/Icon";

export const SORT_LABELS: Record<SortKey, string> = {
  activity: "Last activity",
  started: "Started",
  ttl: "Time left",
  intent: "Intent",
  phase: "Phase",
  state: "Status",
  mode: "Mode",
  owner: "From / requester",
  target: "To / assignee",
};

/** "15 min", "90 s": the threshold as people read it. */
function formatStuckAfter(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : formatDuration(ms);
}

const controlClass =
  "h-9 rounded-md border border-slate-300 bg-white px-2 text-sm text-slate-900 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100";

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
}: {
  query: ListQuery;
  setQuery: (patch: Partial<ListQuery>, opts?: { replace?: boolean }) => void;
  searchRef: React.RefObject<HTMLInputElement | null>;
  paused: boolean;
  onTogglePause: () => void;
  waiting: number;
  /** The stuck threshold, for the toggle's explanation. */
  stuckAfterMs: number;
}) {
  const [q, setQ] = useDebouncedText(query.q, (v) => setQuery({ q: v }, { replace: true }));
  const [participant, setParticipant] = useDebouncedText(query.participant, (v) => setQuery({ participant: v }, { replace: true }));
  // Below lg the secondary filters fold away behind a toggle.
  const [moreOpen, setMoreOpen] = useState(false);
  const activeCount = [query.mode, query.state, query.phase, query.participant].filter(Boolean).length;
  // "Waiting on me": the signed-in person's participant id in ?waiting= (a link can name someone else).
  const { me } = useWhoAmI();
  // Only people who can be asked to act are offered it (a viewer never is); a link naming someone keeps its toggle to turn it off.
  const mine = offersWaitingOnMe(me) ? (me?.participantId ?? "") : "";
  const waitingLabel = query.waiting === "" || query.waiting === mine ? "Waiting on me" : `Waiting on ${query.waiting}`;
  const onMode = (v: string): void => setQuery({ mode: isModeFilter(v) ? v : undefined });
  const onState = (v: string): void => setQuery({ state: (STATE_KEYS as string[]).includes(v) ? (v as StateKey) : undefined });
  const onPhase = (v: string): void => setQuery({ phase: isPhase(v) ? v : undefined });
  const onSort = (v: string): void => {
    if ((SORT_KEYS as readonly string[]).includes(v)) setQuery({ sort: v as SortKey, dir: defaultDirFor(v as SortKey) });
  };

  // The server's HTML shows the list before the page is hydrated; what was
  // typed or picked in the meantime is in the DOM only (React keeps it while
  // hydrating, but no change event reached it). Adopt it once, after hydration.
  const formRef = useRef<HTMLFormElement | null>(null);
  useEffect(() => {
    const form = formRef.current;
    if (!form) return;
    const domValue = (testId: string): string | undefined =>
      form.querySelector<HTMLInputElement | HTMLSelectElement>(`[data-testid="${testId}"]`)?.value;
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

  return (
    <form
      ref={formRef}
      role="search"
      aria-label="Filter sessions"
      className="flex flex-wrap items-end gap-2"
      onSubmit={(e) => e.preventDefault()}
    >
      <label className="flex min-w-0 flex-[2_1_14rem] flex-col gap-1 text-xs font-medium text-slate-700 dark:text-slate-300">
        Search
        <span className="relative">
          <Icon name="search" className="pointer-events-none absolute top-2.5 left-2 h-4 w-4 text-slate-500 dark:text-slate-400" />
          <input
            ref={searchRef}
            type="search"
            value={q}
            onChange={(e) => setQ(e.target.value)}
            placeholder="Intent, scope, id, owner…  ( / )"
            maxLength={200}
            className={clsx(controlClass, "w-full pl-8")}
            data-testid="filter-q"
          />
        </span>
      </label>
      {mine !== "" || query.waiting !== "" ? (
        <button
          type="button"
          className={clsx(
            controlClass,
            "inline-flex items-center gap-1.5",
            query.waiting !== "" && "ring-2 ring-blue-700 dark:ring-sky-300",
          )}
          aria-pressed={query.waiting !== ""}
          onClick={() => setQuery({ waiting: query.waiting !== "" ? "" : mine })}
          data-testid="filter-waiting"
          title={query.waiting !== "" ? "Show every session" : "Only sessions where the next move is yours"}
        >
          <Icon name="clock" />
          {waitingLabel}
        </button>
      ) : null}
      <button
        type="button"
        className={clsx(controlClass, "inline-flex items-center gap-1.5", query.stuck && "ring-2 ring-amber-600 dark:ring-amber-300")}
        aria-pressed={query.stuck}
        onClick={() => setQuery({ stuck: !query.stuck })}
        data-testid="filter-stuck"
        title={
          query.stuck
            ? "Show every session"
            : `Only sessions whose offer has been unanswered, or approval pending, for ${formatStuckAfter(stuckAfterMs)} or longer`
        }
      >
        <Icon name="alert" />
        Stuck
      </button>
      <button
        type="button"
        className={clsx(controlClass, "inline-flex items-center gap-1.5 lg:hidden")}
        aria-expanded={moreOpen}
        aria-controls="more-filters"
        onClick={() => setMoreOpen(!moreOpen)}
      >
        <Icon name={moreOpen ? "chevron-down" : "chevron-right"} />
        Filters{activeCount > 0 ? ` (${activeCount})` : ""}
      </button>
      <div id="more-filters" className={clsx(moreOpen ? "flex" : "hidden", "w-full flex-wrap items-end gap-2 lg:contents")}>
        <label className="flex min-w-0 flex-[1_1_9rem] flex-col gap-1 text-xs font-medium text-slate-700 dark:text-slate-300">
          Participant
          <input
            type="text"
            value={participant}
            onChange={(e) => setParticipant(e.target.value)}
            placeholder="e.g. bob"
            maxLength={200}
            className={clsx(controlClass, "w-full")}
            autoComplete="off"
            data-testid="filter-participant"
          />
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700 dark:text-slate-300">
          Mode
          <select value={query.mode ?? ""} onChange={(e) => onMode(e.target.value)} className={controlClass} data-testid="filter-mode">
            <option value="">All modes</option>
            <option value="handoff">Handoff</option>
            <option value="task">Task</option>
            <option value="file">{V01_MODE_LABEL}</option>
          </select>
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700 dark:text-slate-300">
          State
          <select value={query.state ?? ""} onChange={(e) => onState(e.target.value)} className={controlClass} data-testid="filter-state">
            <option value="">Any state</option>
            {STATE_KEYS.map((k) => (
              <option key={k} value={k}>
                {STATE_INFO[k].label}
              </option>
            ))}
          </select>
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700 dark:text-slate-300">
          Phase
          <select value={query.phase ?? ""} onChange={(e) => onPhase(e.target.value)} className={controlClass} data-testid="filter-phase">
            <option value="">Any phase</option>
            {PHASES.map((p) => (
              <option key={p} value={p}>
                {PHASE_INFO[p].label}
              </option>
            ))}
          </select>
        </label>
        <div className="flex items-end gap-1">
          <label className="flex flex-col gap-1 text-xs font-medium text-slate-700 dark:text-slate-300">
            Sort by
            <select value={query.sort} onChange={(e) => onSort(e.target.value)} className={controlClass} data-testid="sort">
              {SORT_KEYS.map((k) => (
                <option key={k} value={k}>
                  {SORT_LABELS[k]}
                </option>
              ))}
            </select>
          </label>
          <button
            type="button"
            className={clsx(controlClass, "inline-flex items-center gap-1")}
            onClick={() => setQuery({ dir: query.dir === "asc" ? "desc" : "asc" })}
            title="Reverse the sort order"
            data-testid="sort-dir"
          >
            <Icon name={query.dir === "asc" ? "arrow-up" : "arrow-down"} />
            <span className="text-xs">{query.dir === "asc" ? "Ascending" : "Descending"}</span>
          </button>
        </div>
        <div className="flex items-end gap-2">
          {hasActiveFilters(query) ? (
            <button
              type="button"
              className={clsx(controlClass, "text-blue-800 dark:text-sky-300")}
              onClick={() =>
                setQuery({ ...DEFAULT_LIST_QUERY, sort: query.sort, dir: query.dir, mode: undefined, state: undefined, phase: undefined })
              }
              data-testid="clear-filters"
            >
              Clear filters
            </button>
          ) : null}
          <button
            type="button"
            aria-pressed={paused}
            onClick={onTogglePause}
            className={clsx(
              controlClass,
              "inline-flex items-center gap-1.5",
              paused && "border-amber-400 bg-amber-50 text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-200",
            )}
            data-testid="pause"
          >
            <Icon name={paused ? "play" : "pause"} />
            {paused ? `Resume${waiting > 0 ? ` (${waiting} waiting)` : ""}` : "Pause updates"}
          </button>
        </div>
      </div>
    </form>
  );
});
