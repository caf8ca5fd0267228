"use client";
// Cancel the session (handoffs and tasks alike): an optional reason, then a
// confirmation, since it ends the session for everyone with no outcome.

import { useState } from "react";
import { validateReason } from "@/lib/client/action-forms";
import { actionClient } from "@/lib/client/transport";
import { mapValidation, useActionForm } from "@/lib/client/use-action-form";
import { ConfirmDialog } from "@/components/ui/ConfirmDialog";
import { FormShell, type SessionFormProps } from "@/features/session/actions/FormShell";
import { TextAreaField } from "@/features/session/actions/fields";

export function CancelForm({ sessionId, view, onClose, onDone }: SessionFormProps) {
  const [reason, setReason] = useState("");
  const form = useActionForm({
    done: "Session cancelled",
    onOk: () => onDone("Session cancelled."),
    confirm: true,
    validate: () => mapValidation(validateReason(reason, false), (v) => ({ sessionId, reason: v.reason })),
    send: (fields, messageId) => actionClient().cancel({ ...fields, messageId }),
  });
  const { errors } = form;
  return (
    <>
      <FormShell
        title="Cancel the session"
        description="Ends the session without an outcome."
        onSubmit={form.onSubmit}
        onClose={onClose}
        state={form.state}
        submitLabel="Review and cancel…"
        pendingLabel="Cancelling…"
        submitVariant="danger"
        testId="cancel-form"
      >
        <TextAreaField id="cancel-reason" optional value={reason} onChange={setReason} error={errors.reason} />
      </FormShell>
      <ConfirmDialog
        open={form.confirming}
        title="Cancel this session?"
        confirmLabel="Cancel the session"
        variant="danger"
        pending={form.state.pending}
        onConfirm={form.confirm}
        onClose={form.cancelConfirm}
        testId="cancel-confirm"
      >
        <p>
          <strong>{view.intent || "This session"}</strong> ends now for everyone, with no outcome. This can’t be undone.
        </p>
      </ConfirmDialog>
    </>
  );
}
