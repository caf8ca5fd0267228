"use client";
// Attach context to the latest offer: a runbook in Markdown (with a preview),
// a file (its content type goes with it) or a link. Validated with
// lib/client/action-forms (validateAttach) within the runtime's message limit.

import { useState } from "react";
import { validateAttach, type AttachValues } from "@/lib/client/action-forms";
import { formatBytes } from "@/lib/views/format";
import { actionClient } from "@/lib/client/transport";
import { mapValidation, useActionForm } from "@/lib/client/use-action-form";
import { MarkdownView } from "@/features/session/PayloadView";
import { Field, TextArea, TextInput } from "@/components/ui/forms";
import { FormShell, type SessionFormProps } from "@/features/session/actions/FormShell";

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
