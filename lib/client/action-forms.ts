// Validation of the console's action forms, before anything is sent: each
// function takes what the inputs hold (strings, choices, files as bytes) and
// returns either the request fields for the ActionService or one message per
// wrong field, worded for people. What each field may hold is the action
// contract, lib/actions/rules.ts, which the gateway checks again
// (lib/gateway/action-input.ts) in its own words. Who may do what is decided
// by lib/authz/decide, never here. Pure.

import {
  byteLength,
  checkRunbook,
  checkRunbookFileName,
  runbookFileText,
  checkContextBytes,
  checkJsonText,
  checkLink,
  checkMarkdown,
  checkParticipant,
  checkText,
  ACTIVE_TYPES,
  ENVELOPE_OVERHEAD_BYTES,
  formFieldOf,
  LIMITS,
  TEXT_FIELDS,
  type Problem,
} from "@/lib/actions/rules";
import { checkEscalationChain, type EscalationStepInput } from "@/lib/actions/rules";
import { HandoffOutcome, PolicyChoice, SessionKind, TaskOutcome, type HandoffTemplate } from "@/lib/gen/baton/v1/actions_pb";
import type { ActionOutcome } from "@/lib/views/action-attempt";
import { formatBytes } from "@/lib/views/format";

export { byteLength, ENVELOPE_OVERHEAD_BYTES, formFieldOf };

export type Errors = Partial<Record<string, string>>;
export type Validation<T> = { ok: true; value: T } | { ok: false; errors: Errors };

const n = (v: number): string => v.toLocaleString("en-US");

/** How a field's problem reads to a person. `label` names what to enter ("a reason"). */
function sentence(problem: Problem, value: string, label: string, patternHint = "Remove the characters that are not allowed."): string {
  switch (problem.code) {
    case "required":
      return `Enter ${label}.`;
    case "too-long":
      return `Use at most ${n(problem.max)} characters (now ${n(problem.length)}).`;
    case "too-large":
      return `It is ${formatBytes(problem.bytes)}; at most ${formatBytes(problem.max)} fit.`;
    case "control":
      return "Remove the control characters.";
    case "line-break":
      return "Keep it on one line.";
    case "pattern":
      return patternHint;
    case "not-participant":
      return `"${value.slice(0, 60)}" isn't a participant id: no spaces, at most 512 characters.`;
    case "not-json":
      return `This isn't valid JSON: ${problem.detail}`;
    case "not-url":
      return "This isn't a link like https://wiki.example.com/runbook.";
    case "url-scheme":
      return "Use an http:// or https:// link.";
    case "url-credentials":
      return "Remove the user name and password from the link.";
    case "not-mime":
      return "This isn't a content type like text/markdown.";
    case "active-type":
      return `${problem.essence} files are refused because browsers run scripts in them; attach it as a .txt file.`;
    case "not-utf8":
      return "This is not UTF-8 text.";
    case "nul":
      return "Remove the NUL characters.";
    case "spaces":
      return "Remove the spaces.";
    case "runbook-file":
      return "Choose a .md, .markdown or .txt file.";
    case "escalation":
      return `${problem.detail.charAt(0).toUpperCase()}${problem.detail.slice(1)}.`;
  }
}

/** A text field of the action contract (TEXT_FIELDS), or the problem with it under its form field. */
function text(
  errors: Errors,
  key: keyof typeof TEXT_FIELDS,
  raw: string,
  label: string,
  opts: { required?: boolean; patternHint?: string } = {},
): string {
  const f = TEXT_FIELDS[key];
  const { value, problem } = checkText(raw, { ...f.rule, required: opts.required ?? ("required" in f.rule && f.rule.required) });
  if (problem) errors[f.form] = sentence(problem, value, label, opts.patternHint);
  return value;
}

function participant(errors: Errors, field: string, raw: string, label: string, required = true): string {
  const { value, problem } = checkParticipant(raw, required);
  if (problem) errors[field] = problem.code === "required" ? `Choose ${label}.` : sentence(problem, value, label);
  return value;
}

function jsonText(errors: Errors, field: string, raw: string, maxBytes: number): string {
  const { value, problem } = checkJsonText(raw, maxBytes);
  if (problem) errors[field] = sentence(problem, value, "JSON");
  return value;
}

/** What is wrong with an optional JSON text, or undefined (for checking a field on blur). */
export function jsonProblem(raw: string, maxBytes: number): string | undefined {
  const errors: Errors = {};
  jsonText(errors, "json", raw, maxBytes);
  return errors.json;
}

