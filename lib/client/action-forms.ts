// Validation of the console's action forms, before anything is sent: each
// function takes what the inputs hold (strings, choices, files as bytes) and
// returns either the request fields for the ActionService or one message per
// wrong field, worded for people. The server validates again
// (lib/gateway/action-input.ts); the limits here mirror its LIMITS (a unit
// test keeps them equal). Who may do what is decided by lib/authz/decide,
// never here. Pure.

import { isValidParticipantId } from "@/lib/authz/decide";
import { HandoffOutcome, PolicyChoice, SessionKind, TaskOutcome } from "@/lib/gen/baton/v1/actions_pb";
import type { ActionOutcome } from "@/lib/client/action-attempt";
import { formatBytes } from "@/lib/client/format";

/** Mirrors LIMITS in lib/gateway/action-input.ts. */
export const FORM_LIMITS = Object.freeze({
  intent: 500,
  scope: 200,
  reason: 1_000,
  title: 200,
  instructions: 10_000,
  message: 2_000,
  summary: 2_000,
  status: 64,
  errorCode: 64,
  link: 2_048,
  approvers: 20,
  frozenContextBytes: 65_536,
  maxTtlMs: 86_400_000,
  minImplicitAcceptMs: 1_000,
});

/** Room left in an envelope for the fields around an upload (ids, content type). */
export const ENVELOPE_OVERHEAD_BYTES = 1_024;

export type Errors = Partial<Record<string, string>>;
export type Validation<T> = { ok: true; value: T } | { ok: false; errors: Errors };

const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const LINE_BREAK = /[\r\n]/;
const encoder = new TextEncoder();

export function byteLength(text: string): number {
  return encoder.encode(text).byteLength;
}

interface TextRule {
  label: string;
  max: number;
  required?: boolean;
  multiline?: boolean;
}

/** A trimmed text, or the problem with it. */
function text(errors: Errors, field: string, raw: string, rule: TextRule): string {
  const value = raw.trim();
  if (value === "") {
    if (rule.required) errors[field] = `Enter ${rule.label}.`;
    return "";
  }
  if (value.length > rule.max) errors[field] = `Use at most ${rule.max.toLocaleString("en-US")} characters (now ${value.length.toLocaleString("en-US")}).`;
  else if (CONTROL.test(value)) errors[field] = "Remove the control characters.";
  else if (!rule.multiline && LINE_BREAK.test(value)) errors[field] = "Keep it on one line.";
  return value;
}

function participant(errors: Errors, field: string, raw: string, label: string, required = true): string {
  const id = raw.trim();
  if (id === "") {
    if (required) errors[field] = `Choose ${label}.`;
    return "";
  }
  if (!isValidParticipantId(id)) errors[field] = `"${id.slice(0, 60)}" isn't a participant id: no spaces, at most 512 characters.`;
  return id;
}

