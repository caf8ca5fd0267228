// The checks every action's fields share: the per-attempt message id, the
// session id, texts, participant and record ids, JSON text and content types,
// each on the action contract (lib/actions/rules.ts) and worded for API
// callers as an INVALID_ARGUMENT naming the field, with a FieldViolation
// detail the browser can attach to the right input.
import { Code, ConnectError } from "@connectrpc/connect";
import { FieldViolationSchema } from "@/lib/gen/baton/v1/actions_pb";
import {
  checkContentType,
  checkJsonText,
  checkParticipant,
  checkRecordId,
  checkText,
  TEXT_FIELDS,
  type Problem,
  type TextRule,
} from "@/lib/actions/rules";
import { isValidSessionId } from "@/lib/macp/ids";

/** INVALID_ARGUMENT for one field, with a FieldViolation detail. */
export function invalidField(field: string, description: string): ConnectError {
  return new ConnectError(`${field}: ${description}`, Code.InvalidArgument, undefined, [
    { desc: FieldViolationSchema, value: { field, description } },
  ]);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The client's per-attempt id: a UUID, lowercased. */
export function messageIdOf(raw: string, field = "message_id"): string {
  if (raw === "") throw invalidField(field, "is required: a UUID made once per attempt and reused on retry");
  const id = raw.toLowerCase();
  if (!UUID.test(id)) throw invalidField(field, `must be a UUID like 3f0c…-…, got "${shorten(raw)}"`);
  return id;
}

export function sessionIdOf(raw: string, field = "session_id"): string {
  if (raw === "") throw invalidField(field, "is required");
  if (!isValidSessionId(raw)) throw invalidField(field, `"${shorten(raw)}" is not a valid MACP session id`);
  return raw;
}

function shorten(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** How a field's problem reads to an API caller (after the field's name). */
export function describe(problem: Problem, value: string, patternHint = "has characters that are not allowed"): string {
  switch (problem.code) {
    case "required":
      return "is required";
    case "too-long":
      return `is ${problem.length} characters; at most ${problem.max} are allowed`;
    case "too-large":
      return `is ${problem.bytes} bytes; at most ${problem.max} are allowed`;
    case "control":
      return "contains control characters";
    case "line-break":
      return "must be a single line";
    case "pattern":
      return patternHint;
    case "not-participant":
      return `"${shorten(value)}" is not a valid participant id (1–512 characters, no spaces)`;
    case "not-json":
      return `is not valid JSON: ${problem.detail}`;
    case "not-url":
      return `"${shorten(value)}" is not a URL`;
    case "url-scheme":
      return "must be an http:// or https:// URL";
    case "url-credentials":
      return "must not contain a user name or password";
    case "not-mime":
      return `"${shorten(value)}" is not a MIME type like text/markdown or application/pdf`;
    case "active-type":
      return `${problem.essence} is not accepted: browsers run scripts in it; upload it as a file of another type (e.g. text/plain)`;
    case "not-utf8":
      return "is not UTF-8 text";
    case "nul":
      return "contains NUL characters";
    case "spaces":
      return "must not contain spaces";
    case "runbook-file":
      return "must be a .md, .markdown or .txt file";
    case "escalation":
      return problem.detail;
    case "too-many":
      return `has ${problem.count}; at most ${problem.max} are allowed`;
  }
}

/** Trimmed text within bounds, without control characters. */
export function textOf(field: string, raw: string, rule: TextRule, patternHint?: string): string {
  const { value, problem } = checkText(raw, rule);
  if (problem) throw invalidField(field, describe(problem, value, patternHint));
  return value;
}

/** A text field of the action contract (lib/actions/rules.ts, TEXT_FIELDS). */
export function contractText(key: keyof typeof TEXT_FIELDS, raw: string, patternHint?: string): string {
  const t = TEXT_FIELDS[key];
  return textOf(t.field, raw, t.rule, patternHint);
}

export function participantOf(field: string, raw: string, required = true): string {
  const { value, problem } = checkParticipant(raw, required);
  if (problem) throw invalidField(field, describe(problem, value));
  return value;
}

/** Optional handoff_id / task_id naming an existing record. */
export function optionalIdOf(field: string, raw: string): string {
  const { value, problem } = checkRecordId(raw);
  if (problem?.code === "too-long") throw invalidField(field, `is longer than ${problem.max} characters`);
  if (problem) throw invalidField(field, describe(problem, value));
  return value;
}

export function jsonTextOf(field: string, raw: string, maxBytes: number): string {
  const { value, problem } = checkJsonText(raw, maxBytes);
  if (problem) throw invalidField(field, describe(problem, value));
  return value;
}

/** A content type checked for syntax and against active content; lowercased type/subtype. */
export function contentTypeOf(field: string, raw: string): string {
  const { value, problem } = checkContentType(raw);
  if (problem?.code === "too-long") throw invalidField(field, `is longer than ${problem.max} characters`);
  if (problem) throw invalidField(field, describe(problem, value));
  return value;
}

export interface SessionMessageInput {
  sessionId: string;
  messageId: string;
}

export function sessionMessage(req: { sessionId: string; messageId: string }): SessionMessageInput {
  return { sessionId: sessionIdOf(req.sessionId), messageId: messageIdOf(req.messageId) };
}
