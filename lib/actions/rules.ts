// The console's action contract: the one place that says what each field of
// an ActionService request may hold. Both edges use it, each in its own
// words: the gateway (lib/gateway/action-input.ts) turns a problem into an
// INVALID_ARGUMENT naming the request field, the forms
// (lib/client/action-forms.ts) into a sentence next to the input. Nothing
// here is copied anywhere else. Pure and isomorphic: no Node or browser APIs.
import { isValidParticipantId } from "@/lib/authz/decide";
import { MAX_TTL_MS } from "@/lib/macp/constants";

export const LIMITS = Object.freeze({
  intent: 500,
  scope: 200,
  reason: 1_000,
  title: 200,
  instructions: 10_000,
  message: 2_000,
  summary: 2_000,
  status: 64,
  errorCode: 64,
  contextId: 200,
  link: 2_048,
  contentType: 255,
  approvers: 20,
  frozenContextBytes: 65_536,
  defaultTtlMs: 3_600_000,
  maxTtlMs: MAX_TTL_MS,
  minImplicitAcceptMs: 1_000,
  /** handoff_id / task_id naming an existing record. */
  recordId: 256,
  /** A runbook written or uploaded in "Hand off…" (and kept in a template), in UTF-8 bytes; the runtime's payload limit may be lower. */
  runbookBytes: 131_072,
  /** A saved hand-off template's name. */
  templateName: 80,
  /** Saved hand-off templates per person. */
  templatesPerPerson: 20,
  /** A template id (the server makes UUIDs). */
  templateId: 64,
  /** Steps of one escalation chain ("Hand off…"). */
  escalationSteps: 5,
  /** Minutes before an escalation step: at least this many… */
  escalationMinMinutes: 1,
  /** …and at most this many (a day). */
  escalationMaxMinutes: 1_440,
  /** People one NOTIFY step tells. */
  escalationNotify: 20,
  /** "Hand off…": people also on the rotation (participants who may be offered it later), besides the target. */
  rotation: 20,
});

/** One step of an escalation chain, as both edges hold it. */
export interface EscalationStepInput {
  kind: "notify" | "reoffer";
  afterMinutes: number;
  participants: readonly string[];
}

/** A chain's problem, with the request field it belongs to (e.g. "steps[1].participants[0]"). */
export interface EscalationProblem {
  field: string;
  problem: Problem;
}

/**
 * The escalation chain's one schema: 1 to LIMITS.escalationSteps steps; each
 * waits a whole number of minutes (LIMITS.escalationMinMinutes to
 * escalationMaxMinutes) of the offer being unanswered; a NOTIFY step names 1
 * to LIMITS.escalationNotify participants, a REOFFER step exactly one, who is
 * neither the owner nor the person already offered to at that point, nor
 * offered to twice. Returns the cleaned chain (ids trimmed, repeats dropped)
 * or the first problem.
 */
export function checkEscalationChain(
  steps: readonly EscalationStepInput[],
  ctx: { owner: string; firstTarget: string },
): { value: EscalationStepInput[]; problem?: EscalationProblem } {
  const out: EscalationStepInput[] = [];
  const fail = (field: string, problem: Problem) => ({ value: out, problem: { field, problem } });
  if (steps.length === 0) return fail("steps", { code: "required" });
  if (steps.length > LIMITS.escalationSteps)
    return fail("steps", { code: "escalation", detail: `at most ${LIMITS.escalationSteps} steps` });
  let target = ctx.firstTarget;
  const offered = new Set<string>([ctx.firstTarget]);
  for (const [i, step] of steps.entries()) {
    const at = `steps[${i}]`;
    if (step.kind !== "notify" && step.kind !== "reoffer")
      return fail(`${at}.kind`, { code: "escalation", detail: "choose notify or reoffer" });
    const m = step.afterMinutes;
    if (!Number.isInteger(m) || m < LIMITS.escalationMinMinutes || m > LIMITS.escalationMaxMinutes) {
      return fail(`${at}.after_minutes`, {
        code: "escalation",
        detail: `must be a whole number of minutes from ${LIMITS.escalationMinMinutes} to ${LIMITS.escalationMaxMinutes}`,
      });
    }
    const ids: string[] = [];
    for (const [j, raw] of step.participants.entries()) {
      const c = checkParticipant(raw);
      if (c.problem) return fail(`${at}.participants[${j}]`, c.problem);
      if (!ids.includes(c.value)) ids.push(c.value);
    }
    if (step.kind === "notify") {
      if (ids.length === 0) return fail(`${at}.participants`, { code: "escalation", detail: "name who is told (the approvers, a lead)" });
      if (ids.length > LIMITS.escalationNotify)
        return fail(`${at}.participants`, { code: "escalation", detail: `at most ${LIMITS.escalationNotify} people per step` });
    } else {
      if (ids.length !== 1) return fail(`${at}.participants`, { code: "escalation", detail: "name exactly one person to re-offer to" });
      const next = ids[0] as string;
      if (next === ctx.owner) return fail(`${at}.participants[0]`, { code: "escalation", detail: "is you: re-offer to someone else" });
      if (next === target) return fail(`${at}.participants[0]`, { code: "escalation", detail: "already has the offer at that point" });
      if (offered.has(next)) return fail(`${at}.participants[0]`, { code: "escalation", detail: "was offered to earlier in the chain" });
      offered.add(next);
      target = next;
    }
    out.push({ kind: step.kind, afterMinutes: m, participants: ids });
  }
  return { value: out };
}

