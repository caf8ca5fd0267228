"use client";
// "Hand off…": one dialog in which a signed-in person hands a responsibility
// to someone in one go — who takes it over (people by name from the
// directory, or an agent), scope, reason, the runbook (written here or read
// from a .md/.txt file), who may commit, and the time to live. Pressing
// "Hand off" sends SessionStart, the Offer and the runbook as Context, in that
// order, as the person (features/hand-off/hand-off.ts, one attempt's ids fixed for
// its life). After a partial failure it says what was sent and what was not
// and offers "Finish handing off"; on success it opens the session. Saved
// templates prefill it for recurring rotations.
//
// A native modal <dialog>: focus stays inside, Esc closes it (except while
// sending), focus starts on the first field; full screen on phones.

import clsx from "clsx";
import Link from "next/link";
import { useCallback, useEffect, useId, useMemo, useRef, useState, type FormEvent } from "react";
import { LIMITS } from "@/lib/actions/rules";
import { decide } from "@/lib/authz/decide";
import {
  byteLength,
  handOffValuesOf,
  readRunbookFile,
  runbookRoom,
  validateHandOff,
  validateTemplate,
  type Errors,
  type HandOffValues,
  type TemplateFields,
} from "@/lib/client/action-forms";
import { ROLE_LABELS, type WhoAmI } from "@/lib/views/sign-in";
import { approverChoices, nameIn, participantChoices, type Directory } from "@/lib/views/directory";
import { formatBytes } from "@/lib/views/format";
import { progressLines, type HandOffStep } from "@/features/hand-off/hand-off";
import type { HandoffTemplate } from "@/lib/gen/baton/v1/actions_pb";
import { actionClient } from "@/lib/client/transport";
import { useHandOff } from "@/features/hand-off/use-hand-off";
import { Icon } from "@/components/ui/Icon";
import { Button, Field, Select, TextArea, TextInput } from "@/components/ui/forms";
import { useFormSequence } from "@/lib/client/use-action-form";
import { EscalationFields } from "@/features/hand-off/EscalationFields";
import { PolicyChoiceFields, type PolicyOptions } from "@/features/hand-off/PolicyChoiceFields";

export const INITIAL_HAND_OFF: HandOffValues = {
  target: "",
  scope: "",
  reason: "",
  runbook: "",
  ttlMinutes: "60",
  policy: "default",
  approvers: [],
  implicitAcceptSeconds: "300",
  escalate: false,
  escalateNotify: [],
  escalateNotifyMinutes: "15",
  escalateReofferTo: "",
  escalateReofferMinutes: "15",
};

const OTHER = "__other__";
const HAND_OFF_POLICIES: PolicyOptions = [
  ["default", "You", "You confirm the outcome once they answer."],
  ["approval", "Lead approval", "An approver you pick confirms it; your own commit is refused."],
  ["implicit", "Implicit accept", "No answer within the timeout counts as accepted."],
];
const SENDING: Readonly<Record<HandOffStep, string>> = {
  start: "Starting the session…",
  offer: "Sending the offer…",
  context: "Attaching the runbook…",
  escalate: "Setting up the escalation…",
};
const FIELD_ORDER = [
  "target",
  "scope",
  "reason",
  "runbook",
  "policy",
  "approvers",
  "implicitAcceptSeconds",
  "ttlMinutes",
  "escalate",
  "escalateNotify",
  "escalateNotifyMinutes",
  "escalateReofferTo",
  "escalateReofferMinutes",
  "templateName",
];

export interface TemplatesApi {
  templates: readonly HandoffTemplate[];
  max: number;
  loaded: boolean;
  error: boolean;
  save(fields: TemplateFields): Promise<HandoffTemplate | undefined>;
  remove(id: string): Promise<boolean>;
}

