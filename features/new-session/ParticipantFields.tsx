"use client";
// The "New session" form's participants: people and agents seen recently from
// the directory (checkbox rows), or an agent id typed in and added; typed ids
// are listed with a button to remove each. The values and the problem are
// the form's (use-new-session-form.ts).

import type { participantChoices } from "@/lib/views/directory";
import { ROLE_LABELS } from "@/lib/views/sign-in";
import { Icon } from "@/components/ui/Icon";
import { Button, CheckRow, inputClass } from "@/components/ui/forms";

export function ParticipantFields({
  me,
  choices,
  participants,
  typed,
  setTyped,
  addTyped,
  toggle,
  error,
}: {
  /** The person starting the session (the owner, always a participant). */
  me: string;
  choices: ReturnType<typeof participantChoices>;
  participants: readonly string[];
  /** The agent id being typed. */
  typed: string;
  setTyped(id: string): void;
  addTyped(): void;
  toggle(id: string, on: boolean): void;
  error: string | undefined;
}) {
  const typedIds = participants.filter((p) => !choices.people.some((u) => u.participantId === p) && !choices.agents.includes(p));
  return (
    <fieldset className="space-y-2" aria-describedby={error ? "ns-participants-error" : "ns-participants-hint"}>
      <legend className="text-sm font-medium">Participants</legend>
      <p id="ns-participants-hint" className="text-xs text-slate-600 dark:text-slate-400">
        You ({me}) take part as the owner. Pick people and agents, or type an agent id.
      </p>
      {choices.people.length > 0 ? (
        <div>
          <p className="px-2 text-xs font-semibold text-slate-700 uppercase dark:text-slate-300">People</p>
          <ul className="grid gap-0.5 sm:grid-cols-2" data-testid="participant-people">
            {choices.people.map((p) => (
              <CheckRow
                key={p.participantId}
                id={`ns-p-${p.username}`}
                checked={participants.includes(p.participantId)}
                onChange={(on) => toggle(p.participantId, on)}
              >
                <span className="font-medium">{p.displayName}</span>{" "}
                <span className="text-xs text-slate-700 dark:text-slate-300">
                  {ROLE_LABELS[p.role]} · <span className="font-mono">{p.participantId}</span>
                </span>
              </CheckRow>
            ))}
          </ul>
        </div>
      ) : null}
      {choices.agents.length > 0 ? (
        <div>
          <p className="px-2 text-xs font-semibold text-slate-700 uppercase dark:text-slate-300">Agents seen recently</p>
          <ul className="grid gap-0.5 sm:grid-cols-2">
            {choices.agents.slice(0, 12).map((a, i) => (
              <CheckRow key={a} id={`ns-a-${i}`} checked={participants.includes(a)} onChange={(on) => toggle(a, on)}>
                <span className="font-mono text-xs break-all">{a}</span>
              </CheckRow>
            ))}
          </ul>
        </div>
      ) : null}
      <div className="flex flex-wrap items-end gap-2">
        <div className="min-w-0 flex-1 space-y-1">
          <label htmlFor="ns-typed" className="block text-xs font-medium text-slate-700 dark:text-slate-300">
            Agent id
          </label>
          <input
            id="ns-typed"
            data-field="participants"
            className={inputClass}
            value={typed}
            placeholder="agent://team/name"
            onChange={(e) => setTyped(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter") {
                e.preventDefault();
                addTyped();
              }
            }}
            spellCheck={false}
            autoCapitalize="none"
          />
        </div>
        <Button onClick={addTyped} data-testid="add-participant">
          Add
        </Button>
      </div>
      {typedIds.length > 0 ? (
        <ul className="flex flex-wrap gap-1.5" aria-label="Typed participant ids">
          {typedIds.map((id) => (
            <li
              key={id}
              className="inline-flex items-center gap-1 rounded-full bg-slate-100 py-0.5 pr-1 pl-2.5 font-mono text-xs dark:bg-slate-800"
            >
              {id}
              <button
                type="button"
                onClick={() => toggle(id, false)}
                className="rounded-full p-0.5 hover:bg-slate-200 dark:hover:bg-slate-700"
                aria-label={`Remove ${id}`}
              >
                <Icon name="x" className="h-3 w-3" />
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {error ? (
        <p
          id="ns-participants-error"
          className="flex items-start gap-1 text-xs font-medium text-red-800 dark:text-red-300"
          data-field-error
        >
          <Icon name="alert" className="mt-px h-3.5 w-3.5" /> {error}
        </p>
      ) : null}
    </fieldset>
  );
}
