// Validation of the forms that start a session, before anything is sent:
// "New session" (a handoff or a task), the "Hand off…" dialog (SessionStart,
// the Offer, the runbook and an escalation chain from one form), its runbook
// files and its saved templates. Each returns the request fields or one
// sentence per wrong field (form-wording.ts). What each field may hold is the
// action contract, lib/actions/rules.ts; who may do what is decided by
// lib/authz/decide, never here. Pure.

import {
  checkEscalationChain,
  checkParticipant,
  checkRotation,
  checkRunbook,
  checkRunbookFileName,
  ENVELOPE_OVERHEAD_BYTES,
  LIMITS,
  runbookFileText,
  type EscalationStepInput,
  type Problem,
} from "@/lib/actions/rules";
import { PolicyChoice, SessionKind, type HandoffTemplate } from "@/lib/gen/baton/v1/actions_pb";
import { formatBytes } from "@/lib/views/format";
import { done, jsonText, participant, sentence, text, wholeNumber, type Errors, type Validation } from "@/lib/client/form-wording";

// ------------------------------------------------------------ new session

export type PolicyKind = "default" | "approval" | "implicit";

export interface NewSessionValues {
  kind: "handoff" | "task";
  intent: string;
  scope: string;
  /** Chosen participants besides the person starting the session. */
  participants: readonly string[];
  ttlMinutes: string;
  policy: PolicyKind;
  approvers: readonly string[];
  implicitAcceptSeconds: string;
  frozenContext: string;
}

export interface StartFields {
  kind: SessionKind;
  intent: string;
  scope: string;
  participants: string[];
  ttlMs: number;
  policy: PolicyChoice;
  approvers: string[];
  implicitAcceptTimeoutMs: number;
  frozenContextJson: string;
}

/** "Who may commit" as the request's policy fields, or the problems with them; a template may leave the approvers to pick later. */
function policyOf(
  errors: Errors,
  v: { policy: PolicyKind; approvers: readonly string[]; implicitAcceptSeconds: string },
  requireApprovers: boolean,
): { policy: PolicyChoice; approvers: string[]; implicitAcceptTimeoutMs: number } {
  if (v.policy === "approval") {
    const approvers = [...new Set(v.approvers.map((a) => a.trim()).filter((a) => a !== ""))];
    if (requireApprovers && approvers.length === 0) errors.approvers = "Choose at least one approver.";
    else if (approvers.length > LIMITS.approvers) errors.approvers = `Choose at most ${LIMITS.approvers} approvers.`;
    return { policy: PolicyChoice.LEAD_APPROVAL, approvers, implicitAcceptTimeoutMs: 0 };
  }
  if (v.policy === "implicit") {
    const seconds = wholeNumber(
      errors,
      "implicitAcceptSeconds",
      v.implicitAcceptSeconds,
      LIMITS.minImplicitAcceptMs / 1000,
      LIMITS.maxTtlMs / 1000,
      "a timeout in seconds",
    );
    return { policy: PolicyChoice.IMPLICIT_ACCEPT, approvers: [], implicitAcceptTimeoutMs: seconds * 1000 };
  }
  return { policy: PolicyChoice.DEFAULT, approvers: [], implicitAcceptTimeoutMs: 0 };
}

export function validateNewSession(v: NewSessionValues, me: string): Validation<StartFields> {
  const errors: Errors = {};
  const intent = text(errors, "intent", v.intent, "what the session is for");
  const scope = text(errors, "scope", v.scope, "a scope");
  const participants: string[] = [];
  for (const raw of v.participants) {
    const id = raw.trim();
    if (id === "" || id === me || participants.includes(id)) continue;
    const { problem } = checkParticipant(id);
    if (problem) {
      errors.participants = sentence(problem, id, "a participant");
      continue;
    }
    participants.push(id);
  }
  if (!errors.participants && participants.length === 0 && !(v.policy === "approval" && v.approvers.some((a) => a !== me))) {
    errors.participants = "Add at least one other participant.";
  }
  if (participants.length > 999) errors.participants = "A session can have at most 1000 participants.";
  const minutes = wholeNumber(errors, "ttlMinutes", v.ttlMinutes, 1, LIMITS.maxTtlMs / 60_000, "a time to live in minutes");

  if (v.policy === "implicit" && v.kind !== "handoff") errors.policy = "Implicit accept only exists for handoffs.";
  const { policy, approvers, implicitAcceptTimeoutMs } = policyOf(errors, v, true);
  const frozenContextJson = jsonText(errors, "frozenContext", v.frozenContext, LIMITS.frozenContextBytes);
  return done(errors, {
    kind: v.kind === "task" ? SessionKind.TASK : SessionKind.HANDOFF,
    intent,
    scope,
    participants,
    ttlMs: minutes * 60_000,
    policy,
    approvers,
    implicitAcceptTimeoutMs,
    frozenContextJson,
  });
}