/**
 * "Also on the rotation" of a hand-off (or a template): participant ids that
 * join the session besides the target, so the owner can re-offer to them
 * after a decline. At most LIMITS.rotation; ids trimmed, blanks and repeats
 * dropped, and the owner and the target left out (they are in the session
 * anyway). Returns the cleaned list or the first problem with its index
 * (-1: the list as a whole).
 */
export function checkRotation(
  raw: readonly string[],
  ctx: { owner?: string; target?: string } = {},
): { value: string[]; problem?: { index: number; problem: Problem } } {
  const value: string[] = [];
  for (const [i, r] of raw.entries()) {
    const c = checkParticipant(r, false);
    if (c.problem) return { value, problem: { index: i, problem: c.problem } };
    if (c.value === "" || c.value === ctx.owner || c.value === ctx.target || value.includes(c.value)) continue;
    value.push(c.value);
  }
  if (value.length > LIMITS.rotation)
    return { value, problem: { index: -1, problem: { code: "too-many", count: value.length, max: LIMITS.rotation } } };
  return { value };
}

/** Runbook files "Hand off…" takes, by extension: text the runbook textarea can hold. */
export const RUNBOOK_FILE_EXTENSIONS: readonly string[] = Object.freeze(["md", "markdown", "txt"]);

/** A runbook file's extension problem: only .md, .markdown and .txt. */
export function checkRunbookFileName(name: string): Problem | undefined {
  const ext = name.includes(".") ? (name.split(".").pop() ?? "").toLowerCase() : "";
  return RUNBOOK_FILE_EXTENSIONS.includes(ext) ? undefined : { code: "runbook-file" };
}

/**
 * An optional runbook (Markdown text): within `maxBytes` (at most
 * LIMITS.runbookBytes), no NUL characters. Blank is no runbook.
 */
export function checkRunbook(text: string, maxBytes: number = LIMITS.runbookBytes): Problem | undefined {
  if (text.trim() === "") return undefined;
  const max = Math.min(maxBytes, LIMITS.runbookBytes);
  const bytes = byteLength(text);
  if (bytes > max) return { code: "too-large", bytes, max };
  if (text.includes("\u0000")) return { code: "nul" };
  return undefined;
}

/** A runbook file's bytes as text: UTF-8 (a byte-order mark dropped), within the runbook limit. */
export function runbookFileText(data: Uint8Array, maxBytes: number = LIMITS.runbookBytes): Checked<string> {
  const max = Math.min(maxBytes, LIMITS.runbookBytes);
  if (data.byteLength === 0) return { value: "", problem: { code: "required" } };
  if (data.byteLength > max) return { value: "", problem: { code: "too-large", bytes: data.byteLength, max } };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(data);
  } catch {
    return { value: "", problem: { code: "not-utf8" } };
  }
  const problem = checkRunbook(text, max);
  return problem ? { value: text, problem } : { value: text };
}

/** Room left in an envelope for the fields around an upload (ids, content type). */
export const ENVELOPE_OVERHEAD_BYTES = 1_024;

