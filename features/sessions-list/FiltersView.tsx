// The session list's filter bar as drawn: by the live list (SessionFilters.tsx,
// which holds the state and writes every change to the URL) and by the
// server's first view (ListPreview.tsx), whose controls show the URL's query
// and do nothing until the live list takes over (what was typed or picked
// meanwhile is carried over to it). No hooks and no "use client".

import clsx from "clsx";
import type { ChangeEvent, RefObject } from "react";
import { PHASE_INFO, PHASES, STATE_INFO, STATE_KEYS } from "@/lib/views/labels";
import { hasActiveFilters, SORT_KEYS, type ListQuery, type SortKey } from "@/lib/views/list-query";
import { V01_MODE_LABEL } from "@/lib/views/file-pill";
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

/** What the live filter bar does on each control (none on the server's first view). */
export interface FilterHandlers {
  q(v: string): void;
  participant(v: string): void;
  mode(v: string): void;
  state(v: string): void;
  phase(v: string): void;
  sort(v: string): void;
  dir(): void;
  waiting(): void;
  stuck(): void;
  more(): void;
  clear(): void;
  pause(): void;
}

function selectProps(value: string, onChange: ((v: string) => void) | undefined) {
  return onChange ? { value, onChange: (e: ChangeEvent<HTMLSelectElement>) => onChange(e.target.value) } : { defaultValue: value };
}

export function FiltersView({
  query,
  q,
  participant,
  mine,
  moreOpen,
  paused,
  waiting,
  stuckAfterMs,
  on,
  formRef,
  searchRef,
}: {
  query: ListQuery;
  /** The text fields as typed (the URL's until the debounce commits them). */
  q: string;
  participant: string;
  /** The signed-in person's participant id when they can be asked to act ("Waiting on me"), else "". */
  mine: string;
  /** Below lg, the secondary filters unfolded. */
  moreOpen: boolean;
  paused: boolean;
  /** Notices held back while paused. */
  waiting: number;
  /** The stuck threshold, for the toggle's explanation. */
  stuckAfterMs: number;
  on?: FilterHandlers | undefined;
  formRef?: RefObject<HTMLFormElement | null> | undefined;
  searchRef?: RefObject<HTMLInputElement | null> | undefined;
}) {
  const activeCount = [query.mode, query.state, query.phase, query.participant].filter(Boolean).length;
  const waitingLabel = query.waiting === "" || query.waiting === mine ? "Waiting on me" : `Waiting on ${query.waiting}`;
  return (
    <form
      ref={formRef}
      role="search"
      aria-label="Filter sessions"
      className="flex flex-wrap items-end gap-2"
      onSubmit={on ? (e) => e.preventDefault() : undefined}
    >
      <label className="flex min-w-0 flex-[2_1_14rem] flex-col gap-1 text-xs font-medium text-slate-700 dark:text-slate-300">
        Search
        <span className="relative">
          <Icon name="search" className="pointer-events-none absolute top-2.5 left-2 h-4 w-4 text-slate-500 dark:text-slate-400" />
          <input
            ref={searchRef}
            type="search"
            {...(on ? { value: q, onChange: (e: ChangeEvent<HTMLInputElement>) => on.q(e.target.value) } : { defaultValue: q })}
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
          onClick={on?.waiting}
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
        onClick={on?.stuck}
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
        onClick={on?.more}
      >
        <Icon name={moreOpen ? "chevron-down" : "chevron-right"} />
        Filters{activeCount > 0 ? ` (${activeCount})` : ""}
      </button>
      <div id="more-filters" className={clsx(moreOpen ? "flex" : "hidden", "w-full flex-wrap items-end gap-2 lg:contents")}>
        <label className="flex min-w-0 flex-[1_1_9rem] flex-col gap-1 text-xs font-medium text-slate-700 dark:text-slate-300">
          Participant
          <input
            type="text"
            {...(on
              ? { value: participant, onChange: (e: ChangeEvent<HTMLInputElement>) => on.participant(e.target.value) }
              : { defaultValue: participant })}
            placeholder="e.g. bob"
            maxLength={200}
            className={clsx(controlClass, "w-full")}
            autoComplete="off"
            data-testid="filter-participant"
          />
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700 dark:text-slate-300">
          Mode
          <select {...selectProps(query.mode ?? "", on?.mode)} className={controlClass} data-testid="filter-mode">
            <option value="">All modes</option>
            <option value="handoff">Handoff</option>
            <option value="task">Task</option>
            <option value="file">{V01_MODE_LABEL}</option>
          </select>
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700 dark:text-slate-300">
          State
          <select {...selectProps(query.state ?? "", on?.state)} className={controlClass} data-testid="filter-state">
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
          <select {...selectProps(query.phase ?? "", on?.phase)} className={controlClass} data-testid="filter-phase">
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
            <select {...selectProps(query.sort, on?.sort)} className={controlClass} data-testid="sort">
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
            onClick={on?.dir}
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
              onClick={on?.clear}
              data-testid="clear-filters"
            >
              Clear filters
            </button>
          ) : null}
          <button
            type="button"
            aria-pressed={paused}
            onClick={on?.pause}
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
}