function jsonText(errors: Errors, field: string, raw: string, maxBytes: number): string {
  if (raw.trim() === "") return "";
  const bytes = byteLength(raw);
  if (bytes > maxBytes) {
    errors[field] = `It is ${formatBytes(bytes)}; at most ${formatBytes(maxBytes)} fit.`;
    return raw;
  }
  try {
    JSON.parse(raw);
  } catch (e) {
    errors[field] = `This isn't valid JSON: ${(e as Error).message}`;
  }
  return raw;
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
  const n = Number(t);
  if (t === "" || !Number.isInteger(n) || n < min || n > max) {
    errors[field] = `Enter ${what} from ${min.toLocaleString("en-US")} to ${max.toLocaleString("en-US")}.`;
    return min;
  }
  return n;
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
  const intent = text(errors, "intent", v.intent, { label: "what the session is for", max: FORM_LIMITS.intent, required: true });
  const scope = text(errors, "scope", v.scope, { label: "a scope", max: FORM_LIMITS.scope });
  const participants: string[] = [];
  for (const raw of v.participants) {
    const id = raw.trim();
    if (id === "" || id === me || participants.includes(id)) continue;
    if (!isValidParticipantId(id)) {
      errors.participants = `"${id.slice(0, 60)}" isn't a participant id: no spaces, at most 512 characters.`;
      continue;
    }
    participants.push(id);
  }
  if (!errors.participants && participants.length === 0 && !(v.policy === "approval" && v.approvers.some((a) => a !== me))) {
    errors.participants = "Add at least one other participant.";
  }
  if (participants.length > 999) errors.participants = "A session can have at most 1000 participants.";
  const minutes = wholeNumber(errors, "ttlMinutes", v.ttlMinutes, 1, FORM_LIMITS.maxTtlMs / 60_000, "a time to live in minutes");

  let policy = PolicyChoice.DEFAULT;
  let approvers: string[] = [];
  let implicitAcceptTimeoutMs = 0;
  if (v.policy === "approval") {
    policy = PolicyChoice.LEAD_APPROVAL;
    approvers = [...new Set(v.approvers.map((a) => a.trim()).filter((a) => a !== ""))];
    if (approvers.length === 0) errors.approvers = "Choose at least one approver.";
    else if (approvers.length > FORM_LIMITS.approvers) errors.approvers = `Choose at most ${FORM_LIMITS.approvers} approvers.`;
  } else if (v.policy === "implicit") {
    if (v.kind !== "handoff") errors.policy = "Implicit accept only exists for handoffs.";
    policy = PolicyChoice.IMPLICIT_ACCEPT;
    implicitAcceptTimeoutMs =
      wholeNumber(errors, "implicitAcceptSeconds", v.implicitAcceptSeconds, FORM_LIMITS.minImplicitAcceptMs / 1000, FORM_LIMITS.maxTtlMs / 1000, "a timeout in seconds") *
      1000;
  }
  const frozenContextJson = jsonText(errors, "frozenContext", v.frozenContext, FORM_LIMITS.frozenContextBytes);
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

// ------------------------------------------------------------------ handoff

export interface OfferValues {
  target: string;
  scope: string;
  reason: string;
}

export function validateOffer(v: OfferValues): Validation<{ target: string; scope: string; reason: string }> {
  const errors: Errors = {};
  const target = participant(errors, "target", v.target, "who receives the offer");
  const scope = text(errors, "scope", v.scope, { label: "a scope", max: FORM_LIMITS.scope });
  const reason = text(errors, "reason", v.reason, { label: "a reason", max: FORM_LIMITS.reason, multiline: true });
  return done(errors, { target, scope, reason });
}

/** Types a browser would run scripts in (the server refuses them too). */
const ACTIVE_TYPES = new Set([
  "text/html",
  "application/xhtml+xml",
  "image/svg+xml",
  "text/javascript",
  "application/javascript",
  "application/ecmascript",
  "text/ecmascript",
  "text/xml",
  "application/xml",
  "text/xsl",
]);

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
      if (v.markdown.trim() === "") errors.markdown = "Paste the runbook's Markdown.";
      else if (byteLength(v.markdown) > room) errors.markdown = `It is ${formatBytes(byteLength(v.markdown))}; at most ${formatBytes(room)} fit in one message.`;
      else if (v.markdown.includes("\u0000")) errors.markdown = "Remove the NUL characters.";
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
      if (f.bytes.byteLength === 0) errors.file = "The file is empty.";
      else if (f.bytes.byteLength > room) errors.file = `${f.name} is ${formatBytes(f.bytes.byteLength)}; at most ${formatBytes(room)} fit in one message.`;
      else if (ACTIVE_TYPES.has(essence)) errors.file = `${essence} files are refused because browsers run scripts in them; attach it as a .txt file.`;
      else if (essence.startsWith("text/")) {
        try {
          new TextDecoder("utf-8", { fatal: true }).decode(f.bytes);
        } catch {
          errors.file = `${f.name} is not UTF-8 text, but its type is ${essence}.`;
        }
      }
      return done(errors, { case: "file", value: { contentType, data: f.bytes } });
    }
    case "link": {
      const raw = v.link.trim();
      let ok = false;
      if (raw === "") errors.link = "Enter a link.";
      else if (raw.length > FORM_LIMITS.link) errors.link = `Use at most ${FORM_LIMITS.link} characters.`;
      else {
        try {
          const url = new URL(raw);
          if (url.protocol !== "https:" && url.protocol !== "http:") errors.link = "Use an http:// or https:// link.";
          else if (url.username !== "" || url.password !== "") errors.link = "Remove the user name and password from the link.";
          else ok = true;
        } catch {
          errors.link = "This isn't a link like https://wiki.example.com/runbook.";
        }
      }
      return done(errors, { case: "link", value: ok ? raw : "" });
    }
  }
}

export function validateReason(raw: string, required: boolean): Validation<{ reason: string }> {
  const errors: Errors = {};
  const reason = text(errors, "reason", raw, { label: "a reason", max: FORM_LIMITS.reason, multiline: true, required });
  return done(errors, { reason });
}

