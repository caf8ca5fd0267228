// Validation of ActionService requests at the edge, before anything is read
// from or sent to the runtime. Pure: every function takes the request (and,
// where a rule needs it, the users file's records) and returns clean values
// or throws a ConnectError INVALID_ARGUMENT naming the field, with a
// FieldViolation detail the browser can attach to the right input.
import { Code, ConnectError } from "@connectrpc/connect";
import {
  HandoffOutcome,
  PolicyChoice,
  SessionKind,
  TaskOutcome,
  FieldViolationSchema,
  type AttachContextRequest,
  type CancelRequest,
  type CommitRequest,
  type OfferRequest,
  type RespondRequest,
  type StartSessionRequest,
  type TaskCommitRequest,
  type TaskCompleteRequest,
  type TaskFailRequest,
  type TaskRequestRequest,
  type TaskRespondRequest,
  type TaskUpdateRequest,
} from "@/lib/gen/baton/v1/actions_pb";
import type { UserRecord } from "@/lib/accounts/users-file";
import { isValidParticipantId } from "@/lib/authz/decide";
import { roleAtLeast } from "@/lib/authz/roles";
import { HANDOFF_MODE, MAX_PARTICIPANTS, MAX_TTL_MS, TASK_MODE } from "@/lib/macp/constants";
import { isValidSessionId } from "@/lib/macp/ids";

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
  minImplicitAcceptMs: 1_000,
});

