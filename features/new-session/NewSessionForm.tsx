"use client";
// "New session": start a handoff or a task as the signed-in person — intent,
// scope, participants (people and agents from the directory, or a typed
// agent id), time to live, governance policy (default, lead approval with the
// approvers, or implicit accept after a timeout) and optional frozen context.
// Validated (lib/client/action-forms), authorized with decide() and sent once
// per attempt by useNewSessionForm (use-new-session-form.ts); the participants
// are ParticipantFields, who may commit PolicyChoiceFields.

import { LIMITS } from "@/lib/actions/rules";
import { jsonProblem } from "@/lib/client/action-forms";
import type { Directory } from "@/lib/views/directory";
import type { WhoAmI } from "@/lib/views/sign-in";
import { ActionResultLine, Button, Field, TextArea, TextInput } from "@/components/ui/forms";
import { PolicyChoiceFields, type PolicyOptions } from "@/features/hand-off/PolicyChoiceFields";
import { ParticipantFields } from "@/features/new-session/ParticipantFields";
import { useNewSessionForm } from "@/features/new-session/use-new-session-form";

const NEW_SESSION_POLICIES: PolicyOptions = [
  ["default", "Default", "Only you, the owner, commit the outcome."],
  ["approval", "Requires lead approval", "Only the approvers you pick may commit; your own commit is refused."],
  ["implicit", "Implicit accept", "An offer nobody answers within the timeout counts as accepted (handoffs only)."],
];

export function NewSessionForm({ me, directory }: { me: WhoAmI; directory: Directory }) {
  const f = useNewSessionForm(me, directory);
  const { v, set, errors, setErrors, action, canStart } = f;

  if (!canStart.allowed) {
    return (
      <p className="rounded-md border border-slate-300 px-3 py-2 text-sm dark:border-slate-700" data-testid="start-denied">
        {canStart.reason}
      </p>
    );
  }

  return (
    <form ref={f.formRef} onSubmit={f.form.onSubmit} noValidate className="space-y-6" data-testid="new-session-form">
      <fieldset className="space-y-2">
        <legend className="text-sm font-medium">Kind</legend>
        <div className="flex flex-wrap gap-2">
          {(["handoff", "task"] as const).map((k) => (
            <label
              key={k}
              className="flex cursor-pointer items-center gap-2 rounded-md border border-slate-300 px-3 py-2 text-sm has-[:checked]:border-blue-700 has-[:checked]:bg-blue-50 dark:border-slate-600 dark:has-[:checked]:border-sky-300 dark:has-[:checked]:bg-slate-800"
            >
              <input
                type="radio"
                name="kind"
                value={k}
                checked={v.kind === k}
                onChange={() => f.chooseKind(k)}
                className="accent-blue-700 dark:accent-sky-300"
              />
              <span>
                <span className="font-semibold">{k === "handoff" ? "Handoff" : "Task"}</span>
                <span className="block text-xs text-slate-700 dark:text-slate-300">
                  {k === "handoff" ? "Hand a responsibility to someone" : "Ask someone to do one piece of work"}
                </span>
              </span>
            </label>
          ))}
        </div>
      </fieldset>

      <Field
        id="ns-intent"
        label="What is it for?"
        error={errors.intent}
        hint="People see this first, e.g. “payments-api on-call rotation”."
      >
        <TextInput
          id="ns-intent"
          data-field="intent"
          value={v.intent}
          onChange={(e) => set("intent", e.currentTarget.value)}
          invalid={Boolean(errors.intent)}
          hasHint
          maxLength={600}
        />
      </Field>

      {v.kind === "handoff" ? (
        <Field
          id="ns-scope"
          label="Scope"
          optional
          error={errors.scope}
          hint="What moves with the handoff; offers use it unless they name another."
        >
          <TextInput
            id="ns-scope"
            data-field="scope"
            value={v.scope}
            onChange={(e) => set("scope", e.currentTarget.value)}
            invalid={Boolean(errors.scope)}
            hasHint
          />
        </Field>
      ) : null}

      <ParticipantFields
        me={me.participantId}
        choices={f.choices}
        participants={v.participants}
        typed={f.typed}
        setTyped={f.setTyped}
        addTyped={f.addTyped}
        toggle={f.toggle}
        error={errors.participants}
      />

      <Field
        id="ns-ttl"
        label="Time to live (minutes)"
        error={errors.ttlMinutes}
        hint="The session expires if nobody commits it by then; at most 1440 (24 hours)."
      >
        <TextInput
          id="ns-ttl"
          data-field="ttlMinutes"
          inputMode="numeric"
          className="max-w-32"
          value={v.ttlMinutes}
          onChange={(e) => set("ttlMinutes", e.currentTarget.value)}
          invalid={Boolean(errors.ttlMinutes)}
          hasHint
        />
      </Field>

      <PolicyChoiceFields
        idPrefix="ns"
        name="policy"
        options={NEW_SESSION_POLICIES}
        values={v}
        errors={errors}
        approvers={f.approvers}
        set={set}
        disabled={(k) => k === "implicit" && v.kind === "task"}
        showApproverRole
      />

      <Field
        id="ns-context"
        label="Frozen context (JSON)"
        optional
        error={errors.frozenContext}
        hint="Kept with the session as it was at the start, e.g. an incident snapshot."
      >
        <TextArea
          id="ns-context"
          data-field="frozenContext"
          value={v.frozenContext}
          spellCheck={false}
          className="font-mono text-xs"
          placeholder='{"incident": "INC-4821"}'
          onChange={(e) => set("frozenContext", e.currentTarget.value)}
          onBlur={() => {
            const problem = jsonProblem(v.frozenContext, LIMITS.frozenContextBytes);
            if (problem) setErrors((e) => ({ ...e, frozenContext: problem }));
          }}
          invalid={Boolean(errors.frozenContext)}
          hasHint
        />
      </Field>

      <div className="space-y-3">
        <Button
          type="submit"
          variant="primary"
          pending={action.state.pending}
          aria-disabled={action.state.pending ? true : undefined}
          data-testid="start-session"
        >
          {action.state.pending ? "Starting…" : `Start ${v.kind}`}
        </Button>
        <ActionResultLine outcome={action.state.outcome} sentence={action.state.sentence} />
      </div>
    </form>
  );
}
