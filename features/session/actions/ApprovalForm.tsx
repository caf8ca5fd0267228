"use client";
// The approver's card actions under lead approval: Approve commits the
// accepted offer ("Bob takes over payments-api on-call"), Reject commits the
// negative outcome ("Alice keeps payments-api on-call"). The outcome comes
// from the button, the authority scope from the bound policy: neither is
// asked for. The reason is prefilled and can be edited; both are confirmed
// before they are sent, since a commitment closes the session.

import { useState } from "react";
import { validateCommit } from "@/lib/client/action-forms";
import { approvalFacts } from "@/features/session/session-authz";
import { actionClient } from "@/lib/client/transport";
import { mapValidation, useActionForm } from "@/lib/client/use-action-form";
import { ConfirmDialog } from "@/components/ui/ConfirmDialog";
import { FormShell, type SessionFormProps } from "@/features/session/actions/FormShell";
import { TextAreaField } from "@/features/session/actions/fields";

export type ApprovalDecision = "approve" | "reject";

export function ApprovalForm({
  sessionId,
  view,
  nameOf,
  decision,
  policyId,
  onClose,
  onDone,
}: SessionFormProps & { decision: ApprovalDecision; policyId: string | null }) {
  const facts = approvalFacts(view, nameOf, decision, policyId);
  const [reason, setReason] = useState(facts.reason);
  const form = useActionForm({
    done: decision === "approve" ? "Handoff approved" : "Handoff rejected",
    onOk: () => onDone(decision === "approve" ? `Approved: ${facts.sentence}` : `Rejected: ${facts.sentence}`),
    confirm: true,
    validate: () =>
      mapValidation(
        validateCommit({ outcome: decision === "approve" ? "accepted" : "declined", authorityScope: facts.authorityScope, reason }),
        (v) => ({ sessionId, ...v }),
      ),
    send: (fields, messageId) => actionClient().commit({ ...fields, messageId }),
  });
  const { errors } = form;

  const verb = decision === "approve" ? "Approve" : "Reject";
  return (
    <>
      <FormShell
        title={decision === "approve" ? "Approve the handoff" : "Reject the handoff"}
        description={facts.sentence}
        onSubmit={form.onSubmit}
        onClose={onClose}
        state={form.state}
        submitLabel={`${verb}…`}
        pendingLabel={decision === "approve" ? "Approving…" : "Rejecting…"}
        submitVariant={decision === "approve" ? "primary" : "danger"}
        testId={`${decision}-form`}
      >
        <TextAreaField
          id={`${decision}-reason`}
          hint="Goes into the audit trail with your name."
          value={reason}
          onChange={setReason}
          error={errors.reason}
        />
      </FormShell>
      <ConfirmDialog
        open={form.confirming}
        title={decision === "approve" ? "Approve this handoff?" : "Reject this handoff?"}
        confirmLabel={verb}
        variant={decision === "approve" ? "primary" : "danger"}
        pending={form.state.pending}
        onConfirm={form.confirm}
        onClose={form.cancelConfirm}
        testId={`${decision}-confirm`}
      >
        <p>
          <strong>{facts.sentence}</strong>
        </p>
        <p>This is final: your decision is committed and the session closes.</p>
        {reason.trim() ? <p className="text-slate-700 dark:text-slate-300">Reason: “{reason.trim()}”</p> : null}
      </ConfirmDialog>
    </>
  );
}