/** INVALID_ARGUMENT for one field, with a FieldViolation detail. */
export function invalidField(field: string, description: string): ConnectError {
  return new ConnectError(`${field}: ${description}`, Code.InvalidArgument, undefined, [
    { desc: FieldViolationSchema, value: { field, description } },
  ]);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
// Control characters other than tab, newline and carriage return.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const LINE_BREAK = /[\r\n]/;

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

interface TextRule {
  required?: boolean;
  max: number;
  /** Allow line breaks (free text); single-line otherwise. */
  multiline?: boolean;
}

/** Trimmed text within bounds, without control characters. */
export function textOf(field: string, raw: string, rule: TextRule): string {
  const value = raw.trim();
  if (value === "") {
    if (rule.required) throw invalidField(field, "is required");
    return "";
  }
  if (value.length > rule.max) throw invalidField(field, `is ${value.length} characters; at most ${rule.max} are allowed`);
  if (CONTROL.test(value)) throw invalidField(field, "contains control characters");
  if (!rule.multiline && LINE_BREAK.test(value)) throw invalidField(field, "must be a single line");
  return value;
}

export function participantOf(field: string, raw: string, required = true): string {
  const id = raw.trim();
  if (id === "") {
    if (required) throw invalidField(field, "is required");
    return "";
  }
  if (!isValidParticipantId(id)) {
    throw invalidField(field, `"${shorten(id)}" is not a valid participant id (1–512 characters, no spaces)`);
  }
  return id;
}

/** Optional handoff_id / task_id naming an existing record. */
export function optionalIdOf(field: string, raw: string): string {
  const id = raw.trim();
  if (id.length > 256) throw invalidField(field, "is longer than 256 characters");
  if (/\s/.test(id)) throw invalidField(field, "must not contain spaces");
  return id;
}

export function jsonTextOf(field: string, raw: string, maxBytes: number): string {
  if (raw.trim() === "") return "";
  const bytes = Buffer.byteLength(raw, "utf8");
  if (bytes > maxBytes) throw invalidField(field, `is ${bytes} bytes; at most ${maxBytes} are allowed`);
  try {
    JSON.parse(raw);
  } catch (e) {
    throw invalidField(field, `is not valid JSON: ${(e as Error).message}`);
  }
  return raw;
}

// ---------------------------------------------------------------- start

export type PolicyRequest =
  | { kind: "default" }
  | { kind: "approval"; approvers: readonly string[] }
  | { kind: "implicit"; timeoutMs: number };

export interface StartInput {
  messageId: string;
  mode: typeof HANDOFF_MODE | typeof TASK_MODE;
  intent: string;
  scope: string;
  /** The initiator first, then the requested participants and approvers, without repeats. */
  participants: string[];
  ttlMs: number;
  policy: PolicyRequest;
  frozenContextJson: string;
  contextId: string;
}

/**
 * A StartSession request checked against the users file: human participants
 * (`human:` ids) must be known, enabled users; approvers must be enabled
 * approver or admin users. The initiator and the approvers are added to the
 * participants when missing.
 */
export function parseStart(req: StartSessionRequest, initiator: string, users: readonly UserRecord[]): StartInput {
  const messageId = messageIdOf(req.messageId);
  let mode: StartInput["mode"];
  if (req.kind === SessionKind.HANDOFF) mode = HANDOFF_MODE;
  else if (req.kind === SessionKind.TASK) mode = TASK_MODE;
  else throw invalidField("kind", "choose SESSION_KIND_HANDOFF or SESSION_KIND_TASK");
  const intent = textOf("intent", req.intent, { required: true, max: LIMITS.intent });
  const scope = textOf("scope", req.scope, { max: LIMITS.scope });

  const byParticipant = new Map(users.map((u) => [u.participantId, u]));
  const checkPerson = (field: string, id: string): void => {
    const user = byParticipant.get(id);
    if (user?.disabled === true) throw invalidField(field, `${user.displayName} (${id}) is disabled`);
    if (!user && id.startsWith("human:")) throw invalidField(field, `${id} is not a known user (see ListDirectory)`);
  };

  const participants: string[] = [initiator];
  const seen = new Set<string>([initiator]);
  req.participants.forEach((raw, i) => {
    const field = `participants[${i}]`;
    const id = participantOf(field, raw);
    if (seen.has(id)) {
      if (id === initiator) return; // listing oneself is fine
      throw invalidField(field, `${id} is listed twice`);
    }
    checkPerson(field, id);
    seen.add(id);
    participants.push(id);
  });

  let policy: PolicyRequest = { kind: "default" };
  switch (req.policy) {
    case PolicyChoice.UNSPECIFIED:
    case PolicyChoice.DEFAULT:
      if (req.approvers.length > 0) throw invalidField("approvers", "only apply with POLICY_CHOICE_LEAD_APPROVAL");
      if (req.implicitAcceptTimeoutMs !== 0) throw invalidField("implicit_accept_timeout_ms", "only applies with POLICY_CHOICE_IMPLICIT_ACCEPT");
      break;
    case PolicyChoice.LEAD_APPROVAL: {
      if (req.implicitAcceptTimeoutMs !== 0) throw invalidField("implicit_accept_timeout_ms", "only applies with POLICY_CHOICE_IMPLICIT_ACCEPT");
      if (req.approvers.length === 0) throw invalidField("approvers", "name at least one approver");
      if (req.approvers.length > LIMITS.approvers) throw invalidField("approvers", `at most ${LIMITS.approvers} approvers`);
      const approvers: string[] = [];
      req.approvers.forEach((raw, i) => {
        const field = `approvers[${i}]`;
        const id = participantOf(field, raw);
        const user = byParticipant.get(id);
        if (!user) throw invalidField(field, `${id} is not a known user; approvers must be users with the approver or admin role`);
        if (user.disabled === true) throw invalidField(field, `${user.displayName} (${id}) is disabled`);
        if (!roleAtLeast(user.role, "approver")) {
          throw invalidField(field, `${user.displayName} is ${user.role === "operator" ? "an operator" : "a viewer"}; approvers need the approver or admin role`);
        }
        if (approvers.includes(id)) throw invalidField(field, `${id} is listed twice`);
        approvers.push(id);
        if (!seen.has(id)) {
          seen.add(id);
          participants.push(id);
        }
      });
      policy = { kind: "approval", approvers: [...approvers].sort() };
      break;
    }
    case PolicyChoice.IMPLICIT_ACCEPT: {
      if (mode !== HANDOFF_MODE) throw invalidField("policy", "implicit accept only exists for handoffs");
      if (req.approvers.length > 0) throw invalidField("approvers", "only apply with POLICY_CHOICE_LEAD_APPROVAL");
      const t = req.implicitAcceptTimeoutMs;
      if (t < LIMITS.minImplicitAcceptMs || t > MAX_TTL_MS) {
        throw invalidField("implicit_accept_timeout_ms", `must be between ${LIMITS.minImplicitAcceptMs} and ${MAX_TTL_MS} ms`);
      }
      policy = { kind: "implicit", timeoutMs: t };
      break;
    }
    default:
      throw invalidField("policy", `unknown policy choice ${String(req.policy)}`);
  }

  if (participants.length < 2) throw invalidField("participants", "add at least one other participant");
  if (participants.length > MAX_PARTICIPANTS) throw invalidField("participants", `at most ${MAX_PARTICIPANTS} participants`);
  const ttlMs = req.ttlMs === 0 ? LIMITS.defaultTtlMs : req.ttlMs;
  if (ttlMs > MAX_TTL_MS) throw invalidField("ttl_ms", `must be at most ${MAX_TTL_MS} ms (24 hours)`);

  return {
    messageId,
    mode,
    intent,
    scope,
    participants,
    ttlMs,
    policy,
    frozenContextJson: jsonTextOf("frozen_context_json", req.frozenContextJson, LIMITS.frozenContextBytes),
    contextId: textOf("context_id", req.contextId, { max: LIMITS.contextId }),
  };
}

// -------------------------------------------------------------- handoff

export interface SessionMessageInput {
  sessionId: string;
  messageId: string;
}

function sessionMessage(req: { sessionId: string; messageId: string }): SessionMessageInput {
  return { sessionId: sessionIdOf(req.sessionId), messageId: messageIdOf(req.messageId) };
}

export interface OfferInput extends SessionMessageInput {
  target: string;
  scope: string;
  reason: string;
}

export function parseOffer(req: OfferRequest): OfferInput {
  return {
    ...sessionMessage(req),
    target: participantOf("target", req.target),
    scope: textOf("scope", req.scope, { max: LIMITS.scope }),
    reason: textOf("reason", req.reason, { max: LIMITS.reason, multiline: true }),
  };
}

export interface ContextInput extends SessionMessageInput {
  handoffId: string;
  contentType: string;
  data: Uint8Array;
  /** Request field that holds the content, for size errors. */
  field: string;
}

const TOKEN = "[A-Za-z0-9!#$&^_.+-]+";
const MIME = new RegExp(`^(${TOKEN})/(${TOKEN})((\\s*;\\s*${TOKEN}=(${TOKEN}|"[^"\\\\\\r\\n]*"))*)$`);
/** Types a browser would run scripts in if it ever opened them inline. */
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

/** A content type checked for syntax and against active content; lowercased type/subtype. */
export function contentTypeOf(field: string, raw: string): string {
  const value = raw.trim();
  if (value === "") throw invalidField(field, "is required");
  if (value.length > LIMITS.contentType) throw invalidField(field, `is longer than ${LIMITS.contentType} characters`);
  const m = MIME.exec(value);
  if (!m) throw invalidField(field, `"${shorten(value)}" is not a MIME type like text/markdown or application/pdf`);
  const essence = `${(m[1] as string).toLowerCase()}/${(m[2] as string).toLowerCase()}`;
  if (ACTIVE_TYPES.has(essence)) throw invalidField(field, `${essence} is not accepted: browsers run scripts in it; upload it as a file of another type (e.g. text/plain)`);
  return `${essence}${m[3] ?? ""}`;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

export function parseAttachContext(req: AttachContextRequest): ContextInput {
  const base = { ...sessionMessage(req), handoffId: optionalIdOf("handoff_id", req.handoffId) };
  const content = req.content;
  switch (content.case) {
    case "file": {
      const contentType = contentTypeOf("content.file.content_type", content.value.contentType);
      const data = content.value.data;
      if (data.byteLength === 0) throw invalidField("content.file.data", "is empty");
      if (contentType.startsWith("text/")) {
        try {
          utf8.decode(data);
        } catch {
          throw invalidField("content.file.data", `is not UTF-8 text, but its content type is ${contentType}`);
        }
      }
      return { ...base, contentType, data, field: "content.file.data" };
    }
    case "markdown": {
      if (content.value.trim() === "") throw invalidField("content.markdown", "is empty");
      if (/\u0000/.test(content.value)) throw invalidField("content.markdown", "contains NUL characters");
      return { ...base, contentType: "text/markdown; charset=utf-8", data: new TextEncoder().encode(content.value), field: "content.markdown" };
    }
    case "link": {
      const raw = content.value.trim();
      if (raw === "") throw invalidField("content.link", "is empty");
      if (raw.length > LIMITS.link) throw invalidField("content.link", `is longer than ${LIMITS.link} characters`);
      let url: URL;
      try {
        url = new URL(raw);
      } catch {
        throw invalidField("content.link", `"${shorten(raw)}" is not a URL`);
      }
      if (url.protocol !== "https:" && url.protocol !== "http:") throw invalidField("content.link", "must be an http:// or https:// URL");
      if (url.username !== "" || url.password !== "") throw invalidField("content.link", "must not contain a user name or password");
      return { ...base, contentType: "text/uri-list", data: new TextEncoder().encode(`${url.href}\r\n`), field: "content.link" };
    }
    default:
      throw invalidField("content", "attach a file, markdown text or a link");
  }
}

export interface RespondInput extends SessionMessageInput {
  handoffId: string;
  reason: string;
}

export function parseRespond(req: RespondRequest): RespondInput {
  return {
    ...sessionMessage(req),
    handoffId: optionalIdOf("handoff_id", req.handoffId),
    reason: textOf("reason", req.reason, { max: LIMITS.reason, multiline: true }),
  };
}

export interface CommitInput extends SessionMessageInput {
  positive: boolean;
  authorityScope: string;
  reason: string;
}

export function parseCommit(req: CommitRequest): CommitInput {
  if (req.outcome !== HandoffOutcome.ACCEPTED && req.outcome !== HandoffOutcome.DECLINED) {
    throw invalidField("outcome", "choose HANDOFF_OUTCOME_ACCEPTED or HANDOFF_OUTCOME_DECLINED");
  }
  return {
    ...sessionMessage(req),
    positive: req.outcome === HandoffOutcome.ACCEPTED,
    authorityScope: textOf("authority_scope", req.authorityScope, { max: LIMITS.scope }),
    reason: textOf("reason", req.reason, { max: LIMITS.reason, multiline: true }),
  };
}

export interface CancelInput extends SessionMessageInput {
  reason: string;
}

export function parseCancel(req: CancelRequest): CancelInput {
  return { ...sessionMessage(req), reason: textOf("reason", req.reason, { max: LIMITS.reason, multiline: true }) };
}

// ----------------------------------------------------------------- task

export interface TaskRequestInput extends SessionMessageInput {
  title: string;
  instructions: string;
  assignee: string;
  inputJson: string;
  deadlineUnixMs: number;
}

export function parseTaskRequest(req: TaskRequestRequest, maxPayloadBytes: number): TaskRequestInput {
  const deadline = req.deadlineUnixMs;
  if (deadline < 0n || deadline > 32_503_680_000_000n) throw invalidField("deadline_unix_ms", "must be 0 (none) or a Unix time in milliseconds");
  return {
    ...sessionMessage(req),
    title: textOf("title", req.title, { required: true, max: LIMITS.title }),
    instructions: textOf("instructions", req.instructions, { max: LIMITS.instructions, multiline: true }),
    assignee: participantOf("assignee", req.assignee, false),
    inputJson: jsonTextOf("input_json", req.inputJson, maxPayloadBytes),
    deadlineUnixMs: Number(deadline),
  };
}

export interface TaskRespondInput extends SessionMessageInput {
  taskId: string;
  reason: string;
}

export function parseTaskRespond(req: TaskRespondRequest): TaskRespondInput {
  return {
    ...sessionMessage(req),
    taskId: optionalIdOf("task_id", req.taskId),
    reason: textOf("reason", req.reason, { max: LIMITS.reason, multiline: true }),
  };
}

export interface TaskUpdateInput extends SessionMessageInput {
  taskId: string;
  progress: number;
  status: string;
  message: string;
}

export function parseTaskUpdate(req: TaskUpdateRequest): TaskUpdateInput {
  if (!Number.isFinite(req.progress) || req.progress < 0 || req.progress > 1) {
    throw invalidField("progress", "must be a number from 0 to 1");
  }
  const status = textOf("status", req.status, { max: LIMITS.status }) || "in_progress";
  if (!/^[A-Za-z0-9_.-]+$/.test(status)) throw invalidField("status", "use letters, digits, '_', '.' or '-', e.g. in_progress");
  return {
    ...sessionMessage(req),
    taskId: optionalIdOf("task_id", req.taskId),
    progress: req.progress,
    status,
    message: textOf("message", req.message, { max: LIMITS.message, multiline: true }),
  };
}

export interface TaskCompleteInput extends SessionMessageInput {
  taskId: string;
  output: Uint8Array;
  summary: string;
}

export function parseTaskComplete(req: TaskCompleteRequest): TaskCompleteInput {
  return {
    ...sessionMessage(req),
    taskId: optionalIdOf("task_id", req.taskId),
    output: req.output,
    summary: textOf("summary", req.summary, { max: LIMITS.summary, multiline: true }),
  };
}

export interface TaskFailInput extends SessionMessageInput {
  taskId: string;
  errorCode: string;
  reason: string;
  retryable: boolean;
}

export function parseTaskFail(req: TaskFailRequest): TaskFailInput {
  const errorCode = textOf("error_code", req.errorCode, { required: true, max: LIMITS.errorCode });
  if (!/^[A-Za-z0-9_.:-]+$/.test(errorCode)) throw invalidField("error_code", "use letters, digits, '_', '.', ':' or '-', e.g. TIMEOUT");
  return {
    ...sessionMessage(req),
    taskId: optionalIdOf("task_id", req.taskId),
    errorCode,
    reason: textOf("reason", req.reason, { max: LIMITS.reason, multiline: true }),
    retryable: req.retryable,
  };
}

export interface TaskCommitInput extends SessionMessageInput {
  positive: boolean;
  authorityScope: string;
  reason: string;
}

export function parseTaskCommit(req: TaskCommitRequest): TaskCommitInput {
  if (req.outcome !== TaskOutcome.COMPLETED && req.outcome !== TaskOutcome.FAILED) {
    throw invalidField("outcome", "choose TASK_OUTCOME_COMPLETED or TASK_OUTCOME_FAILED");
  }
  return {
    ...sessionMessage(req),
    positive: req.outcome === TaskOutcome.COMPLETED,
    authorityScope: textOf("authority_scope", req.authorityScope, { max: LIMITS.scope }),
    reason: textOf("reason", req.reason, { max: LIMITS.reason, multiline: true }),
  };
}
