"use client";
// Forms for handoff actions: offer, attach a runbook (Markdown with preview,
// a file, or a link), accept / decline, commit (confirmed), and cancel
// (confirmed, shared with tasks). Each validates with lib/client/action-forms
// and runs the one form sequence of lib/client/use-action-form.ts (one
// message_id per attempt).

import { useState } from "react";
import { decide, type Actor, type DecideContext } from "@/lib/authz/decide";
import { validateAttach, validateCommit, validateOffer, validateReason, type AttachValues } from "@/lib/client/action-forms";
import { formatBytes } from "@/lib/views/format";
import type { SessionView } from "@/lib/macp/projections/session";
import { commitDefaults, pendingOfferOf } from "@/features/session/session-authz";
import { actionClient } from "@/lib/client/transport";
import { mapValidation, useActionForm } from "@/lib/client/use-action-form";
import { MarkdownView } from "@/features/session/PayloadView";
import { ConfirmDialog } from "@/components/ui/ConfirmDialog";
import { Field, Select, TextArea, TextInput } from "@/components/ui/forms";
import { FormShell, type FormProps } from "@/features/session/actions/FormShell";

export interface SessionFormProps extends FormProps {
  sessionId: string;
  view: SessionView;
  me: Actor;
  ctx: DecideContext;
  nameOf: (id: string) => string;
}

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
      <Field id="offer-target" label="To" error={errors.target}>
        <Select id="offer-target" value={target} onChange={(e) => setTarget(e.currentTarget.value)} invalid={Boolean(errors.target)}>
          <option value="">Choose who receives it…</option>
          {targets.map((p) => (
            <option key={p} value={p}>
              {nameOf(p)} ({p})
            </option>
          ))}
        </Select>
      </Field>
      <Field id="offer-scope" label="Scope" optional hint="What moves; the session's scope when empty." error={errors.scope}>
        <TextInput
          id="offer-scope"
          value={scope}
          onChange={(e) => setScope(e.currentTarget.value)}
          invalid={Boolean(errors.scope)}
          hasHint
        />
      </Field>
      <Field id="offer-reason" label="Reason" optional error={errors.reason}>
        <TextArea
          id="offer-reason"
          value={reason}
          onChange={(e) => setReason(e.currentTarget.value)}
          invalid={Boolean(errors.reason)}
          rows={2}
        />
      </Field>
    </FormShell>
  );
}

// ----------------------------------------------------------------- context

type AttachKind = AttachValues["kind"];

