"use client";
// "Who may commit": the governance policy a new session is started under —
// the owner (default), lead approval with the approvers picked here, or
// implicit accept after a timeout. One group for the hand-off dialog and the
// "New session" form; each passes its own wording, ids and test ids. The
// values and problems are the form's (lib/client/action-forms); this only
// draws them.

import type { Errors, NewSessionValues, PolicyKind } from "@/lib/client/action-forms";
import { ROLE_LABELS } from "@/lib/views/sign-in";
import type { Person } from "@/lib/views/directory";
import { CheckRow, Field, TextInput } from "@/components/ui/forms";

export type PolicyValues = Pick<NewSessionValues, "policy" | "approvers" | "implicitAcceptSeconds">;

/** Each choice: its value, its label and the sentence under it. */
export type PolicyOptions = readonly (readonly [PolicyKind, string, string])[];

export function PolicyChoiceFields({
  idPrefix,
  name,
  options,
  values,
  errors,
  approvers,
  set,
  disabled,
  testIdPrefix,
  showApproverRole = false,
}: {
  /** Prefix of the inputs' ids ("ho", "ns"). */
  idPrefix: string;
  /** The radio group's name. */
  name: string;
  options: PolicyOptions;
  values: PolicyValues;
  errors: Errors;
  /** Approver accounts, who may be picked under lead approval. */
  approvers: readonly Person[];
  set<K extends keyof PolicyValues>(key: K, value: PolicyValues[K]): void;
  /** A choice that does not apply (implicit accept for tasks). */
  disabled?: (kind: PolicyKind) => boolean;
  /** Test ids: `${testIdPrefix}-policy-${kind}` and `${testIdPrefix}-approver-${username}`. */
  testIdPrefix?: string;
  /** Name each approver's role after their name. */
  showApproverRole?: boolean;
}) {
  const toggleApprover = (id: string, on: boolean): void => {
    const rest = values.approvers.filter((x) => x !== id);
    set("approvers", on ? [...rest, id] : rest);
  };
  const approversError = `${idPrefix}-approvers-error`;
  return (
    <fieldset className="space-y-2">
      <legend className="text-sm font-medium">Who may commit</legend>
      {options.map(([k, label, hint]) => (
        <div key={k} className="space-y-2">
          <label className="flex cursor-pointer items-start gap-2 text-sm has-[:disabled]:cursor-not-allowed has-[:disabled]:opacity-70">
            <input
              type="radio"
              name={name}
              value={k}
              data-field={k === "default" ? "policy" : undefined}
              checked={values.policy === k}
              disabled={disabled?.(k) ?? false}
              onChange={() => set("policy", k)}
              className="mt-0.5 accent-blue-700 dark:accent-sky-300"
              data-testid={testIdPrefix ? `${testIdPrefix}-policy-${k}` : undefined}
            />
            <span>
              <span className="font-medium">{label}</span>
              <span className="block text-xs text-slate-700 dark:text-slate-300">{hint}</span>
            </span>
          </label>
          {k === "approval" && values.policy === "approval" ? (
            <fieldset className="ml-6 space-y-1" aria-describedby={errors.approvers ? approversError : undefined}>
              <legend className="text-sm font-medium">Approvers</legend>
              {approvers.length === 0 ? (
                <p className="text-xs text-slate-700 dark:text-slate-300">
                  No approver accounts yet; an admin adds them with npm run users.
                </p>
              ) : (
                <ul className="grid gap-0.5 sm:grid-cols-2" data-testid="approver-choices">
                  {approvers.map((p, i) => (
                    <CheckRow
                      key={p.participantId}
                      id={`${idPrefix}-ap-${p.username}`}
                      field={i === 0 ? "approvers" : undefined}
                      checked={values.approvers.includes(p.participantId)}
                      onChange={(on) => toggleApprover(p.participantId, on)}
                      {...(testIdPrefix ? { testId: `${testIdPrefix}-approver-${p.username}` } : {})}
                    >
                      <span className="font-medium">{p.displayName}</span>
                      {showApproverRole ? (
                        <>
                          {" "}
                          <span className="text-xs text-slate-700 dark:text-slate-300">{ROLE_LABELS[p.role]}</span>
                        </>
                      ) : null}
                    </CheckRow>
                  ))}
                </ul>
              )}
              {errors.approvers ? (
                <p id={approversError} className="text-xs font-medium text-red-800 dark:text-red-300" data-field-error>
                  {errors.approvers}
                </p>
              ) : null}
            </fieldset>
          ) : null}
          {k === "implicit" && values.policy === "implicit" ? (
            <Field
              id={`${idPrefix}-implicit`}
              label="Counts as accepted after (seconds)"
              error={errors.implicitAcceptSeconds}
              className="ml-6"
            >
              <TextInput
                id={`${idPrefix}-implicit`}
                data-field="implicitAcceptSeconds"
                inputMode="numeric"
                className="max-w-32"
                value={values.implicitAcceptSeconds}
                onChange={(e) => set("implicitAcceptSeconds", e.currentTarget.value)}
                invalid={Boolean(errors.implicitAcceptSeconds)}
              />
            </Field>
          ) : null}
        </div>
      ))}
      {errors.policy ? <p className="text-xs font-medium text-red-800 dark:text-red-300">{errors.policy}</p> : null}
    </fieldset>
  );
}
