"use client";
// The hand-off dialog's "Escalation" group: whether to escalate an unanswered
// offer, whom to tell and after how long, and whom to re-offer it to and
// after how long more. The values and problems are the dialog's (its
// HandOffValues and Errors); this only draws them.

import { type Errors, type HandOffValues } from "@/lib/client/action-forms";
import { ROLE_LABELS } from "@/lib/views/sign-in";
import type { Person } from "@/lib/views/directory";
import { CheckRow, Field, Select, TextInput } from "@/components/ui/forms";

type MinutesKey = "escalateNotifyMinutes" | "escalateReofferMinutes";

/** A number of minutes, as the escalation steps take them. */
function MinutesField({
  id,
  field,
  label,
  value,
  error,
  onChange,
  testId,
}: {
  id: string;
  field: MinutesKey;
  label: string;
  value: string | undefined;
  error: string | undefined;
  onChange(value: string): void;
  testId: string;
}) {
  return (
    <Field id={id} label={label} error={error}>
      <TextInput
        id={id}
        data-field={field}
        inputMode="numeric"
        className="max-w-32"
        value={value ?? ""}
        onChange={(e) => onChange(e.currentTarget.value)}
        invalid={Boolean(error)}
        data-testid={testId}
      />
    </Field>
  );
}

export function EscalationFields({
  v,
  errors,
  approvers,
  people,
  set,
  onToggle,
}: {
  v: HandOffValues;
  errors: Errors;
  /** Approver accounts, who may be told. */
  approvers: readonly Person[];
  /** People the offer may be re-offered to (the target is left out here). */
  people: readonly Person[];
  set<K extends keyof HandOffValues>(key: K, value: HandOffValues[K]): void;
  /** The "Escalate if nobody answers" box was ticked or cleared. */
  onToggle(on: boolean): void;
}) {
  return (
    <fieldset className="space-y-3 rounded-md border border-slate-300 p-3 dark:border-slate-700" data-testid="hand-off-escalation">
      <legend className="px-1 text-sm font-medium">Escalation</legend>
      <label className="flex cursor-pointer items-start gap-2 text-sm">
        <input
          type="checkbox"
          data-field="escalate"
          checked={v.escalate === true}
          onChange={(e) => onToggle(e.currentTarget.checked)}
          className="mt-0.5 h-4 w-4 accent-blue-700 dark:accent-sky-300"
          aria-describedby="ho-escalate-hint"
          data-testid="hand-off-escalate"
        />
        <span>
          <span className="font-medium">Escalate if nobody answers</span>
          <span id="ho-escalate-hint" className="block text-xs text-slate-700 dark:text-slate-300">
            Baton acts for you, as you, while the offer is unanswered; it stops as soon as anyone answers, and you can cancel it from the
            session.
          </span>
        </span>
      </label>
      {v.escalate === true ? (
        <div className="space-y-3 sm:ml-6">
          <fieldset className="space-y-1">
            <legend className="text-sm font-medium">1. Tell</legend>
            {approvers.length === 0 ? (
              <p className="text-xs text-slate-700 dark:text-slate-300">No approver accounts to tell.</p>
            ) : (
              <ul className="grid gap-0.5 sm:grid-cols-2">
                {approvers.map((p, i) => (
                  <CheckRow
                    key={p.participantId}
                    field={i === 0 ? "escalateNotify" : undefined}
                    checked={(v.escalateNotify ?? []).includes(p.participantId)}
                    onChange={(on) => {
                      const now = (v.escalateNotify ?? []).filter((x) => x !== p.participantId);
                      set("escalateNotify", on ? [...now, p.participantId] : now);
                    }}
                    testId={`hand-off-escalate-notify-${p.username}`}
                  >
                    <span className="font-medium">{p.displayName}</span>
                  </CheckRow>
                ))}
              </ul>
            )}
            {errors.escalateNotify ? (
              <p className="text-xs font-medium text-red-800 dark:text-red-300" data-field-error>
                {errors.escalateNotify}
              </p>
            ) : null}
            <MinutesField
              id="ho-esc-notify-minutes"
              field="escalateNotifyMinutes"
              label="after this many minutes unanswered"
              value={v.escalateNotifyMinutes}
              error={errors.escalateNotifyMinutes}
              onChange={(x) => set("escalateNotifyMinutes", x)}
              testId="hand-off-escalate-notify-minutes"
            />
          </fieldset>
          <Field
            id="ho-esc-reoffer"
            label="2. Then re-offer it to"
            error={errors.escalateReofferTo}
            hint="The unanswered session is closed and the same handoff, with its runbook, goes to them in a new session."
          >
            <Select
              id="ho-esc-reoffer"
              data-field="escalateReofferTo"
              value={v.escalateReofferTo ?? ""}
              hasHint
              invalid={Boolean(errors.escalateReofferTo)}
              onChange={(e) => set("escalateReofferTo", e.currentTarget.value)}
              data-testid="hand-off-escalate-reoffer"
            >
              <option value="">Nobody (only tell)</option>
              {people
                .filter((p) => p.participantId !== v.target)
                .map((p) => (
                  <option key={p.participantId} value={p.participantId}>
                    {p.displayName} ({ROLE_LABELS[p.role]})
                  </option>
                ))}
            </Select>
          </Field>
          {(v.escalateReofferTo ?? "") !== "" ? (
            <MinutesField
              id="ho-esc-reoffer-minutes"
              field="escalateReofferMinutes"
              label="after this many more minutes"
              value={v.escalateReofferMinutes}
              error={errors.escalateReofferMinutes}
              onChange={(x) => set("escalateReofferMinutes", x)}
              testId="hand-off-escalate-reoffer-minutes"
            />
          ) : null}
          {errors.escalate ? (
            <p className="text-xs font-medium text-red-800 dark:text-red-300" data-field-error>
              {errors.escalate}
            </p>
          ) : null}
        </div>
      ) : null}
    </fieldset>
  );
}
