"use client";
// Forms for task actions: request (title, instructions, assignee, input JSON,
// deadline), accept / reject, progress update, complete (output, summary),
// fail (error code, retryable), and commit (confirmed).

import { useState } from "react";
import {
  jsonProblem,
  validateReason,
  validateTaskComplete,
  validateTaskCommit,
  validateTaskFail,
  validateTaskRequest,
  validateTaskUpdate,
} from "@/lib/client/action-forms";
import { actionClient } from "@/lib/client/transport";
import { mapValidation, useActionForm } from "@/lib/client/use-action-form";
import { ConfirmDialog } from "@/components/ui/ConfirmDialog";
import { Field, TextArea, TextInput } from "@/components/ui/forms";
import { FormShell, type SessionFormProps } from "@/features/session/actions/FormShell";
import { AuthorityScopeField, OutcomeChoice, ParticipantSelect, TextAreaField } from "@/features/session/actions/fields";

export function TaskRequestForm({
  sessionId,
  view,
  me,
  nameOf,
  maxPayloadBytes,
  onClose,
  onDone,
}: SessionFormProps & { maxPayloadBytes: number }) {
  const others = view.participants.filter((p) => p !== me.participantId);
  const [title, setTitle] = useState(view.intent.slice(0, 200));
  const [instructions, setInstructions] = useState("");
  const [assignee, setAssignee] = useState(others.length === 1 ? (others[0] ?? "") : "");
  const [inputJson, setInputJson] = useState("");
  const [deadline, setDeadline] = useState("");
  const form = useActionForm({
    done: "Task requested",
    onOk: () => onDone(`Task requested${assignee ? ` from ${nameOf(assignee)}` : ""}.`),
    validate: () =>
      mapValidation(validateTaskRequest({ title, instructions, assignee, inputJson, deadline }, maxPayloadBytes, Date.now()), (v) => ({
        sessionId,
        ...v,
      })),
    send: (fields, messageId) => actionClient().taskRequest({ ...fields, messageId }),
  });
  const { errors, setErrors } = form;

  return (
    <FormShell
      title="Request the task"
      onSubmit={form.onSubmit}
      onClose={onClose}
      state={form.state}
      submitLabel="Request"
      pendingLabel="Requesting…"
      testId="task-request-form"
    >
      <Field id="tr-title" label="Title" error={errors.title}>
        <TextInput id="tr-title" value={title} onChange={(e) => setTitle(e.currentTarget.value)} invalid={Boolean(errors.title)} />
      </Field>
      <ParticipantSelect
        id="tr-assignee"
        label="Assignee"
        none="Anyone in the session but me"
        choices={others}
        nameOf={nameOf}
        value={assignee}
        onChange={setAssignee}
        error={errors.assignee}
      />
      <TextAreaField
        id="tr-instructions"
        label="Instructions"
        optional
        rows={3}
        value={instructions}
        onChange={setInstructions}
        error={errors.instructions}
      />
      <Field id="tr-input" label="Input (JSON)" optional error={errors.inputJson}>
        <TextArea
          id="tr-input"
          value={inputJson}
          onChange={(e) => setInputJson(e.currentTarget.value)}
          onBlur={() => {
            const p = jsonProblem(inputJson, maxPayloadBytes);
            if (p) setErrors((x) => ({ ...x, inputJson: p }));
          }}
          rows={3}
          className="font-mono text-xs"
          spellCheck={false}
          invalid={Boolean(errors.inputJson)}
        />
      </Field>
      <Field
        id="tr-deadline"
        label="Deadline"
        optional
        hint="For information; the session's time to live still applies."
        error={errors.deadline}
      >
        <TextInput
          id="tr-deadline"
          type="datetime-local"
          value={deadline}
          onChange={(e) => setDeadline(e.currentTarget.value)}
          invalid={Boolean(errors.deadline)}
          hasHint
          className="max-w-64"
        />
      </Field>
    </FormShell>
  );
}