/** A whole number in [min, max], or the problem with it. */
function wholeNumber(errors: Errors, field: string, raw: string, min: number, max: number, what: string): number {
  const t = raw.trim();
  const v = Number(t);
  if (t === "" || !Number.isInteger(v) || v < min || v > max) {
    errors[field] = `Enter ${what} from ${n(min)} to ${n(max)}.`;
    return min;
  }
  return v;
}

function done<T>(errors: Errors, value: T): Validation<T> {
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, value };
}

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

  let policy = PolicyChoice.DEFAULT;
  let approvers: string[] = [];
  let implicitAcceptTimeoutMs = 0;
  if (v.policy === "approval") {
    policy = PolicyChoice.LEAD_APPROVAL;
    approvers = [...new Set(v.approvers.map((a) => a.trim()).filter((a) => a !== ""))];
    if (approvers.length === 0) errors.approvers = "Choose at least one approver.";
    else if (approvers.length > LIMITS.approvers) errors.approvers = `Choose at most ${LIMITS.approvers} approvers.`;
  } else if (v.policy === "implicit") {
    if (v.kind !== "handoff") errors.policy = "Implicit accept only exists for handoffs.";
    policy = PolicyChoice.IMPLICIT_ACCEPT;
    implicitAcceptTimeoutMs =
      wholeNumber(
        errors,
        "implicitAcceptSeconds",
        v.implicitAcceptSeconds,
        LIMITS.minImplicitAcceptMs / 1000,
        LIMITS.maxTtlMs / 1000,
        "a timeout in seconds",
      ) * 1000;
  }
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
  // The session: the target (and any approvers) with the same rules as "New session".
  const start = validateNewSession(
    {
      kind: "handoff",
      intent: scope === "" ? "-" : scope,
      scope,
      participants: target === "" ? [] : [target],
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
  const scope = text(errors, "scope", v.scope, "a scope");
  const reason = text(errors, "reason", v.reason, "a reason");
  const problem = checkRunbook(v.runbook, LIMITS.runbookBytes);
  if (problem) errors.runbook = runbookSentence(problem, LIMITS.runbookBytes);
  const minutes = wholeNumber(errors, "ttlMinutes", v.ttlMinutes, 1, LIMITS.maxTtlMs / 60_000, "a time to live in minutes");
  let policy = PolicyChoice.DEFAULT;
  let approvers: string[] = [];
  let implicitAcceptTimeoutMs = 0;
  if (v.policy === "approval") {
    policy = PolicyChoice.LEAD_APPROVAL;
    approvers = [...new Set(v.approvers.map((a) => a.trim()).filter((a) => a !== ""))];
    if (approvers.length > LIMITS.approvers) errors.approvers = `Choose at most ${LIMITS.approvers} approvers.`;
  } else if (v.policy === "implicit") {
    policy = PolicyChoice.IMPLICIT_ACCEPT;
    implicitAcceptTimeoutMs =
      wholeNumber(
        errors,
        "implicitAcceptSeconds",
        v.implicitAcceptSeconds,
        LIMITS.minImplicitAcceptMs / 1000,
        LIMITS.maxTtlMs / 1000,
        "a timeout in seconds",
      ) * 1000;
  }
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
  });
}

/** A saved template as the form's values. */
export function handOffValuesOf(t: Omit<TemplateFields, "id" | "name">): HandOffValues {
  return {
    target: t.target,
    scope: t.scope,
    reason: t.reason,
    runbook: t.runbookMarkdown,
    ttlMinutes: String(Math.max(1, Math.round((t.ttlMs || LIMITS.defaultTtlMs) / 60_000))),
    policy: t.policy === PolicyChoice.LEAD_APPROVAL ? "approval" : t.policy === PolicyChoice.IMPLICIT_ACCEPT ? "implicit" : "default",
    approvers: [...t.approvers],
    implicitAcceptSeconds: t.implicitAcceptTimeoutMs > 0 ? String(Math.round(t.implicitAcceptTimeoutMs / 1000)) : "300",
  };
}

// ------------------------------------------------------------------ handoff

export interface OfferValues {
  target: string;
  scope: string;
  reason: string;
}