// ---------------------------------------------------------------- hand off

/** "Hand off…": one form for SessionStart, Offer and the runbook as Context. */
export interface HandOffValues {
  target: string;
  /** "Also on the rotation": more participants of the session, who may be offered it later (after a decline). */
  rotation?: readonly string[];
  scope: string;
  reason: string;
  /** Markdown; blank: no runbook. */
  runbook: string;
  ttlMinutes: string;
  policy: PolicyKind;
  approvers: readonly string[];
  implicitAcceptSeconds: string;
  /** "Escalate if unanswered" (lib/gateway/escalations/): off by default. */
  escalate?: boolean;
  /** Who is told after escalateNotifyMinutes unanswered (none: no NOTIFY step). */
  escalateNotify?: readonly string[];
  escalateNotifyMinutes?: string;
  /** Who is offered it next, escalateReofferMinutes later ("" : no REOFFER step). */
  escalateReofferTo?: string;
  escalateReofferMinutes?: string;
}

export interface HandOffFields {
  start: StartFields;
  offer: { target: string; scope: string; reason: string };
  /** "" when there is no runbook to attach. */
  runbook: string;
  /** The escalation chain set up once the offer is sent (empty: none). */
  escalation: EscalationStepInput[];
}

/** The form's escalation as the contract's chain, or its problems under the form's fields. */
export function validateEscalation(v: HandOffValues, me: string, target: string): Validation<EscalationStepInput[]> {
  if (v.escalate !== true) return { ok: true, value: [] };
  const steps: EscalationStepInput[] = [];
  const fieldOf: string[] = [];
  const minutes = (raw: string | undefined) => (raw === undefined || raw.trim() === "" ? Number.NaN : Number(raw.trim()));
  if ((v.escalateNotify ?? []).length > 0) {
    steps.push({ kind: "notify", afterMinutes: minutes(v.escalateNotifyMinutes), participants: [...(v.escalateNotify ?? [])] });
    fieldOf.push("escalateNotify");
  }
  if ((v.escalateReofferTo ?? "").trim() !== "") {
    steps.push({ kind: "reoffer", afterMinutes: minutes(v.escalateReofferMinutes), participants: [(v.escalateReofferTo ?? "").trim()] });
    fieldOf.push("escalateReofferTo");
  }
  if (steps.length === 0) return { ok: false, errors: { escalate: "Choose whom to tell, whom to re-offer to, or both." } };
  const c = checkEscalationChain(steps, { owner: me, firstTarget: target });
  if (!c.problem) return { ok: true, value: c.value };
  const m = /^steps\[(\d+)\]\.(\w+)/.exec(c.problem.field);
  const base = m ? (fieldOf[Number(m[1])] ?? "escalate") : "escalate";
  const field = m?.[2] === "after_minutes" ? (base === "escalateNotify" ? "escalateNotifyMinutes" : "escalateReofferMinutes") : base;
  const text =
    c.problem.problem.code === "escalation" && m?.[2] === "after_minutes"
      ? `Use whole minutes from ${LIMITS.escalationMinMinutes} to ${LIMITS.escalationMaxMinutes}.`
      : sentence(c.problem.problem, "", "someone");
  return { ok: false, errors: { [field]: text } };
}

/** The room a runbook has: the contract's limit, or less when the runtime's message limit is lower. */
export function runbookRoom(maxPayloadBytes: number): number {
  return Math.min(LIMITS.runbookBytes, Math.max(0, maxPayloadBytes - ENVELOPE_OVERHEAD_BYTES));
}

function runbookSentence(problem: Problem, room: number): string {
  if (problem.code === "too-large") return `The runbook is ${formatBytes(problem.bytes)}; at most ${formatBytes(room)} fit.`;
  return sentence(problem, "", "the runbook");
}

export function validateHandOff(v: HandOffValues, me: string, maxPayloadBytes: number): Validation<HandOffFields> {
  const errors: Errors = {};
  const target = participant(errors, "target", v.target, "who takes it over");
  if (!errors.target && target === me) errors.target = "Choose someone else: you already hold it.";
  const scope = text(errors, "handOffScope", v.scope, "what you hand over");
  const reason = text(errors, "reason", v.reason, "a reason");
  const room = runbookRoom(maxPayloadBytes);
  const problem = checkRunbook(v.runbook, room);
  if (problem) errors.runbook = runbookSentence(problem, room);
  const rotation = rotationOf(errors, v.rotation, me, target);
  // The session: the target, the rest of the rotation (and any approvers) with the same rules as "New session".
  const start = validateNewSession(
    {
      kind: "handoff",
      intent: scope === "" ? "-" : scope,
      scope,
      participants: target === "" ? [] : [target, ...rotation],
      ttlMinutes: v.ttlMinutes,
      policy: v.policy,
      approvers: v.approvers,
      implicitAcceptSeconds: v.implicitAcceptSeconds,
      frozenContext: "",
    },
    me,
  );
  if (!start.ok) {
    for (const [k, msg] of Object.entries(start.errors)) {
      if (k === "participants" || k === "intent") continue; // said about the target or the scope already
      errors[k] = msg;
    }
  }
  const escalation = validateEscalation(v, me, target);
  if (!escalation.ok) Object.assign(errors, escalation.errors);
  if (!start.ok || !escalation.ok || Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: {
      start: start.value,
      offer: { target, scope, reason },
      runbook: v.runbook.trim() === "" ? "" : v.runbook,
      escalation: escalation.value,
    },
  };
}

