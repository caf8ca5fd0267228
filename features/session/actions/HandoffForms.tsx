"use client";
// Forms for handoff actions: offer, accept / decline, and commit (confirmed).
// Attaching context is AttachForm.tsx, cancelling (shared with tasks)
// CancelForm.tsx. Each validates with lib/client/action-forms and runs the one
// form sequence of lib/client/use-action-form.ts (one message_id per attempt).

import { useState } from "react";
import { decide } from "@/lib/authz/decide";
import { validateCommit, validateOffer, validateReason } from "@/lib/client/action-forms";
import { commitDefaults, pendingOfferOf } from "@/features/session/session-authz";
import { actionClient } from "@/lib/client/transport";
import { mapValidation, useActionForm } from "@/lib/client/use-action-form";
import { ConfirmDialog } from "@/components/ui/ConfirmDialog";
import { Field, TextInput } from "@/components/ui/forms";
import { FormShell, type SessionFormProps } from "@/features/session/actions/FormShell";
import { AuthorityScopeField, OutcomeChoice, ParticipantSelect, TextAreaField } from "@/features/session/actions/fields";

// ------------------------------------------------------------------- offer

export function OfferForm({ sessionId, view, me, ctx, nameOf, onClose, onDone }: SessionFormProps) {
  const targets = view.participants.filter((p) => p !== me.participantId);
  const [target, setTarget] = useState(targets.length === 1 ? (targets[0] ?? "") : "");
  const [scope, setScope] = useState("");
  const [reason, setReason] = useState("");
  const form = useActionForm({
    done: `Offer sent to ${target ? nameOf(target) : "the target"}`,
    onOk: () => onDone(`Offer sent to ${nameOf(target)}.`),
    validate: () => {
      const checked = validateOffer({ target, scope, reason });
      if (!checked.ok) return checked;
      const d = decide(me, view, "offer", { ...ctx, offer: { target: checked.value.target } });
      if (!d.allowed) return { ok: false, errors: { target: d.reason } };
      return { ok: true, value: { sessionId, ...checked.value } };
    },
    send: (fields, messageId) => actionClient().offer({ ...fields, messageId }),
  });
  const { errors } = form;

  return (
    <FormShell
      title="Offer the handoff"
      onSubmit={form.onSubmit}
      onClose={onClose}
      state={form.state}
      submitLabel="Send offer"
      pendingLabel="Sending…"
      testId="offer-form"
    >
      <ParticipantSelect
        id="offer-target"
        label="To"
        none="Choose who receives it…"
        choices={targets}
        nameOf={nameOf}
        value={target}
        onChange={setTarget}
        error={errors.target}
      />
      <Field id="offer-scope" label="Scope" optional hint="What moves; the session's scope when empty." error={errors.scope}>
        <TextInput
          id="offer-scope"
          value={scope}
          onChange={(e) => setScope(e.currentTarget.value)}
          invalid={Boolean(errors.scope)}
          hasHint
        />
      </Field>
      <TextAreaField id="offer-reason" optional value={reason} onChange={setReason} error={errors.reason} />
    </FormShell>
  );
}

// ---------------------------------------------------------- accept/decline

export function RespondForm({ kind, sessionId, view, nameOf, onClose, onDone }: SessionFormProps & { kind: "accept" | "decline" }) {
  const pending = pendingOfferOf(view);
  const [reason, setReason] = useState("");
  const verb = kind === "accept" ? "Accepted" : "Declined";
  const form = useActionForm({
    done: `${verb} the offer`,
    onOk: () => onDone(`${verb} the offer${pending ? ` from ${nameOf(pending.offeredBy)}` : ""}.`),
    validate: () =>
      mapValidation(validateReason(reason, kind === "decline"), (v) => ({
        sessionId,
        handoffId: pending?.handoffId ?? "",
        reason: v.reason,
      })),
    fingerprint: (fields) => ({ kind, ...fields }),
    send: (fields, messageId) => {
      const client = actionClient();
      return kind === "accept" ? client.accept({ ...fields, messageId }) : client.decline({ ...fields, messageId });
    },
  });
  const { errors } = form;

  return (
    <FormShell
      title={kind === "accept" ? "Accept the offer" : "Decline the offer"}
      description={
        pending ? (
          <>
            {nameOf(pending.offeredBy)} offers you <strong>{pending.scope || view.intent}</strong>.
          </>
        ) : null
      }
      onSubmit={form.onSubmit}
      onClose={onClose}
      state={form.state}
      submitLabel={kind === "accept" ? "Accept" : "Decline"}
      pendingLabel={kind === "accept" ? "Accepting…" : "Declining…"}
      submitVariant={kind === "accept" ? "primary" : "danger"}
      testId={`${kind}-form`}
    >
      <TextAreaField
        id={`${kind}-reason`}
        optional={kind === "accept"}
        hint={kind === "decline" ? "The owner reads this when choosing whom to offer it next." : undefined}
        value={reason}
        onChange={setReason}
        error={errors.reason}
      />
    </FormShell>
  );
}