/** What can be wrong with one field's value. */
export type Problem =
  | { code: "required" }
  | { code: "too-long"; length: number; max: number }
  | { code: "too-large"; bytes: number; max: number }
  | { code: "control" }
  | { code: "line-break" }
  | { code: "pattern" }
  | { code: "not-participant" }
  | { code: "not-json"; detail: string }
  | { code: "not-url" }
  | { code: "url-scheme" }
  | { code: "url-credentials" }
  | { code: "not-mime" }
  | { code: "active-type"; essence: string }
  | { code: "not-utf8" }
  | { code: "nul" }
  | { code: "spaces" }
  | { code: "runbook-file" }
  | { code: "escalation"; detail: string }
  | { code: "too-many"; count: number; max: number };

export interface Checked<T> {
  value: T;
  problem?: Problem;
}

// Control characters other than tab, newline and carriage return.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const LINE_BREAK = /[\r\n]/;

export interface TextRule {
  max: number;
  required?: boolean;
  /** Free text: line breaks allowed. Otherwise a single line. */
  multiline?: boolean;
  /** What the (non-empty) value must match, e.g. STATUS_PATTERN. */
  pattern?: RegExp;
}

/** A task status: one word, e.g. in_progress. */
export const STATUS_PATTERN = /^[A-Za-z0-9_.-]+$/;
/** A task failure's error code, e.g. TIMEOUT or upstream:503. */
export const ERROR_CODE_PATTERN = /^[A-Za-z0-9_.:-]+$/;

/** Trimmed text within its rule. */
export function checkText(raw: string, rule: TextRule): Checked<string> {
  const value = raw.trim();
  if (value === "") return rule.required ? { value, problem: { code: "required" } } : { value };
  if (value.length > rule.max) return { value, problem: { code: "too-long", length: value.length, max: rule.max } };
  if (CONTROL.test(value)) return { value, problem: { code: "control" } };
  if (!rule.multiline && LINE_BREAK.test(value)) return { value, problem: { code: "line-break" } };
  if (rule.pattern && !rule.pattern.test(value)) return { value, problem: { code: "pattern" } };
  return { value };
}

/** A participant id (1–512 characters, no spaces), trimmed. */
export function checkParticipant(raw: string, required = true): Checked<string> {
  const value = raw.trim();
  if (value === "") return required ? { value, problem: { code: "required" } } : { value };
  return isValidParticipantId(value) ? { value } : { value, problem: { code: "not-participant" } };
}

/** An optional handoff_id / task_id naming an existing record. */
export function checkRecordId(raw: string): Checked<string> {
  const value = raw.trim();
  if (value.length > LIMITS.recordId) return { value, problem: { code: "too-long", length: value.length, max: LIMITS.recordId } };
  if (/\s/.test(value)) return { value, problem: { code: "spaces" } };
  return { value };
}

const encoder = new TextEncoder();

export function byteLength(text: string): number {
  return encoder.encode(text).byteLength;
}

/** Optional JSON text within a size (kept as typed: agents read it as sent). */
export function checkJsonText(raw: string, maxBytes: number): Checked<string> {
  if (raw.trim() === "") return { value: "" };
  const bytes = byteLength(raw);
  if (bytes > maxBytes) return { value: raw, problem: { code: "too-large", bytes, max: maxBytes } };
  try {
    JSON.parse(raw);
  } catch (e) {
    return { value: raw, problem: { code: "not-json", detail: (e as Error).message } };
  }
  return { value: raw };
}

/** A context link: http(s), no user name or password. The value is the URL as the runtime gets it. */
export function checkLink(raw: string): Checked<string> {
  const value = raw.trim();
  if (value === "") return { value, problem: { code: "required" } };
  if (value.length > LIMITS.link) return { value, problem: { code: "too-long", length: value.length, max: LIMITS.link } };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { value, problem: { code: "not-url" } };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { value, problem: { code: "url-scheme" } };
  if (url.username !== "" || url.password !== "") return { value, problem: { code: "url-credentials" } };
  return { value: url.href };
}