export function validateOffer(v: OfferValues): Validation<{ target: string; scope: string; reason: string }> {
  const errors: Errors = {};
  const target = participant(errors, "target", v.target, "who receives the offer");
  const scope = text(errors, "scope", v.scope, "a scope");
  const reason = text(errors, "reason", v.reason, "a reason");
  return done(errors, { target, scope, reason });
}

const EXTENSION_TYPES: Readonly<Record<string, string>> = {
  md: "text/markdown; charset=utf-8",
  markdown: "text/markdown; charset=utf-8",
  txt: "text/plain; charset=utf-8",
  log: "text/plain; charset=utf-8",
  json: "application/json",
  yaml: "application/yaml",
  yml: "application/yaml",
  csv: "text/csv; charset=utf-8",
  pdf: "application/pdf",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  zip: "application/zip",
};

/** A file's content type: the browser's, else one guessed from the extension, else octet-stream. */
export function contentTypeForFile(name: string, browserType: string): string {
  const ext = name.includes(".") ? (name.split(".").pop() ?? "").toLowerCase() : "";
  const guessed = EXTENSION_TYPES[ext];
  const t = browserType.trim().toLowerCase();
  // Browsers often report Markdown as "" or text/x-markdown.
  if (guessed && (t === "" || t === "text/x-markdown" || t === "application/octet-stream")) return guessed;
  if (t === "") return "application/octet-stream";
  if (t.startsWith("text/") && !t.includes("charset")) return `${t}; charset=utf-8`;
  return t;
}

export type AttachValues =
  | { kind: "markdown"; markdown: string }
  | { kind: "file"; file: { name: string; type: string; bytes: Uint8Array } | null }
  | { kind: "link"; link: string };

export type AttachContent =
  | { case: "markdown"; value: string }
  | { case: "file"; value: { contentType: string; data: Uint8Array } }
  | { case: "link"; value: string };

export function validateAttach(v: AttachValues, maxPayloadBytes: number): Validation<AttachContent> {
  const errors: Errors = {};
  const room = Math.max(0, maxPayloadBytes - ENVELOPE_OVERHEAD_BYTES);
  switch (v.kind) {
    case "markdown": {
      const problem = checkMarkdown(v.markdown, room);
      if (problem?.code === "required") errors.markdown = "Paste the runbook's Markdown.";
      else if (problem?.code === "too-large")
        errors.markdown = `It is ${formatBytes(problem.bytes)}; at most ${formatBytes(room)} fit in one message.`;
      else if (problem) errors.markdown = sentence(problem, v.markdown, "the runbook's Markdown");
      return done(errors, { case: "markdown", value: v.markdown });
    }
    case "file": {
      const f = v.file;
      if (!f) {
        errors.file = "Choose a file.";
        return { ok: false, errors };
      }
      const contentType = contentTypeForFile(f.name, f.type);
      const essence = contentType.split(";")[0]?.trim() ?? "";
      const problem =
        ACTIVE_TYPES.has(essence) && f.bytes.byteLength > 0 && f.bytes.byteLength <= room
          ? { code: "active-type" as const, essence }
          : checkContextBytes(f.bytes, essence, room);
      if (problem?.code === "required") errors.file = "The file is empty.";
      else if (problem?.code === "too-large")
        errors.file = `${f.name} is ${formatBytes(problem.bytes)}; at most ${formatBytes(room)} fit in one message.`;
      else if (problem?.code === "not-utf8") errors.file = `${f.name} is not UTF-8 text, but its type is ${essence}.`;
      else if (problem) errors.file = sentence(problem, f.name, "a file");
      return done(errors, { case: "file", value: { contentType, data: f.bytes } });
    }
    case "link": {
      const { value, problem } = checkLink(v.link);
      if (problem?.code === "required") errors.link = "Enter a link.";
      else if (problem?.code === "too-long") errors.link = `Use at most ${problem.max} characters.`;
      else if (problem) errors.link = sentence(problem, value, "a link");
      return done(errors, { case: "link", value: problem ? "" : v.link.trim() });
    }
  }
}

export function validateReason(raw: string, required: boolean): Validation<{ reason: string }> {
  const errors: Errors = {};
  const reason = text(errors, "reason", raw, "a reason", { required });
  return done(errors, { reason });
}

export interface CommitValues {
  outcome: "accepted" | "declined";
  authorityScope: string;
  reason: string;
}