// ------------------------------------------------------------------ commit

export function CommitForm({ sessionId, view, nameOf, onClose, onDone }: SessionFormProps) {
  const defaults = commitDefaults(view, nameOf);
  const offers = view.handoff?.offers ?? [];
  const accepted = offers.find((o) => o.status === "accepted");
  const newOwner = (accepted ?? pendingOfferOf(view))?.target;
  const [outcome, setOutcome] = useState<"accepted" | "declined">(defaults.outcome);
  const [scope, setScope] = useState(defaults.scope);
  const [reason, setReason] = useState(defaults.reason);
  const [edited, setEdited] = useState(false);
  const form = useActionForm({
    done: `Handoff committed as ${outcome}`,
    onOk: () => onDone(`Handoff committed as ${outcome}.`),
    confirm: true,
    validate: () => mapValidation(validateCommit({ outcome, authorityScope: scope, reason }), (v) => ({ sessionId, ...v })),
    send: (fields, messageId) => actionClient().commit({ ...fields, messageId }),
  });
  const { errors } = form;

  const choose = (o: "accepted" | "declined"): void => {
    setOutcome(o);
    if (!edited) {
      const scopeText = scope || view.intent;
      setReason(
        o === "accepted" && newOwner
          ? `${nameOf(newOwner)} (${newOwner}) takes over ${scopeText}.`
          : `The handoff was declined; ${nameOf(view.initiator)} (${view.initiator}) keeps ${scopeText}.`,
      );
    }
  };

  return (
    <>
      <FormShell
        title="Commit the handoff"
        description="Binds the outcome and closes the session."
        onSubmit={form.onSubmit}
        onClose={onClose}
        state={form.state}
        submitLabel="Review and commit…"
        pendingLabel="Committing…"
        testId="commit-form"
      >
        <OutcomeChoice
          name="commit-outcome"
          value={outcome}
          onChange={choose}
          options={[
            {
              value: "accepted",
              label: "Accepted",
              hint: newOwner ? `${nameOf(newOwner)} becomes the owner.` : "No offer was accepted.",
              disabled: !newOwner,
            },
            { value: "declined", label: "Declined", hint: `${nameOf(view.initiator)} keeps it.` },
          ]}
        />
        <AuthorityScopeField id="commit-scope" value={scope} onChange={setScope} error={errors.authorityScope} />
        <TextAreaField
          id="commit-reason"
          hint="Name the new owner; it goes into the audit trail."
          value={reason}
          onChange={(x) => {
            setEdited(true);
            setReason(x);
          }}
          error={errors.reason}
        />
      </FormShell>
      <ConfirmDialog
        open={form.confirming}
        title={`Commit this handoff as ${outcome}?`}
        confirmLabel="Commit"
        pending={form.state.pending}
        onConfirm={form.confirm}
        onClose={form.cancelConfirm}
        testId="commit-confirm"
      >
        <p>
          {outcome === "accepted" && newOwner ? (
            <>
              <strong>{nameOf(newOwner)}</strong> ({newOwner}) becomes the owner of <strong>{scope || view.intent}</strong>.
            </>
          ) : (
            <>
              <strong>{nameOf(view.initiator)}</strong> keeps <strong>{scope || view.intent}</strong>.
            </>
          )}
        </p>
        <p>This is final: the session closes and nothing more can happen in it.</p>
        {reason.trim() ? <p className="text-slate-700 dark:text-slate-300">Reason: “{reason.trim()}”</p> : null}
      </ConfirmDialog>
    </>
  );
}