/** Types a browser would run scripts in if it ever opened them inline: refused as context. */
export const ACTIVE_TYPES: ReadonlySet<string> = new Set([
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

const TOKEN = "[A-Za-z0-9!#$&^_.+-]+";
const MIME = new RegExp(`^(${TOKEN})/(${TOKEN})((\\s*;\\s*${TOKEN}=(${TOKEN}|"[^"\\\\\\r\\n]*"))*)$`);

/** A content type checked for syntax and against active content: lowercased type/subtype, parameters kept. */
export function checkContentType(raw: string): Checked<string> & { essence?: string } {
  const value = raw.trim();
  if (value === "") return { value, problem: { code: "required" } };
  if (value.length > LIMITS.contentType) return { value, problem: { code: "too-long", length: value.length, max: LIMITS.contentType } };
  const m = MIME.exec(value);
  if (!m) return { value, problem: { code: "not-mime" } };
  const essence = `${(m[1] as string).toLowerCase()}/${(m[2] as string).toLowerCase()}`;
  if (ACTIVE_TYPES.has(essence)) return { value, essence, problem: { code: "active-type", essence } };
  return { value: `${essence}${m[3] ?? ""}`, essence };
}

/** Context bytes: not empty, within `maxBytes`, UTF-8 when the type is text/*. */
export function checkContextBytes(data: Uint8Array, essence: string, maxBytes: number): Problem | undefined {
  if (data.byteLength === 0) return { code: "required" };
  if (data.byteLength > maxBytes) return { code: "too-large", bytes: data.byteLength, max: maxBytes };
  if (essence.startsWith("text/")) {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(data);
    } catch {
      return { code: "not-utf8" };
    }
  }
  return undefined;
}

/** Markdown context: not blank, no NUL characters, within `maxBytes`. */
export function checkMarkdown(text: string, maxBytes: number): Problem | undefined {
  if (text.trim() === "") return { code: "required" };
  const bytes = byteLength(text);
  if (bytes > maxBytes) return { code: "too-large", bytes, max: maxBytes };
  if (text.includes("\u0000")) return { code: "nul" };
  return undefined;
}

/**
 * The fields of each action's request that are plain text, by request field
 * (the proto's name) with the form field that edits it. Both edges check
 * them with checkText against these rules.
 */
export const TEXT_FIELDS = Object.freeze({
  intent: { field: "intent", form: "intent", rule: { required: true, max: LIMITS.intent } },
  scope: { field: "scope", form: "scope", rule: { max: LIMITS.scope } },
  reason: { field: "reason", form: "reason", rule: { max: LIMITS.reason, multiline: true } },
  authorityScope: { field: "authority_scope", form: "authorityScope", rule: { max: LIMITS.scope } },
  contextId: { field: "context_id", form: "contextId", rule: { max: LIMITS.contextId } },
  title: { field: "title", form: "title", rule: { required: true, max: LIMITS.title } },
  instructions: { field: "instructions", form: "instructions", rule: { max: LIMITS.instructions, multiline: true } },
  status: { field: "status", form: "status", rule: { max: LIMITS.status, pattern: STATUS_PATTERN } },
  message: { field: "message", form: "message", rule: { max: LIMITS.message, multiline: true } },
  summary: { field: "summary", form: "summary", rule: { max: LIMITS.summary, multiline: true } },
  errorCode: { field: "error_code", form: "errorCode", rule: { required: true, max: LIMITS.errorCode, pattern: ERROR_CODE_PATTERN } },
  /** "Hand off…": the scope is what the whole session is about, so it is required there. */
  handOffScope: { field: "scope", form: "scope", rule: { required: true, max: LIMITS.scope } },
  templateName: { field: "name", form: "templateName", rule: { required: true, max: LIMITS.templateName } },
} satisfies Record<string, { field: string; form: string; rule: TextRule }>);

/**
 * The form field a request field's problem belongs to ("content.markdown" →
 * "markdown", "participants[2]" → "participants"), so a server-side
 * FieldViolation shows next to the right input.
 */
export function formFieldOf(requestField: string): string {
  const base = requestField.replace(/\[\d+\]$/, "");
  const map: Record<string, string> = {
    "content.markdown": "markdown",
    "content.link": "link",
    "content.file.data": "file",
    "content.file.content_type": "file",
    ttl_ms: "ttlMinutes",
    implicit_accept_timeout_ms: "implicitAcceptSeconds",
    frozen_context_json: "frozenContext",
    input_json: "inputJson",
    deadline_unix_ms: "deadline",
  };
  for (const t of Object.values(TEXT_FIELDS)) map[t.field] = t.form;
  return map[base] ?? base;
}