export function HandOffDialog({
  me,
  directory,
  maxPayloadBytes,
  templates,
  initialTemplateId,
  onTemplateChange,
  onClose,
  onDone,
}: {
  me: WhoAmI;
  directory: Directory;
  maxPayloadBytes: number;
  templates: TemplatesApi;
  initialTemplateId: string;
  /** The chosen template, for the address bar (deep link). */
  onTemplateChange: (id: string) => void;
  onClose: () => void;
  onDone: (sessionId: string) => void;
}) {
  const ref = useRef<HTMLDialogElement | null>(null);
  const formRef = useRef<HTMLFormElement | null>(null);
  const titleId = useId();
  const [v, setV] = useState<HandOffValues>(INITIAL_HAND_OFF);
  const [templateId, setTemplateId] = useState("");
  const [templateName, setTemplateName] = useState("");
  const [saving, setSaving] = useState(false);
  const [savingOpen, setSavingOpen] = useState(false);
  const [notice, setNotice] = useState<{ ok: boolean; text: string } | null>(null);
  const [otherTarget, setOtherTarget] = useState(false);
  const actor = { role: me.role, participantId: me.participantId };
  const choices = useMemo(() => participantChoices(directory, me.participantId), [directory, me.participantId]);
  const approvers = useMemo(() => approverChoices(directory), [directory]);
  const room = runbookRoom(maxPayloadBytes);
  const runbookBytes = byteLength(v.runbook);
  const targetName = v.target ? nameIn(directory, v.target) : "";

  const sender = useCallback(() => actionClient(), []);
  const handOff = useHandOff(me.participantId, sender, onDone);
  const form = useFormSequence({
    validate: () => {
      const checked = validateHandOff(v, me.participantId, maxPayloadBytes);
      if (!checked.ok) return checked;
      const participants = [...new Set([me.participantId, ...checked.value.start.participants, ...checked.value.start.approvers])];
      const d = decide(actor, undefined, "startSession", { start: { mode: "macp.mode.handoff.v1", participants } });
      if (!d.allowed) return { ok: false, errors: { target: d.reason } };
      return checked;
    },
    send: async (fields) => {
      setNotice(null);
      const p = await handOff.submit(fields, targetName || fields.offer.target);
      // A field refused before anything was sent is shown next to its input.
      return p?.done.length === 0 ? p.failed?.outcome : undefined;
    },
    serverErrors: (failed) => {
      if (failed?.kind !== "invalid" || !failed.field) return null;
      const field = failed.field.replace(/\[\d+\]$/, "");
      const key =
        field === "participants"
          ? "target"
          : field === "ttl_ms"
            ? "ttlMinutes"
            : field === "implicit_accept_timeout_ms"
              ? "implicitAcceptSeconds"
              : field;
      return { [key]: failed.description };
    },
    focus: (errs) => focusFirst(errs),
    focusServerErrors: true,
  });
  const { errors, setErrors } = form;
  const locked = handOff.partial || handOff.state.pending;

  // An interrupted attempt restored after a reload: show what it sends.
  const shownPlan = useRef<string>("");
  const plan = handOff.state.plan;
  useEffect(() => {
    if (!handOff.partial || !plan || shownPlan.current === plan.attemptId) return;
    shownPlan.current = plan.attemptId;
    setV(
      handOffValuesOf({
        target: plan.offer.target,
        scope: plan.offer.scope,
        reason: plan.offer.reason,
        runbookMarkdown: plan.runbook,
        policy: plan.start.policy,
        approvers: plan.start.approvers,
        implicitAcceptTimeoutMs: plan.start.implicitAcceptTimeoutMs,
        ttlMs: plan.start.ttlMs,
      }),
    );
  }, [handOff.partial, plan]);

  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    // showModal() focuses the first focusable element (the close button); start on the first field instead.
    d?.querySelector<HTMLElement>("#ho-target")?.focus();
    return () => {
      if (d?.open) d.close();
    };
  }, []);

  const apply = useCallback(
    (t: HandoffTemplate | undefined) => {
      setErrors({});
      setNotice(null);
      if (!t) {
        setTemplateId("");
        setTemplateName("");
        return;
      }
      const values = handOffValuesOf(t);
      setV(values);
      setTemplateId(t.id);
      setTemplateName(t.name);
      setOtherTarget(
        values.target !== "" && !choices.people.some((p) => p.participantId === values.target) && !choices.agents.includes(values.target),
      );
    },
    [choices, setErrors],
  );

  // A deep link (?template=…) prefills once the templates are in.
  const applied = useRef(false);
  useEffect(() => {
    // Only the address the dialog was opened with: later changes are the dialog's own (a saved template).
    if (applied.current || !templates.loaded) return;
    applied.current = true;
    if (initialTemplateId === "") return;
    const t = templates.templates.find((x) => x.id === initialTemplateId);
    if (t) apply(t);
    else setNotice({ ok: false, text: "That template no longer exists; the form is empty." });
  }, [templates.loaded, templates.templates, initialTemplateId, apply]);

  const set = <K extends keyof HandOffValues>(key: K, value: HandOffValues[K]): void => {
    setV((prev) => ({ ...prev, [key]: value }));
    if (errors[key as string]) setErrors((e) => ({ ...e, [key]: undefined }));
    handOff.reset();
  };

  const focusFirst = (errs: Errors): void => {
    const field = FIELD_ORDER.find((f) => errs[f]);
    if (!field) return;
    requestAnimationFrame(() => formRef.current?.querySelector<HTMLElement>(`[data-field="${field}"]`)?.focus());
  };

  const submit = (e: FormEvent<HTMLFormElement>): void => {
    if (handOff.partial) {
      e.preventDefault();
      void handOff.finish(targetName);
      return;
    }
    form.onSubmit(e);
  };

  const saveTemplate = async (): Promise<void> => {
    const checked = validateTemplate(v, templateName, templateId);
    if (!checked.ok) {
      setErrors(checked.errors);
      focusFirst(checked.errors);
      return;
    }
    setSaving(true);
    try {
      const t = await templates.save(checked.value);
      if (t) {
        setTemplateId(t.id);
        onTemplateChange(t.id);
        setSavingOpen(false);
        setNotice({ ok: true, text: `Saved as the template “${t.name}”.` });
      }
    } catch (err) {
      setNotice({ ok: false, text: `The template was not saved: ${(err as Error).message.replace(/^\[[a-z_]+\] /, "")}` });
    } finally {
      setSaving(false);
    }
  };

  const deleteTemplate = async (): Promise<void> => {
    const t = templates.templates.find((x) => x.id === templateId);
    if (!t) return;
    try {
      if (await templates.remove(t.id)) {
        setTemplateId("");
        onTemplateChange("");
        setNotice({ ok: true, text: `Deleted the template “${t.name}”.` });
      }
    } catch (err) {
      setNotice({ ok: false, text: `The template was not deleted: ${(err as Error).message.replace(/^\[[a-z_]+\] /, "")}` });
    }
  };

  const readFile = async (file: File): Promise<void> => {
    if (file.size > room) {
      setErrors((e) => ({ ...e, runbook: `${file.name} is ${formatBytes(file.size)}; at most ${formatBytes(room)} fit.` }));
      return;
    }
    const r = readRunbookFile(file.name, new Uint8Array(await file.arrayBuffer()), maxPayloadBytes);
    if (!r.ok) {
      setErrors((e) => ({ ...e, ...r.errors }));
      return;
    }
    set("runbook", r.value);
    setNotice({ ok: true, text: `Read ${file.name} into the runbook.` });
  };

  const lines = handOff.state.plan && handOff.state.progress ? progressLines(handOff.state.plan, handOff.state.progress) : [];
  const showLines =
    lines.length > 0 &&
    (handOff.state.pending ||
      handOff.partial ||
      handOff.state.progress?.failed !== undefined ||
      handOff.state.progress?.done.length === lines.length);
  const interrupted = handOff.partial && !handOff.state.pending && handOff.state.progress?.failed === undefined;
  const selectedTarget = otherTarget ? OTHER : v.target;

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
      <form ref={formRef} onSubmit={submit} noValidate className="flex h-full flex-col sm:max-h-[calc(100dvh-3rem)]">
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
          <div className="flex flex-wrap items-end gap-2">
            <Field
              id="ho-template"
              label="Template"
              className="min-w-0 flex-1"
              hint={templates.error ? "Your templates could not be loaded." : undefined}
            >
              <Select
                id="ho-template"
                value={templateId}
                disabled={locked || !templates.loaded}
                hasHint={templates.error}
                onChange={(e) => {
                  const id = e.currentTarget.value;
                  apply(templates.templates.find((t) => t.id === id));
                  if (id === "") setV(INITIAL_HAND_OFF);
                  onTemplateChange(id);
                }}
                data-testid="hand-off-template"
              >
                <option value="">{templates.templates.length === 0 ? "No saved templates yet" : "None: an empty form"}</option>
                {templates.templates.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </Select>
            </Field>
            {templateId !== "" && !locked ? (
              <Button variant="quiet" onClick={() => void deleteTemplate()} data-testid="hand-off-template-delete">
                Delete template
              </Button>
            ) : null}
          </div>

          <fieldset disabled={locked} className="space-y-5">
            <legend className="sr-only">The handoff</legend>
            <Field id="ho-target" label="To" error={errors.target} hint="The person or agent who takes it over.">
              <Select
                id="ho-target"
                data-field="target"
                value={selectedTarget}
                hasHint
                invalid={Boolean(errors.target)}
                onChange={(e) => {
                  const id = e.currentTarget.value;
                  if (id === OTHER) {
                    setOtherTarget(true);
                    set("target", "");
                  } else {
                    setOtherTarget(false);
                    set("target", id);
                  }
                }}
                data-testid="hand-off-target"
              >
                <option value="">Choose who takes it over…</option>
                {choices.people.length > 0 ? (
                  <optgroup label="People">
                    {choices.people.map((p) => (
                      <option key={p.participantId} value={p.participantId}>
                        {p.displayName} ({ROLE_LABELS[p.role]})
                      </option>
                    ))}
                  </optgroup>
                ) : null}
                {choices.agents.length > 0 ? (
                  <optgroup label="Agents seen recently">
                    {choices.agents.slice(0, 20).map((a) => (
                      <option key={a} value={a}>
                        {nameIn(directory, a)}
                      </option>
                    ))}
                  </optgroup>
                ) : null}
                <option value={OTHER}>Another agent (type its id)…</option>
              </Select>
            </Field>
            {otherTarget ? (
              <Field id="ho-target-id" label="Agent id" error={errors.target}>
                <TextInput
                  id="ho-target-id"
                  data-field="target"
                  value={v.target}
                  placeholder="agent://team/name"
                  spellCheck={false}
                  autoCapitalize="none"
                  onChange={(e) => set("target", e.currentTarget.value)}
                  invalid={Boolean(errors.target)}
                />
              </Field>
            ) : null}

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

            <div className="space-y-1">
              <div className="flex flex-wrap items-center gap-2">
                <label htmlFor="ho-runbook" className="text-sm font-medium">
                  Runbook <span className="font-normal text-slate-600 dark:text-slate-400">(Markdown, optional)</span>
                </label>
                <label
                  className={clsx(
                    "ml-auto inline-flex cursor-pointer items-center gap-1 rounded-md px-2 py-1 text-sm font-medium text-blue-800 ring-1 ring-slate-300 ring-inset hover:bg-slate-100 has-[:focus-visible]:outline-2 has-[:focus-visible]:outline-blue-600 dark:text-sky-300 dark:ring-slate-600 dark:hover:bg-slate-800",
                    locked && "pointer-events-none opacity-60",
                  )}
                >
                  <Icon name="document" className="h-4 w-4" />
                  Upload .md or .txt
                  <input
                    type="file"
                    accept=".md,.markdown,.txt,text/markdown,text/plain"
                    className="sr-only"
                    disabled={locked}
                    data-testid="hand-off-runbook-file"
                    onChange={(e) => {
                      const f = e.currentTarget.files?.[0];
                      e.currentTarget.value = "";
                      if (f) void readFile(f);
                    }}
                  />
                </label>
              </div>
              <TextArea
                id="ho-runbook"
                data-field="runbook"
                rows={8}
                value={v.runbook}
                className="font-mono text-xs"
                spellCheck={false}
                placeholder={"# Runbook\n\n1. Check the dashboards"}
                onChange={(e) => set("runbook", e.currentTarget.value)}
                invalid={Boolean(errors.runbook)}
                hasHint
              />
              <p
                id="ho-runbook-hint"
                className={clsx(
                  "text-xs",
                  runbookBytes > room ? "font-medium text-red-800 dark:text-red-300" : "text-slate-600 dark:text-slate-400",
                )}
              >
                {formatBytes(runbookBytes)} of at most {formatBytes(room)}. Sent with the offer; {targetName || "the person taking over"}{" "}
                sees it first.
              </p>
              {errors.runbook ? (
                <p
                  id="ho-runbook-error"
                  className="flex items-start gap-1 text-xs font-medium text-red-800 dark:text-red-300"
                  data-field-error
                >
                  <Icon name="alert" className="mt-px h-3.5 w-3.5 shrink-0" />
                  {errors.runbook}
                </p>
              ) : null}
            </div>

            <PolicyChoiceFields
              idPrefix="ho"
              name="ho-policy"
              options={HAND_OFF_POLICIES}
              values={v}
              errors={errors}
              approvers={approvers}
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
              approvers={approvers}
              people={choices.people}
              set={set}
              onToggle={(on) => {
                setV((prev) => ({
                  ...prev,
                  escalate: on,
                  // Lead approval: the approvers are the ones to tell, unless chosen otherwise.
                  escalateNotify:
                    on && (prev.escalateNotify ?? []).length === 0 && prev.policy === "approval"
                      ? [...prev.approvers]
                      : (prev.escalateNotify ?? []),
                }));
                if (errors.escalate) setErrors((x) => ({ ...x, escalate: undefined }));
                handOff.reset();
              }}
            />
          </fieldset>

          {savingOpen && !locked ? (
            <div className="flex flex-wrap items-end gap-2 rounded-md border border-slate-300 p-3 dark:border-slate-700">
              <Field id="ho-template-name" label="Template name" error={errors.templateName} className="min-w-0 flex-1">
                <TextInput
                  id="ho-template-name"
                  data-field="templateName"
                  value={templateName}
                  autoFocus
                  onChange={(e) => {
                    setTemplateName(e.currentTarget.value);
                    if (errors.templateName) setErrors((x) => ({ ...x, templateName: undefined }));
                  }}
                  onKeyDown={(e) => {
                    if (e.key === "Enter") {
                      e.preventDefault();
                      void saveTemplate();
                    }
                  }}
                  invalid={Boolean(errors.templateName)}
                  maxLength={LIMITS.templateName + 20}
                  data-testid="hand-off-template-name"
                />
              </Field>
              <Button onClick={() => void saveTemplate()} pending={saving} disabled={saving} data-testid="hand-off-template-save">
                Save
              </Button>
              <Button variant="quiet" onClick={() => setSavingOpen(false)}>
                Cancel
              </Button>
            </div>
          ) : null}
        </div>

        <div className="flex flex-wrap items-center gap-2 border-t border-slate-200 px-4 py-3 dark:border-slate-800">
          {/* What happened stays in sight next to the buttons, whatever the form's scroll position. */}
          <div role="status" aria-live="polite" className="w-full space-y-2" data-testid="hand-off-status">
            {notice ? (
              <p
                className={clsx("text-sm", notice.ok ? "text-emerald-800 dark:text-emerald-300" : "text-red-800 dark:text-red-300")}
                data-testid="hand-off-notice"
              >
                {notice.text}
              </p>
            ) : null}
            {interrupted ? (
              <p className="text-sm font-medium" data-testid="hand-off-interrupted">
                This hand-off did not finish. Finish it to send the rest, with the same ids: nothing is sent twice.
              </p>
            ) : null}
            {showLines ? (
              <ol
                className={clsx(
                  "space-y-1 rounded-md border px-3 py-2 text-sm",
                  handOff.state.progress?.failed
                    ? "border-amber-300 bg-amber-50 text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-50"
                    : "border-slate-300 bg-slate-50 dark:border-slate-700 dark:bg-slate-950",
                )}
                aria-label="What was sent"
                data-testid="hand-off-progress"
              >
                {lines.map((l) => (
                  <li key={l.step} className="flex items-start gap-2" data-state={l.state} data-step={l.step}>
                    <Icon
                      name={l.state === "done" ? "check-circle" : l.state === "failed" ? "alert" : "circle-dashed"}
                      className="mt-0.5 h-4 w-4 shrink-0"
                    />
                    <span className="min-w-0 break-words">
                      {handOff.state.pending && handOff.state.step === l.step && l.state === "waiting" ? SENDING[l.step] : l.text}
                    </span>
                  </li>
                ))}
              </ol>
            ) : null}
          </div>
          {handOff.partial ? (
            <p className="w-full text-xs text-slate-700 dark:text-slate-300">
              The form is locked: finishing sends the rest of this same hand-off, never a second one.{" "}
              {handOff.state.progress?.sessionId ? (
                <Link
                  href={`/sessions/${encodeURIComponent(handOff.state.progress.sessionId)}`}
                  className="text-blue-800 underline dark:text-sky-300"
                >
                  Open the session
                </Link>
              ) : null}
              {handOff.state.progress?.sessionId ? " · " : null}
              <button
                type="button"
                className="text-blue-800 underline disabled:opacity-60 dark:text-sky-300"
                disabled={handOff.state.pending}
                onClick={() => {
                  handOff.discard();
                  setV(INITIAL_HAND_OFF);
                }}
                data-testid="hand-off-discard"
              >
                Start over
              </button>{" "}
              (what was sent stays sent).
            </p>
          ) : (
            <>
              {!savingOpen ? (
                <Button variant="quiet" onClick={() => setSavingOpen(true)} disabled={locked} data-testid="hand-off-save-template">
                  Save as template…
                </Button>
              ) : null}
              <Link href="/sessions/new" className="text-sm text-blue-800 underline-offset-2 hover:underline dark:text-sky-300">
                Step by step
              </Link>
            </>
          )}
          <div className="ml-auto flex gap-2">
            <Button onClick={onClose} disabled={handOff.state.pending}>
              Cancel
            </Button>
            <Button
              type="submit"
              variant="primary"
              pending={handOff.state.pending}
              aria-disabled={handOff.state.pending ? true : undefined}
              data-testid="hand-off-submit"
            >
              {handOff.state.pending ? "Handing off…" : handOff.partial ? "Finish handing off" : "Hand off"}
            </Button>
          </div>
        </div>
      </form>
    </dialog>
  );
}