export interface CommitValues {
  outcome: "accepted" | "declined";
  authorityScope: string;
  reason: string;
}

export function validateCommit(v: CommitValues): Validation<{ outcome: HandoffOutcome; authorityScope: string; reason: string }> {
  const errors: Errors = {};
  const authorityScope = text(errors, "authorityScope", v.authorityScope, { label: "an authority scope", max: FORM_LIMITS.scope });
  const reason = text(errors, "reason", v.reason, { label: "a reason", max: FORM_LIMITS.reason, multiline: true });
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
  const title = text(errors, "title", v.title, { label: "a title", max: FORM_LIMITS.title, required: true });
  const instructions = text(errors, "instructions", v.instructions, { label: "instructions", max: FORM_LIMITS.instructions, multiline: true });
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
  const status = text(errors, "status", v.status, { label: "a status", max: FORM_LIMITS.status });
  if (status !== "" && !errors.status && !/^[A-Za-z0-9_.-]+$/.test(status)) errors.status = "Use one word: letters, digits, _ . or -, e.g. in_progress.";
  const message = text(errors, "message", v.message, { label: "a message", max: FORM_LIMITS.message, multiline: true });
  return done(errors, { progress: Math.round(pct * 10) / 1000, status, message });
}

export function validateTaskComplete(
  v: { output: string; summary: string },
  maxPayloadBytes: number,
): Validation<{ output: Uint8Array; summary: string }> {
  const errors: Errors = {};
  const summary = text(errors, "summary", v.summary, { label: "a summary", max: FORM_LIMITS.summary, multiline: true, required: true });
  const bytes = encoder.encode(v.output.trim());
  const room = Math.max(0, maxPayloadBytes - ENVELOPE_OVERHEAD_BYTES);
  if (bytes.byteLength > room) errors.output = `The output is ${formatBytes(bytes.byteLength)}; at most ${formatBytes(room)} fit.`;
  return done(errors, { output: bytes, summary });
}

export function validateTaskFail(v: { errorCode: string; reason: string; retryable: boolean }): Validation<{ errorCode: string; reason: string; retryable: boolean }> {
  const errors: Errors = {};
  const errorCode = text(errors, "errorCode", v.errorCode, { label: "an error code", max: FORM_LIMITS.errorCode, required: true });
  if (errorCode !== "" && !errors.errorCode && !/^[A-Za-z0-9_.:-]+$/.test(errorCode)) {
    errors.errorCode = "Use letters, digits, _ . : or -, e.g. TIMEOUT.";
  }
  const reason = text(errors, "reason", v.reason, { label: "what went wrong", max: FORM_LIMITS.reason, multiline: true, required: true });
  return done(errors, { errorCode, reason, retryable: v.retryable });
}

export function validateTaskCommit(v: { outcome: "completed" | "failed"; authorityScope: string; reason: string }): Validation<{
  outcome: TaskOutcome;
  authorityScope: string;
  reason: string;
}> {
  const errors: Errors = {};
  const authorityScope = text(errors, "authorityScope", v.authorityScope, { label: "an authority scope", max: FORM_LIMITS.scope });
  const reason = text(errors, "reason", v.reason, { label: "a reason", max: FORM_LIMITS.reason, multiline: true });
  return done(errors, { outcome: v.outcome === "completed" ? TaskOutcome.COMPLETED : TaskOutcome.FAILED, authorityScope, reason });
}

/**
 * The form field a server-side FieldViolation belongs to ("content.markdown"
 * → "markdown", "participants[2]" → "participants"), so it shows next to the
 * right input.
 */
export function formFieldOf(serverField: string): string {
  const base = serverField.replace(/\[\d+\]$/, "");
  const map: Record<string, string> = {
    "content.markdown": "markdown",
    "content.link": "link",
    "content.file.data": "file",
    "content.file.content_type": "file",
    ttl_ms: "ttlMinutes",
    implicit_accept_timeout_ms: "implicitAcceptSeconds",
    frozen_context_json: "frozenContext",
    authority_scope: "authorityScope",
    input_json: "inputJson",
    deadline_unix_ms: "deadline",
    error_code: "errorCode",
  };
  return map[base] ?? base;
}

/** The server's field error from an outcome, keyed by form field, or null. */
export function serverFieldErrors(outcome: ActionOutcome | undefined): Errors | null {
  return outcome?.kind === "invalid" && outcome.field ? { [formFieldOf(outcome.field)]: outcome.description } : null;
}