export function validateCommit(v: CommitValues): Validation<{ outcome: HandoffOutcome; authorityScope: string; reason: string }> {
  const errors: Errors = {};
  const authorityScope = text(errors, "authorityScope", v.authorityScope, "an authority scope");
  const reason = text(errors, "reason", v.reason, "a reason");
  return done(errors, {
    outcome: v.outcome === "accepted" ? HandoffOutcome.ACCEPTED : HandoffOutcome.DECLINED,
    authorityScope,
    reason,
  });
}

// --------------------------------------------------------------------- task

export interface TaskRequestValues {
  title: string;
  instructions: string;
  assignee: string;
  inputJson: string;
  /** A datetime-local value ("2026-03-01T09:30") or "". */
  deadline: string;
}

export function validateTaskRequest(
  v: TaskRequestValues,
  maxPayloadBytes: number,
  now: number,
): Validation<{ title: string; instructions: string; assignee: string; inputJson: string; deadlineUnixMs: bigint }> {
  const errors: Errors = {};
  const title = text(errors, "title", v.title, "a title");
  const instructions = text(errors, "instructions", v.instructions, "instructions");
  const assignee = participant(errors, "assignee", v.assignee, "an assignee", false);
  const inputJson = jsonText(errors, "inputJson", v.inputJson, Math.max(0, maxPayloadBytes - ENVELOPE_OVERHEAD_BYTES));
  let deadlineUnixMs = 0n;
  if (v.deadline.trim() !== "") {
    const ms = Date.parse(v.deadline);
    if (Number.isNaN(ms)) errors.deadline = "Enter a date and time.";
    else if (ms <= now) errors.deadline = "Choose a time in the future.";
    else deadlineUnixMs = BigInt(ms);
  }
  return done(errors, { title, instructions, assignee, inputJson, deadlineUnixMs });
}

export interface TaskUpdateValues {
  /** Percent, 0–100. */
  progress: string;
  status: string;
  message: string;
}

export function validateTaskUpdate(v: TaskUpdateValues): Validation<{ progress: number; status: string; message: string }> {
  const errors: Errors = {};
  const t = v.progress.trim();
  const pct = Number(t);
  if (t === "" || !Number.isFinite(pct) || pct < 0 || pct > 100) errors.progress = "Enter a progress from 0 to 100 %.";
  const status = text(errors, "status", v.status, "a status", {
    patternHint: "Use one word: letters, digits, _ . or -, e.g. in_progress.",
  });
  const message = text(errors, "message", v.message, "a message");
  return done(errors, { progress: Math.round(pct * 10) / 1000, status, message });
}

export function validateTaskComplete(
  v: { output: string; summary: string },
  maxPayloadBytes: number,
): Validation<{ output: Uint8Array; summary: string }> {
  const errors: Errors = {};
  const summary = text(errors, "summary", v.summary, "a summary", { required: true });
  const bytes = new TextEncoder().encode(v.output.trim());
  const room = Math.max(0, maxPayloadBytes - ENVELOPE_OVERHEAD_BYTES);
  if (bytes.byteLength > room) errors.output = `The output is ${formatBytes(bytes.byteLength)}; at most ${formatBytes(room)} fit.`;
  return done(errors, { output: bytes, summary });
}

export function validateTaskFail(v: {
  errorCode: string;
  reason: string;
  retryable: boolean;
}): Validation<{ errorCode: string; reason: string; retryable: boolean }> {
  const errors: Errors = {};
  const errorCode = text(errors, "errorCode", v.errorCode, "an error code", {
    patternHint: "Use letters, digits, _ . : or -, e.g. TIMEOUT.",
  });
  const reason = text(errors, "reason", v.reason, "what went wrong", { required: true });
  return done(errors, { errorCode, reason, retryable: v.retryable });
}

export function validateTaskCommit(v: { outcome: "completed" | "failed"; authorityScope: string; reason: string }): Validation<{
  outcome: TaskOutcome;
  authorityScope: string;
  reason: string;
}> {
  const errors: Errors = {};
  const authorityScope = text(errors, "authorityScope", v.authorityScope, "an authority scope");
  const reason = text(errors, "reason", v.reason, "a reason");
  return done(errors, { outcome: v.outcome === "completed" ? TaskOutcome.COMPLETED : TaskOutcome.FAILED, authorityScope, reason });
}

/** The server's field error from an outcome, keyed by form field, or null. */
export function serverFieldErrors(outcome: ActionOutcome | undefined): Errors | null {
  return outcome?.kind === "invalid" && outcome.field ? { [formFieldOf(outcome.field)]: outcome.description } : null;
}