export function TaskRespondForm({ kind, sessionId, view, onClose, onDone }: SessionFormProps & { kind: "accept" | "reject" }) {
  const task = view.task?.task;
  const [reason, setReason] = useState("");
  const verb = kind === "accept" ? "Took the task" : "Turned the task down";
  const form = useActionForm({
    done: verb,
    onOk: () => onDone(`${verb}.`),
    validate: () =>
      mapValidation(validateReason(reason, kind === "reject"), (v) => ({ sessionId, taskId: task?.taskId ?? "", reason: v.reason })),
    fingerprint: (fields) => ({ kind, ...fields }),
    send: (fields, messageId) => {
      const client = actionClient();
      return kind === "accept" ? client.taskAccept({ ...fields, messageId }) : client.taskReject({ ...fields, messageId });
    },
  });
  const { errors } = form;
  return (
    <FormShell
      title={kind === "accept" ? "Take the task" : "Turn the task down"}
      description={task ? <>“{task.title || task.taskId}”</> : null}
      onSubmit={form.onSubmit}
      onClose={onClose}
      state={form.state}
      submitLabel={kind === "accept" ? "Take it" : "Turn it down"}
      pendingLabel="Sending…"
      submitVariant={kind === "accept" ? "primary" : "danger"}
      testId={`task-${kind}-form`}
    >
      <TextAreaField id={`task-${kind}-reason`} optional={kind === "accept"} value={reason} onChange={setReason} error={errors.reason} />
    </FormShell>
  );
}

export function TaskUpdateForm({ sessionId, view, onClose, onDone }: SessionFormProps) {
  const task = view.task?.task;
  const [progress, setProgress] = useState(String(Math.round((task?.latestProgress ?? 0) * 100)));
  const [status, setStatus] = useState("in_progress");
  const [message, setMessage] = useState("");
  const form = useActionForm({
    done: `Progress reported: ${progress}%`,
    onOk: () => onDone(`Progress reported: ${progress}%.`),
    validate: () =>
      mapValidation(validateTaskUpdate({ progress, status, message }), (v) => ({ sessionId, taskId: task?.taskId ?? "", ...v })),
    send: (fields, messageId) => actionClient().taskUpdate({ ...fields, messageId }),
  });
  const { errors } = form;
  return (
    <FormShell
      title="Report progress"
      onSubmit={form.onSubmit}
      onClose={onClose}
      state={form.state}
      submitLabel="Report"
      pendingLabel="Reporting…"
      testId="task-update-form"
    >
      <div className="grid gap-4 sm:grid-cols-2">
        <Field id="tu-progress" label="Progress (%)" error={errors.progress}>
          <TextInput
            id="tu-progress"
            inputMode="decimal"
            value={progress}
            onChange={(e) => setProgress(e.currentTarget.value)}
            invalid={Boolean(errors.progress)}
          />
        </Field>
        <Field id="tu-status" label="Status" optional error={errors.status}>
          <TextInput id="tu-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)} invalid={Boolean(errors.status)} />
        </Field>
      </div>
      <TextAreaField id="tu-message" label="Message" optional value={message} onChange={setMessage} error={errors.message} />
    </FormShell>
  );
}

export function TaskCompleteForm({ sessionId, view, maxPayloadBytes, onClose, onDone }: SessionFormProps & { maxPayloadBytes: number }) {
  const task = view.task?.task;
  const [output, setOutput] = useState("");
  const [summary, setSummary] = useState("");
  const form = useActionForm({
    done: "Task completed",
    onOk: () => onDone("Task completed."),
    validate: () =>
      mapValidation(validateTaskComplete({ output, summary }, maxPayloadBytes), (v) => ({ sessionId, taskId: task?.taskId ?? "", ...v })),
    send: (fields, messageId) => actionClient().taskComplete({ ...fields, messageId }),
  });
  const { errors } = form;
  return (
    <FormShell
      title="Complete the task"
      onSubmit={form.onSubmit}
      onClose={onClose}
      state={form.state}
      submitLabel="Complete"
      pendingLabel="Completing…"
      testId="task-complete-form"
    >
      <TextAreaField id="tc-summary" label="Summary" value={summary} onChange={setSummary} error={errors.summary} />
      <Field id="tc-output" label="Output" optional hint="Text or JSON handed to the requester." error={errors.output}>
        <TextArea
          id="tc-output"
          value={output}
          onChange={(e) => setOutput(e.currentTarget.value)}
          rows={4}
          className="font-mono text-xs"
          spellCheck={false}
          invalid={Boolean(errors.output)}
          hasHint
        />
      </Field>
    </FormShell>
  );
}

