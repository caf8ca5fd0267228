"use client";
// "New session": start a handoff or a task as the signed-in person — intent,
// scope, participants (people and agents from the directory, or a typed
// agent id), time to live, governance policy (default, lead approval with the
// approvers, or implicit accept after a timeout) and optional frozen context.
// Validated here (lib/client/action-forms), authorized with decide(), sent
// once per attempt (lib/client/use-action-form.ts).

import { useRouter } from "next/navigation";
import { useCallback, useMemo, useRef, useState } from "react";
import { decide } from "@/lib/authz/decide";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { LIMITS } from "@/lib/actions/rules";
import { jsonProblem, validateNewSession, type Errors, type NewSessionValues } from "@/lib/client/action-forms";
import { approverChoices, participantChoices, type Directory } from "@/lib/views/directory";
import { ROLE_LABELS, type WhoAmI } from "@/lib/views/sign-in";
import { sessionHref } from "@/lib/views/route-params";
import { actionClient } from "@/lib/client/transport";
import { useActionForm } from "@/lib/client/use-action-form";
import { Icon } from "@/components/ui/Icon";
import { ActionResultLine, Button, CheckRow, Field, TextArea, TextInput, inputClass } from "@/components/ui/forms";
import { PolicyChoiceFields, type PolicyOptions } from "@/features/hand-off/PolicyChoiceFields";

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

const NEW_SESSION_POLICIES: PolicyOptions = [
  ["default", "Default", "Only you, the owner, commit the outcome."],
  ["approval", "Requires lead approval", "Only the approvers you pick may commit; your own commit is refused."],
  ["implicit", "Implicit accept", "An offer nobody answers within the timeout counts as accepted (handoffs only)."],
];

const FIELD_ORDER = ["intent", "scope", "participants", "ttlMinutes", "policy", "approvers", "implicitAcceptSeconds", "frozenContext"];

export function NewSessionForm({ me, directory }: { me: WhoAmI; directory: Directory }) {
  const router = useRouter();
  const [v, setV] = useState<NewSessionValues>(INITIAL);
  const [typed, setTyped] = useState("");
  const formRef = useRef<HTMLFormElement | null>(null);
  const actor = { role: me.role, participantId: me.participantId };
  const choices = useMemo(() => participantChoices(directory, me.participantId), [directory, me.participantId]);
  const approvers = useMemo(() => approverChoices(directory), [directory]);
  const typedIds = v.participants.filter((p) => !choices.people.some((u) => u.participantId === p) && !choices.agents.includes(p));

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

  if (!canStart.allowed) {
    return (
      <p className="rounded-md border border-slate-300 px-3 py-2 text-sm dark:border-slate-700" data-testid="start-denied">
        {canStart.reason}
      </p>
    );
  }

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

  return (
    <form ref={formRef} onSubmit={form.onSubmit} noValidate className="space-y-6" data-testid="new-session-form">
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
                onChange={() => {
                  set("kind", k);
                  if (k === "task" && v.policy === "implicit") set("policy", "default");
                }}
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

      <fieldset className="space-y-2" aria-describedby={errors.participants ? "ns-participants-error" : "ns-participants-hint"}>
        <legend className="text-sm font-medium">Participants</legend>
        <p id="ns-participants-hint" className="text-xs text-slate-600 dark:text-slate-400">
          You ({me.participantId}) take part as the owner. Pick people and agents, or type an agent id.
        </p>
        {choices.people.length > 0 ? (
          <div>
            <p className="px-2 text-xs font-semibold text-slate-700 uppercase dark:text-slate-300">People</p>
            <ul className="grid gap-0.5 sm:grid-cols-2" data-testid="participant-people">
              {choices.people.map((p) => (
                <CheckRow
                  key={p.participantId}
                  id={`ns-p-${p.username}`}
                  checked={v.participants.includes(p.participantId)}
                  onChange={(on) => toggle(p.participantId, on)}
                >
                  <span className="font-medium">{p.displayName}</span>{" "}
                  <span className="text-xs text-slate-700 dark:text-slate-300">
                    {ROLE_LABELS[p.role]} · <span className="font-mono">{p.participantId}</span>
                  </span>
                </CheckRow>
              ))}
            </ul>
          </div>
        ) : null}
        {choices.agents.length > 0 ? (
          <div>
            <p className="px-2 text-xs font-semibold text-slate-700 uppercase dark:text-slate-300">Agents seen recently</p>
            <ul className="grid gap-0.5 sm:grid-cols-2">
              {choices.agents.slice(0, 12).map((a, i) => (
                <CheckRow key={a} id={`ns-a-${i}`} checked={v.participants.includes(a)} onChange={(on) => toggle(a, on)}>
                  <span className="font-mono text-xs break-all">{a}</span>
                </CheckRow>
              ))}
            </ul>
          </div>
        ) : null}
        <div className="flex flex-wrap items-end gap-2">
          <div className="min-w-0 flex-1 space-y-1">
            <label htmlFor="ns-typed" className="block text-xs font-medium text-slate-700 dark:text-slate-300">
              Agent id
            </label>
            <input
              id="ns-typed"
              data-field="participants"
              className={inputClass}
              value={typed}
              placeholder="agent://team/name"
              onChange={(e) => setTyped(e.currentTarget.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter") {
                  e.preventDefault();
                  addTyped();
                }
              }}
              spellCheck={false}
              autoCapitalize="none"
            />
          </div>
          <Button onClick={addTyped} data-testid="add-participant">
            Add
          </Button>
        </div>
        {typedIds.length > 0 ? (
          <ul className="flex flex-wrap gap-1.5" aria-label="Typed participant ids">
            {typedIds.map((id) => (
              <li
                key={id}
                className="inline-flex items-center gap-1 rounded-full bg-slate-100 py-0.5 pr-1 pl-2.5 font-mono text-xs dark:bg-slate-800"
              >
                {id}
                <button
                  type="button"
                  onClick={() => toggle(id, false)}
                  className="rounded-full p-0.5 hover:bg-slate-200 dark:hover:bg-slate-700"
                  aria-label={`Remove ${id}`}
                >
                  <Icon name="x" className="h-3 w-3" />
                </button>
              </li>
            ))}
          </ul>
        ) : null}
        {errors.participants ? (
          <p
            id="ns-participants-error"
            className="flex items-start gap-1 text-xs font-medium text-red-800 dark:text-red-300"
            data-field-error
          >
            <Icon name="alert" className="mt-px h-3.5 w-3.5" /> {errors.participants}
          </p>
        ) : null}
      </fieldset>

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
        approvers={approvers}
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
