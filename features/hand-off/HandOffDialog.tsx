"use client";
// "Hand off…": one dialog in which a signed-in person hands a responsibility
// to someone in one go — who takes it over (people by name from the
// directory, or an agent), who else is on the rotation (joins the session, so
// it can be re-offered to them after a decline), scope, reason, the runbook (written here or read
// from a .md/.txt file), who may commit, and the time to live. Pressing
// "Hand off" sends SessionStart, the Offer and the runbook as Context, in that
// order, as the person (features/hand-off/hand-off.ts, one attempt's ids fixed for
// its life). After a partial failure it says what was sent and what was not
// and offers "Finish handing off"; on success it opens the session. Saved
// templates prefill it for recurring rotations.
//
// A native modal <dialog>: focus stays inside, Esc closes it (except while
// sending), focus starts on the first field; full screen on phones. The state
// and steps are useHandOffDialog (use-hand-off-dialog.ts); the parts are
// HandOffFields, HandOffTemplates and HandOffFooter.

import clsx from "clsx";
import { useEffect, useId, useRef } from "react";
import { LIMITS } from "@/lib/actions/rules";
import { Icon } from "@/components/ui/Icon";
import { Field, TextArea, TextInput } from "@/components/ui/forms";
import { EscalationFields } from "@/features/hand-off/EscalationFields";
import { PolicyChoiceFields, type PolicyOptions } from "@/features/hand-off/PolicyChoiceFields";
import { RotationField, RunbookField, TargetFields } from "@/features/hand-off/HandOffFields";
import { SaveTemplateRow, TemplatePicker } from "@/features/hand-off/HandOffTemplates";
import { HandOffFooter } from "@/features/hand-off/HandOffFooter";
import { useHandOffDialog, type HandOffDialogProps } from "@/features/hand-off/use-hand-off-dialog";

const HAND_OFF_POLICIES: PolicyOptions = [
  ["default", "You", "You confirm the outcome once they answer."],
  ["approval", "Lead approval", "An approver you pick confirms it; your own commit is refused."],
  ["implicit", "Implicit accept", "No answer within the timeout counts as accepted."],
];

export function HandOffDialog({ onClose, ...props }: HandOffDialogProps) {
  const ref = useRef<HTMLDialogElement | null>(null);
  const titleId = useId();
  const s = useHandOffDialog(props);
  const { v, set, errors, locked, handOff, template } = s;

  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    // showModal() focuses the first focusable element (the close button); start on the first field instead.
    d?.querySelector<HTMLElement>("#ho-target")?.focus();
    return () => {
      if (d?.open) d.close();
    };
  }, []);

  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        if (!handOff.state.pending) onClose();
      }}
      className={clsx(
        "m-0 h-dvh max-h-none w-full max-w-none bg-white p-0 text-slate-900 backdrop:bg-slate-950/60 dark:bg-slate-900 dark:text-slate-100",
        "sm:m-auto sm:h-auto sm:max-h-[calc(100dvh-3rem)] sm:w-[min(44rem,calc(100vw-3rem))] sm:rounded-lg sm:border sm:border-slate-300 sm:shadow-xl dark:sm:border-slate-700",
      )}
      data-testid="hand-off-dialog"
    >
      <form ref={s.formRef} onSubmit={s.submit} noValidate className="flex h-full flex-col sm:max-h-[calc(100dvh-3rem)]">
        <div className="flex items-center gap-2 border-b border-slate-200 px-4 py-3 dark:border-slate-800">
          <h2 id={titleId} className="text-lg font-semibold">
            Hand off
          </h2>
          <button
            type="button"
            onClick={onClose}
            disabled={handOff.state.pending}
            className="ml-auto rounded-md p-1.5 text-slate-700 hover:bg-slate-100 disabled:opacity-60 dark:text-slate-300 dark:hover:bg-slate-800"
            aria-label="Close"
            data-testid="hand-off-close"
          >
            <Icon name="x" className="h-5 w-5" />
          </button>
        </div>

        <div className="min-h-0 flex-1 space-y-5 overflow-y-auto px-4 py-4">
          <TemplatePicker templates={props.templates} template={template} locked={locked} />

          <fieldset disabled={locked} className="space-y-5">
            <legend className="sr-only">The handoff</legend>
            <TargetFields
              target={v.target}
              otherTarget={s.otherTarget}
              error={errors.target}
              choices={s.choices}
              directory={props.directory}
              onChoose={s.chooseTarget}
              onType={(id) => set("target", id)}
            />

            <RotationField
              target={v.target}
              rotation={v.rotation ?? []}
              people={s.choices.people}
              directory={props.directory}
              error={errors.rotation}
              onChange={(ids) => set("rotation", ids)}
            />

            <Field
              id="ho-scope"
              label="What you hand over"
              error={errors.scope}
              hint="The scope, e.g. “payments-api primary on-call”. It also names the session."
            >
              <TextInput
                id="ho-scope"
                data-field="scope"
                value={v.scope}
                onChange={(e) => set("scope", e.currentTarget.value)}
                invalid={Boolean(errors.scope)}
                hasHint
                maxLength={LIMITS.scope + 50}
              />
            </Field>

            <Field id="ho-reason" label="Reason" optional error={errors.reason}>
              <TextArea
                id="ho-reason"
                data-field="reason"
                rows={2}
                value={v.reason}
                onChange={(e) => set("reason", e.currentTarget.value)}
                invalid={Boolean(errors.reason)}
              />
            </Field>

            <RunbookField
              v={v}
              errors={errors}
              locked={locked}
              room={s.room}
              bytes={s.runbookBytes}
              targetName={s.targetName}
              onChange={(md) => set("runbook", md)}
              onFile={(f) => void s.readFile(f)}
            />

            <PolicyChoiceFields
              idPrefix="ho"
              name="ho-policy"
              options={HAND_OFF_POLICIES}
              values={v}
              errors={errors}
              approvers={s.approvers}
              set={set}
              testIdPrefix="hand-off"
            />

            <Field
              id="ho-ttl"
              label="Time to live (minutes)"
              error={errors.ttlMinutes}
              hint="The session expires if nobody commits it by then; at most 1440 (24 hours)."
            >
              <TextInput
                id="ho-ttl"
                data-field="ttlMinutes"
                inputMode="numeric"
                className="max-w-32"
                value={v.ttlMinutes}
                onChange={(e) => set("ttlMinutes", e.currentTarget.value)}
                invalid={Boolean(errors.ttlMinutes)}
                hasHint
              />
            </Field>

            <EscalationFields
              v={v}
              errors={errors}
              approvers={s.approvers}
              people={s.choices.people}
              set={set}
              onToggle={s.toggleEscalation}
            />
          </fieldset>

          {template.savingOpen && !locked ? <SaveTemplateRow template={template} error={errors.templateName} /> : null}
        </div>

        <HandOffFooter s={s} onClose={onClose} />
      </form>
    </dialog>
  );
}