/** "Also on the rotation" by the contract (checkRotation): the ids to add, or its problem under "rotation". */
function rotationOf(errors: Errors, raw: readonly string[] | undefined, me: string, target: string): string[] {
  const c = checkRotation(raw ?? [], { owner: me, target });
  if (c.problem) {
    const { index, problem } = c.problem;
    errors.rotation =
      index < 0 ? sentence(problem, "", "people") : sentence(problem, (raw ?? [])[index]?.trim() ?? "", "someone on the rotation");
  }
  return c.value;
}

/** A runbook file's text, or what is wrong with it (extension, size, encoding). */
export function readRunbookFile(name: string, data: Uint8Array, maxPayloadBytes: number): Validation<string> {
  const room = runbookRoom(maxPayloadBytes);
  const ext = checkRunbookFileName(name);
  if (ext) return { ok: false, errors: { runbook: `${name}: ${sentence(ext, name, "a file")}` } };
  const { value, problem } = runbookFileText(data, room);
  if (problem?.code === "required") return { ok: false, errors: { runbook: `${name} is empty.` } };
  if (problem?.code === "too-large")
    return { ok: false, errors: { runbook: `${name} is ${formatBytes(problem.bytes)}; at most ${formatBytes(room)} fit.` } };
  if (problem?.code === "not-utf8") return { ok: false, errors: { runbook: `${name} is not UTF-8 text.` } };
  if (problem) return { ok: false, errors: { runbook: `${name}: ${sentence(problem, name, "a file")}` } };
  return { ok: true, value };
}

/** What SaveHandoffTemplate takes: the generated HandoffTemplate's fields, without the server's time stamp. */
export type TemplateFields = Omit<HandoffTemplate, "$typeName" | "$unknown" | "updatedUnixMs">;

/**
 * The form as a template: everything is optional but the name; what is
 * filled in must be valid by the same contract as a hand-off.
 */
export function validateTemplate(v: HandOffValues, name: string, id: string): Validation<TemplateFields> {
  const errors: Errors = {};
  const templateName = text(errors, "templateName", name, "a name for the template");
  const target = participant(errors, "target", v.target, "who takes it over", false);
  const rotation = rotationOf(errors, v.rotation, "", target);
  const scope = text(errors, "scope", v.scope, "a scope");
  const reason = text(errors, "reason", v.reason, "a reason");
  const problem = checkRunbook(v.runbook, LIMITS.runbookBytes);
  if (problem) errors.runbook = runbookSentence(problem, LIMITS.runbookBytes);
  const minutes = wholeNumber(errors, "ttlMinutes", v.ttlMinutes, 1, LIMITS.maxTtlMs / 60_000, "a time to live in minutes");
  const { policy, approvers, implicitAcceptTimeoutMs } = policyOf(errors, v, false);
  return done(errors, {
    id,
    name: templateName,
    target,
    scope,
    reason,
    runbookMarkdown: v.runbook.trim() === "" ? "" : v.runbook,
    policy,
    approvers,
    implicitAcceptTimeoutMs,
    ttlMs: minutes * 60_000,
    participants: rotation,
  });
}

/** A saved template as the form's values. */
export function handOffValuesOf(t: Omit<TemplateFields, "id" | "name">): HandOffValues {
  return {
    target: t.target,
    rotation: t.participants.filter((p) => p !== t.target),
    scope: t.scope,
    reason: t.reason,
    runbook: t.runbookMarkdown,
    ttlMinutes: String(Math.max(1, Math.round((t.ttlMs || LIMITS.defaultTtlMs) / 60_000))),
    policy: t.policy === PolicyChoice.LEAD_APPROVAL ? "approval" : t.policy === PolicyChoice.IMPLICIT_ACCEPT ? "implicit" : "default",
    approvers: [...t.approvers],
    implicitAcceptSeconds: t.implicitAcceptTimeoutMs > 0 ? String(Math.round(t.implicitAcceptTimeoutMs / 1000)) : "300",
  };
}
