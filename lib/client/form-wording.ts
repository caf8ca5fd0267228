// How the console's forms word a problem with a field, for people: each
// helper checks one kind of input by the action contract (lib/actions/rules.ts)
// and writes its sentence under the form's field. Shared by the start forms
// (start-forms.ts) and the session's action forms (action-forms.ts). Pure.

import { checkJsonText, checkParticipant, checkText, TEXT_FIELDS, type Problem } from "@/lib/actions/rules";
import { formatBytes, formatCount } from "@/lib/views/format";

export type Errors = Partial<Record<string, string>>;
export type Validation<T> = { ok: true; value: T } | { ok: false; errors: Errors };

/** How a field's problem reads to a person. `label` names what to enter ("a reason"). */
export function sentence(
  problem: Problem,
  value: string,
  label: string,
  patternHint = "Remove the characters that are not allowed.",
): string {
  switch (problem.code) {
    case "required":
      return `Enter ${label}.`;
    case "too-long":
      return `Use at most ${formatCount(problem.max)} characters (now ${formatCount(problem.length)}).`;
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
    case "too-many":
      return `Choose at most ${problem.max} (${problem.count} chosen).`;
  }
}

/** A text field of the action contract (TEXT_FIELDS), or the problem with it under its form field. */
export function text(
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

export function participant(errors: Errors, field: string, raw: string, label: string, required = true): string {
  const { value, problem } = checkParticipant(raw, required);
  if (problem) errors[field] = problem.code === "required" ? `Choose ${label}.` : sentence(problem, value, label);
  return value;
}

export function jsonText(errors: Errors, field: string, raw: string, maxBytes: number): string {
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
export function wholeNumber(errors: Errors, field: string, raw: string, min: number, max: number, what: string): number {
  const t = raw.trim();
  const v = Number(t);
  if (t === "" || !Number.isInteger(v) || v < min || v > max) {
    errors[field] = `Enter ${what} from ${formatCount(min)} to ${formatCount(max)}.`;
    return min;
  }
  return v;
}

export function done<T>(errors: Errors, value: T): Validation<T> {
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, value };
}