export function AttachForm({ sessionId, view, nameOf, maxPayloadBytes, onClose, onDone }: SessionFormProps & { maxPayloadBytes: number }) {
  const offers = view.handoff?.offers ?? [];
  const last = offers[offers.length - 1];
  const [kind, setKind] = useState<AttachKind>("markdown");
  const [markdown, setMarkdown] = useState("");
  const [preview, setPreview] = useState(false);
  const [file, setFile] = useState<{ name: string; type: string; bytes: Uint8Array } | null>(null);
  const [link, setLink] = useState("");
  const what = kind === "markdown" ? "Runbook" : kind === "file" ? (file?.name ?? "File") : "Link";

  const values = (): AttachValues => (kind === "markdown" ? { kind, markdown } : kind === "file" ? { kind, file } : { kind, link });

  const form = useActionForm({
    done: `${what} attached`,
    onOk: () => onDone(`${what} attached.`),
    validate: () =>
      mapValidation(validateAttach(values(), maxPayloadBytes), (content) => ({ sessionId, handoffId: last?.handoffId ?? "", content })),
    onInvalid: (errs) => {
      if (errs.markdown) setPreview(false);
    },
    send: ({ handoffId, content }, messageId) =>
      actionClient().attachContext({
        sessionId,
        messageId,
        handoffId,
        content:
          content.case === "file" ? { case: "file", value: { contentType: content.value.contentType, data: content.value.data } } : content,
      }),
  });
  const { errors } = form;

  return (
    <FormShell
      title="Attach context"
      description={
        last ? (
          <>
            For the offer to {nameOf(last.target)}. At most {formatBytes(maxPayloadBytes)} per message.
          </>
        ) : null
      }
      onSubmit={form.onSubmit}
      onClose={onClose}
      state={form.state}
      submitLabel="Attach"
      pendingLabel="Attaching…"
      testId="attach-form"
    >
      <fieldset>
        <legend className="sr-only">What to attach</legend>
        <div className="inline-flex rounded-md ring-1 ring-slate-300 ring-inset dark:ring-slate-600">
          {(
            [
              ["markdown", "Markdown"],
              ["file", "File"],
              ["link", "Link"],
            ] as [AttachKind, string][]
          ).map(([k, label]) => (
            <label
              key={k}
              className="cursor-pointer px-3 py-1.5 text-sm font-medium text-slate-800 first:rounded-l-md last:rounded-r-md has-[:checked]:bg-blue-700 has-[:checked]:text-white has-[:focus-visible]:outline-2 has-[:focus-visible]:outline-blue-600 dark:text-slate-100 dark:has-[:checked]:bg-sky-300 dark:has-[:checked]:text-slate-950"
            >
              <input type="radio" name="attach-kind" value={k} checked={kind === k} onChange={() => setKind(k)} className="sr-only" />
              {label}
            </label>
          ))}
        </div>
      </fieldset>
      {kind === "markdown" ? (
        <div className="space-y-2">
          <div className="flex items-center gap-2">
            <label htmlFor="attach-md" className="text-sm font-medium">
              Runbook (Markdown)
            </label>
            <div className="ml-auto inline-flex gap-1" role="group" aria-label="Markdown view">
              <button
                type="button"
                aria-pressed={!preview}
                onClick={() => setPreview(false)}
                className="rounded px-2 py-0.5 text-xs font-medium aria-pressed:bg-slate-200 dark:aria-pressed:bg-slate-700"
              >
                Write
              </button>
              <button
                type="button"
                aria-pressed={preview}
                onClick={() => setPreview(true)}
                disabled={markdown.trim() === ""}
                className="rounded px-2 py-0.5 text-xs font-medium disabled:opacity-60 aria-pressed:bg-slate-200 dark:aria-pressed:bg-slate-700"
                data-testid="markdown-preview-toggle"
              >
                Preview
              </button>
            </div>
          </div>
          {preview ? (
            <div
              className="max-h-80 overflow-auto rounded-md border border-slate-300 bg-white p-3 dark:border-slate-600 dark:bg-slate-950"
              data-testid="markdown-preview"
              aria-label="Preview"
            >
              <MarkdownView text={markdown} />
            </div>
          ) : (
            <div className="space-y-1">
              <TextArea
                id="attach-md"
                value={markdown}
                onChange={(e) => setMarkdown(e.currentTarget.value)}
                rows={8}
                className="font-mono text-xs"
                spellCheck={false}
                placeholder={"# Runbook\n\n1. Check the dashboards"}
                invalid={Boolean(errors.markdown)}
              />
              {errors.markdown ? (
                <p id="attach-md-error" className="text-xs font-medium text-red-800 dark:text-red-300" data-field-error>
                  {errors.markdown}
                </p>
              ) : null}
            </div>
          )}
        </div>
      ) : kind === "file" ? (
        <Field
          id="attach-file"
          label="File"
          error={errors.file}
          hint={
            file
              ? `${file.name}: ${formatBytes(file.bytes.byteLength)}`
              : `Up to ${formatBytes(maxPayloadBytes)}; its content type goes with it.`
          }
        >
          <input
            id="attach-file"
            type="file"
            aria-invalid={errors.file ? true : undefined}
            aria-describedby="attach-file-hint"
            className="block w-full text-sm file:mr-3 file:rounded-md file:border-0 file:bg-slate-200 file:px-3 file:py-1.5 file:text-sm file:font-medium file:text-slate-900 dark:file:bg-slate-700 dark:file:text-slate-100"
            onChange={(e) => {
              const f = e.currentTarget.files?.[0];
              if (!f) return setFile(null);
              void f.arrayBuffer().then((buf) => setFile({ name: f.name, type: f.type, bytes: new Uint8Array(buf) }));
            }}
          />
        </Field>
      ) : (
        <Field id="attach-link" label="Link" error={errors.link} hint="An http(s) address, e.g. the wiki page of the runbook.">
          <TextInput
            id="attach-link"
            type="url"
            value={link}
            onChange={(e) => setLink(e.currentTarget.value)}
            invalid={Boolean(errors.link)}
            hasHint
            placeholder="https://"
          />
        </Field>
      )}
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
      <Field
        id={`${kind}-reason`}
        label="Reason"
        optional={kind === "accept"}
        error={errors.reason}
        hint={kind === "decline" ? "The owner reads this when choosing whom to offer it next." : undefined}
      >
        <TextArea
          id={`${kind}-reason`}
          value={reason}
          onChange={(e) => setReason(e.currentTarget.value)}
          rows={2}
          invalid={Boolean(errors.reason)}
          hasHint={kind === "decline"}
        />
      </Field>
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
        <fieldset className="space-y-1.5">
          <legend className="text-sm font-medium">Outcome</legend>
          <label className="flex items-start gap-2 text-sm has-[:disabled]:opacity-70">
            <input
              type="radio"
              name="commit-outcome"
              checked={outcome === "accepted"}
              disabled={!newOwner}
              onChange={() => choose("accepted")}
              className="mt-0.5 accent-blue-700 dark:accent-sky-300"
            />
            <span>
              <span className="font-medium">Accepted</span>
              <span className="block text-xs text-slate-700 dark:text-slate-300">
                {newOwner ? `${nameOf(newOwner)} becomes the owner.` : "No offer was accepted."}
              </span>
            </span>
          </label>
          <label className="flex items-start gap-2 text-sm">
            <input
              type="radio"
              name="commit-outcome"
              checked={outcome === "declined"}
              onChange={() => choose("declined")}
              className="mt-0.5 accent-blue-700 dark:accent-sky-300"
            />
            <span>
              <span className="font-medium">Declined</span>
              <span className="block text-xs text-slate-700 dark:text-slate-300">{nameOf(view.initiator)} keeps it.</span>
            </span>
          </label>
        </fieldset>
        <Field id="commit-scope" label="Authority scope" error={errors.authorityScope}>
          <TextInput
            id="commit-scope"
            value={scope}
            onChange={(e) => setScope(e.currentTarget.value)}
            invalid={Boolean(errors.authorityScope)}
          />
        </Field>
        <Field id="commit-reason" label="Reason" error={errors.reason} hint="Name the new owner; it goes into the audit trail.">
          <TextArea
            id="commit-reason"
            value={reason}
            onChange={(e) => {
              setEdited(true);
              setReason(e.currentTarget.value);
            }}
            rows={2}
            invalid={Boolean(errors.reason)}
            hasHint
          />
        </Field>
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

// ------------------------------------------------------------------ cancel

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
        <Field id="cancel-reason" label="Reason" optional error={errors.reason}>
          <TextArea
            id="cancel-reason"
            value={reason}
            onChange={(e) => setReason(e.currentTarget.value)}
            rows={2}
            invalid={Boolean(errors.reason)}
          />
        </Field>
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