export function TaskFailForm({ sessionId, view, onClose, onDone }: SessionFormProps) {
  const task = view.task?.task;
  const [errorCode, setErrorCode] = useState("");
  const [reason, setReason] = useState("");
  const [retryable, setRetryable] = useState(false);
  const form = useActionForm({
    done: "Task failure reported",
    onOk: () => onDone("Task failure reported."),
    validate: () =>
      mapValidation(validateTaskFail({ errorCode, reason, retryable }), (v) => ({ sessionId, taskId: task?.taskId ?? "", ...v })),
    send: (fields, messageId) => actionClient().taskFail({ ...fields, messageId }),
  });
  const { errors } = form;
  return (
    <FormShell
      title="Report failure"
      onSubmit={form.onSubmit}
      onClose={onClose}
      state={form.state}
      submitLabel="Report failure"
      pendingLabel="Reporting…"
      submitVariant="danger"
      testId="task-fail-form"
    >
      <Field id="tf-code" label="Error code" hint="A short machine-readable code, e.g. TIMEOUT." error={errors.errorCode}>
        <TextInput
          id="tf-code"
          value={errorCode}
          onChange={(e) => setErrorCode(e.currentTarget.value)}
          invalid={Boolean(errors.errorCode)}
          hasHint
          className="max-w-64 font-mono"
        />
      </Field>
      <TextAreaField id="tf-reason" label="What went wrong" value={reason} onChange={setReason} error={errors.reason} />
      <label className="flex items-center gap-2 text-sm">
        <input
          type="checkbox"
          checked={retryable}
          onChange={(e) => setRetryable(e.currentTarget.checked)}
          className="h-4 w-4 accent-blue-700 dark:accent-sky-300"
        />
        Retryable: trying again later may work
      </label>
    </FormShell>
  );
}

export function TaskCommitForm({ sessionId, view, nameOf, onClose, onDone }: SessionFormProps) {
  const task = view.task?.task;
  const report = task?.terminalReport;
  const [outcome, setOutcome] = useState<"completed" | "failed">(report?.kind === "fail" ? "failed" : "completed");
  const [scope, setScope] = useState(task?.title ?? "");
  const [reason, setReason] = useState(
    report?.kind === "complete" ? report.summary : report?.kind === "fail" ? `Failed (${report.errorCode}): ${report.reason}` : "",
  );
  const form = useActionForm({
    done: `Task committed as ${outcome}`,
    onOk: () => onDone(`Task committed as ${outcome}.`),
    confirm: true,
    validate: () => mapValidation(validateTaskCommit({ outcome, authorityScope: scope, reason }), (v) => ({ sessionId, ...v })),
    send: (fields, messageId) => actionClient().taskCommit({ ...fields, messageId }),
  });
  const { errors } = form;
  return (
    <>
      <FormShell
        title="Commit the task"
        description="Binds the outcome and closes the session."
        onSubmit={form.onSubmit}
        onClose={onClose}
        state={form.state}
        submitLabel="Review and commit…"
        pendingLabel="Committing…"
        testId="task-commit-form"
      >
        <OutcomeChoice
          name="task-commit-outcome"
          value={outcome}
          onChange={(o) => setOutcome(o)}
          options={[
            { value: "completed", label: "Completed", disabled: report?.kind === "fail" },
            { value: "failed", label: "Failed" },
          ]}
        />
        <AuthorityScopeField id="tcm-scope" value={scope} onChange={setScope} error={errors.authorityScope} />
        <TextAreaField id="tcm-reason" optional value={reason} onChange={setReason} error={errors.reason} />
      </FormShell>
      <ConfirmDialog
        open={form.confirming}
        title={`Commit this task as ${outcome}?`}
        confirmLabel="Commit"
        pending={form.state.pending}
        onConfirm={form.confirm}
        onClose={form.cancelConfirm}
        testId="task-commit-confirm"
      >
        <p>
          {report ? (
            <>
              {report.kind === "complete" ? "Completed" : "Failed"} by <strong>{nameOf(report.assignee)}</strong>.{" "}
            </>
          ) : null}
          This is final: the session closes and nothing more can happen in it.
        </p>
      </ConfirmDialog>
    </>
  );
}
