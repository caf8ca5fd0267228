"use client";
// useHandOffDialog(): the state and steps of the "Hand off…" dialog
// (HandOffDialog.tsx draws them): the form's values and problems, checked by
// lib/client/action-forms and decide(); the attempt (use-hand-off.ts) and
// what it sent; an interrupted attempt restored after a reload; and the
// saved templates (choose, prefill from a deep link, save, delete).

import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from "react";
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
import type { WhoAmI } from "@/lib/views/sign-in";
import { approverChoices, nameIn, participantChoices, type Directory } from "@/lib/views/directory";
import { formatBytes } from "@/lib/views/format";
import { progressLines } from "@/features/hand-off/hand-off";
import type { HandoffTemplate } from "@/lib/gen/baton/v1/actions_pb";
import { actionClient } from "@/lib/client/transport";
import { useHandOff } from "@/features/hand-off/use-hand-off";
import { useFormSequence } from "@/lib/client/use-action-form";

export const INITIAL_HAND_OFF: HandOffValues = {
  target: "",
  rotation: [],
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

const FIELD_ORDER = [
  "target",
  "rotation",
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

export interface HandOffDialogProps {
  me: WhoAmI;
  directory: Directory;
  maxPayloadBytes: number;
  templates: TemplatesApi;
  initialTemplateId: string;
  /** The chosen template, for the address bar (deep link). */
  onTemplateChange: (id: string) => void;
  onClose: () => void;
  onDone: (sessionId: string) => void;
}

export type Notice = { ok: boolean; text: string } | null;

const withoutCode = (err: unknown): string => (err as Error).message.replace(/^\[[a-z_]+\] /, "");

export function useHandOffDialog({
  me,
  directory,
  maxPayloadBytes,
  templates,
  initialTemplateId,
  onTemplateChange,
  onDone,
}: Omit<HandOffDialogProps, "onClose">) {
  const formRef = useRef<HTMLFormElement | null>(null);
  const [v, setV] = useState<HandOffValues>(INITIAL_HAND_OFF);
  const [templateId, setTemplateId] = useState("");
  const [templateName, setTemplateName] = useState("");
  const [saving, setSaving] = useState(false);
  const [savingOpen, setSavingOpen] = useState(false);
  const [notice, setNotice] = useState<Notice>(null);
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
      // participants[0] is the target; the rest are the rotation.
      const rotationField = /^participants\[[1-9]\d*\]$/.test(failed.field);
      const field = failed.field.replace(/\[\d+\]$/, "");
      const key = rotationField
        ? "rotation"
        : field === "participants"
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
        participants: plan.start.participants,
      }),
    );
  }, [handOff.partial, plan]);

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

  /** "To": a person or agent from the lists, or "another agent" whose id is typed. */
  const chooseTarget = (id: string, other: boolean): void => {
    setOtherTarget(other);
    set("target", other ? "" : id);
  };

  const chooseTemplate = (id: string): void => {
    apply(templates.templates.find((t) => t.id === id));
    if (id === "") setV(INITIAL_HAND_OFF);
    onTemplateChange(id);
  };

  const renameTemplate = (name: string): void => {
    setTemplateName(name);
    if (errors.templateName) setErrors((x) => ({ ...x, templateName: undefined }));
  };

  const toggleEscalation = (on: boolean): void => {
    setV((prev) => ({
      ...prev,
      escalate: on,
      // Lead approval: the approvers are the ones to tell, unless chosen otherwise.
      escalateNotify:
        on && (prev.escalateNotify ?? []).length === 0 && prev.policy === "approval" ? [...prev.approvers] : (prev.escalateNotify ?? []),
    }));
    if (errors.escalate) setErrors((x) => ({ ...x, escalate: undefined }));
    handOff.reset();
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
      setNotice({ ok: false, text: `The template was not saved: ${withoutCode(err)}` });
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
      setNotice({ ok: false, text: `The template was not deleted: ${withoutCode(err)}` });
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

  /** "Start over" after a partial hand-off: what was sent stays sent. */
  const startOver = (): void => {
    handOff.discard();
    setV(INITIAL_HAND_OFF);
  };

  const lines = handOff.state.plan && handOff.state.progress ? progressLines(handOff.state.plan, handOff.state.progress) : [];
  const showLines =
    lines.length > 0 &&
    (handOff.state.pending ||
      handOff.partial ||
      handOff.state.progress?.failed !== undefined ||
      handOff.state.progress?.done.length === lines.length);
  const interrupted = handOff.partial && !handOff.state.pending && handOff.state.progress?.failed === undefined;

  return {
    formRef,
    v,
    set,
    errors,
    locked,
    handOff,
    choices,
    approvers,
    otherTarget,
    chooseTarget,
    targetName,
    room,
    runbookBytes,
    readFile,
    toggleEscalation,
    submit,
    startOver,
    notice,
    lines: showLines ? lines : [],
    interrupted,
    template: {
      id: templateId,
      name: templateName,
      saving,
      savingOpen,
      setSavingOpen,
      choose: chooseTemplate,
      rename: renameTemplate,
      save: saveTemplate,
      remove: deleteTemplate,
    },
  };
}

export type HandOffDialogState = ReturnType<typeof useHandOffDialog>;
