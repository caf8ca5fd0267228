// Validation of the console's action forms, before anything is sent: each
// function takes what the inputs hold (strings, choices, files as bytes) and
// returns either the request fields for the ActionService or one message per
// wrong field, worded for people (form-wording.ts). The forms that start a
// session (New session, Hand off…, templates) are start-forms.ts, exported
// from here too: this is the forms' one entry. What each field may hold is
// the action contract, lib/actions/rules.ts, which the gateway checks again
// (lib/gateway/action-input.ts) in its own words. Who may do what is decided
// by lib/authz/decide, never here. Pure.

import {
  ACTIVE_TYPES,
  byteLength,
  checkContextBytes,
  checkLink,
  checkMarkdown,
  ENVELOPE_OVERHEAD_BYTES,
  formFieldOf,
} from "@/lib/actions/rules";
import { HandoffOutcome, TaskOutcome } from "@/lib/gen/baton/v1/actions_pb";
import type { ActionOutcome } from "@/lib/views/action-attempt";
import { formatBytes } from "@/lib/views/format";
import { done, jsonText, participant, sentence, text, type Errors, type Validation } from "@/lib/client/form-wording";

export { byteLength, ENVELOPE_OVERHEAD_BYTES, formFieldOf };
export { jsonProblem, type Errors, type Validation } from "@/lib/client/form-wording";
export * from "@/lib/client/start-forms";

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
