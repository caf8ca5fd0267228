"use client";
// useNewSessionForm(): the "New session" form's values, problems and steps
// (NewSessionForm.tsx draws them). Validated with lib/client/action-forms,
// authorized with decide() by the same participant rules as the server, sent
// once per attempt (lib/client/use-action-form.ts); a started session opens.

import { useRouter } from "next/navigation";
import { useCallback, useMemo, useRef, useState } from "react";
import { decide } from "@/lib/authz/decide";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { validateNewSession, type Errors, type NewSessionValues } from "@/lib/client/action-forms";
import { approverChoices, participantChoices, type Directory } from "@/lib/views/directory";
import type { WhoAmI } from "@/lib/views/sign-in";
import { sessionHref } from "@/lib/views/route-params";
import { actionClient } from "@/lib/client/transport";
import { useActionForm } from "@/lib/client/use-action-form";

const INITIAL: NewSessionValues = {
  kind: "handoff",
  intent: "",
  scope: "",
  participants: [],
  ttlMinutes: "60",
  policy: "default",
  approvers: [],
  implicitAcceptSeconds: "300",
  frozenContext: "",
};

const FIELD_ORDER = ["intent", "scope", "participants", "ttlMinutes", "policy", "approvers", "implicitAcceptSeconds", "frozenContext"];

export function useNewSessionForm(me: WhoAmI, directory: Directory) {
  const router = useRouter();
  const [v, setV] = useState<NewSessionValues>(INITIAL);
  const [typed, setTyped] = useState("");
  const formRef = useRef<HTMLFormElement | null>(null);
  const actor = { role: me.role, participantId: me.participantId };
  const choices = useMemo(() => participantChoices(directory, me.participantId), [directory, me.participantId]);
  const approvers = useMemo(() => approverChoices(directory), [directory]);

  const onOk = useCallback((o: { result: { sessionId: string } }) => router.push(sessionHref(o.result.sessionId)), [router]);
  const form = useActionForm({
    done: `Session started`,
    onOk,
    validate: () => {
      const checked = validateNewSession(v, me.participantId);
      if (!checked.ok) return checked;
      // The same participant rules the server applies (decide): unique, valid, me included.
      const d = decide(actor, undefined, "startSession", { start: { mode, participants: [...new Set(allParticipants)] } });
      if (!d.allowed) return { ok: false, errors: { participants: d.reason } };
      return checked;
    },
    send: (fields, messageId) => actionClient().startSession({ ...fields, messageId }),
    focus: (errs) => focusFirst(errs),
    focusServerErrors: true,
  });
  const { errors, setErrors, action } = form;
  const set = <K extends keyof NewSessionValues>(key: K, value: NewSessionValues[K]): void => {
    setV((prev) => ({ ...prev, [key]: value }));
    if (errors[key as string]) setErrors((e) => ({ ...e, [key]: undefined }));
    action.reset();
  };
  const toggle = (id: string, on: boolean): void =>
    set("participants", on ? [...v.participants.filter((x) => x !== id), id] : v.participants.filter((x) => x !== id));

  const mode = v.kind === "task" ? TASK_MODE : HANDOFF_MODE;
  const allParticipants = [me.participantId, ...v.participants, ...(v.policy === "approval" ? v.approvers : [])];
  const canStart = decide(actor, undefined, "startSession", { start: { mode } });

  const focusFirst = (errs: Errors): void => {
    const field = FIELD_ORDER.find((f) => errs[f]);
    if (!field) return;
    formRef.current?.querySelector<HTMLElement>(`[data-field="${field}"]`)?.focus();
  };

  const addTyped = (): void => {
    const id = typed.trim();
    if (id === "") return;
    if (/\s/.test(id)) {
      setErrors((e) => ({ ...e, participants: `"${id.slice(0, 60)}" isn't a participant id: no spaces.` }));
      return;
    }
    if (!v.participants.includes(id) && id !== me.participantId) set("participants", [...v.participants, id]);
    setTyped("");
  };

  /** A handoff or a task: implicit accept exists for handoffs only. */
  const chooseKind = (k: NewSessionValues["kind"]): void => {
    set("kind", k);
    if (k === "task" && v.policy === "implicit") set("policy", "default");
  };

  return { formRef, v, set, form, errors, setErrors, action, choices, approvers, canStart, typed, setTyped, addTyped, toggle, chooseKind };
}
