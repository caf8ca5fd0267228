// Validation of ActionService requests at the edge, before anything is read
// from or sent to the runtime. Pure: every function takes the request (and,
// where a rule needs it, the users file's records) and returns clean values
// or throws a ConnectError INVALID_ARGUMENT naming the field, with a
// FieldViolation detail the browser can attach to the right input. What each
// field may hold is the action contract, lib/actions/rules.ts (shared with
// the forms); this module words its problems for API callers.
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
import { roleAtLeast } from "@/lib/authz/roles";
import {
  checkContentType,
  checkContextBytes,
  checkJsonText,
  checkLink,
  checkParticipant,
  checkRecordId,
  checkText,
  LIMITS,
  TEXT_FIELDS,
  type Problem,
  type TextRule,
} from "@/lib/actions/rules";
import { HANDOFF_MODE, MAX_PARTICIPANTS, MAX_TTL_MS, TASK_MODE } from "@/lib/macp/constants";
import { isValidSessionId } from "@/lib/macp/ids";

export { LIMITS };

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
function describe(problem: Problem, value: string, patternHint = "has characters that are not allowed"): string {
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
  }
}

/** Trimmed text within bounds, without control characters. */
export function textOf(field: string, raw: string, rule: TextRule, patternHint?: string): string {
  const { value, problem } = checkText(raw, rule);
  if (problem) throw invalidField(field, describe(problem, value, patternHint));
  return value;
}

/** A text field of the action contract (lib/actions/rules.ts, TEXT_FIELDS). */
function contractText(key: keyof typeof TEXT_FIELDS, raw: string, patternHint?: string): string {
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

// ---------------------------------------------------------------- start

export type PolicyRequest =
  { kind: "default" } | { kind: "approval"; approvers: readonly string[] } | { kind: "implicit"; timeoutMs: number };

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
  const intent = contractText("intent", req.intent);
  const scope = contractText("scope", req.scope);

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
      if (req.implicitAcceptTimeoutMs !== 0)
        throw invalidField("implicit_accept_timeout_ms", "only applies with POLICY_CHOICE_IMPLICIT_ACCEPT");
      break;
    case PolicyChoice.LEAD_APPROVAL: {
      if (req.implicitAcceptTimeoutMs !== 0)
        throw invalidField("implicit_accept_timeout_ms", "only applies with POLICY_CHOICE_IMPLICIT_ACCEPT");
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
          throw invalidField(
            field,
            `${user.displayName} is ${user.role === "operator" ? "an operator" : "a viewer"}; approvers need the approver or admin role`,
          );
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
    contextId: contractText("contextId", req.contextId),
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
    scope: contractText("scope", req.scope),
    reason: contractText("reason", req.reason),
  };
}

export interface ContextInput extends SessionMessageInput {
  handoffId: string;
  contentType: string;
  data: Uint8Array;
  /** Request field that holds the content, for size errors. */
  field: string;
}

/** A content type checked for syntax and against active content; lowercased type/subtype. */
export function contentTypeOf(field: string, raw: string): string {
  const { value, problem } = checkContentType(raw);
  if (problem?.code === "too-long") throw invalidField(field, `is longer than ${problem.max} characters`);
  if (problem) throw invalidField(field, describe(problem, value));
  return value;
}

export function parseAttachContext(req: AttachContextRequest): ContextInput {
  const base = { ...sessionMessage(req), handoffId: optionalIdOf("handoff_id", req.handoffId) };
  const content = req.content;
  switch (content.case) {
    case "file": {
      const contentType = contentTypeOf("content.file.content_type", content.value.contentType);
      const data = content.value.data;
      const essence = contentType.split(";")[0] as string;
      // Size is checked against the runtime's limit when the envelope is built (actions.ts).
      const problem = checkContextBytes(data, essence, Number.MAX_SAFE_INTEGER);
      if (problem?.code === "required") throw invalidField("content.file.data", "is empty");
      if (problem?.code === "not-utf8")
        throw invalidField("content.file.data", `is not UTF-8 text, but its content type is ${contentType}`);
      return { ...base, contentType, data, field: "content.file.data" };
    }
    case "markdown": {
      if (content.value.trim() === "") throw invalidField("content.markdown", "is empty");
      if (/\u0000/.test(content.value)) throw invalidField("content.markdown", "contains NUL characters");
      return {
        ...base,
        contentType: "text/markdown; charset=utf-8",
        data: new TextEncoder().encode(content.value),
        field: "content.markdown",
      };
    }
    case "link": {
      const { value, problem } = checkLink(content.value);
      if (problem?.code === "required") throw invalidField("content.link", "is empty");
      if (problem?.code === "too-long") throw invalidField("content.link", `is longer than ${problem.max} characters`);
      if (problem) throw invalidField("content.link", describe(problem, value));
      return { ...base, contentType: "text/uri-list", data: new TextEncoder().encode(`${value}\r\n`), field: "content.link" };
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
    reason: contractText("reason", req.reason),
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
    authorityScope: contractText("authorityScope", req.authorityScope),
    reason: contractText("reason", req.reason),
  };
}

export interface CancelInput extends SessionMessageInput {
  reason: string;
}

export function parseCancel(req: CancelRequest): CancelInput {
  return { ...sessionMessage(req), reason: contractText("reason", req.reason) };
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
  if (deadline < 0n || deadline > 32_503_680_000_000n)
    throw invalidField("deadline_unix_ms", "must be 0 (none) or a Unix time in milliseconds");
  return {
    ...sessionMessage(req),
    title: contractText("title", req.title),
    instructions: contractText("instructions", req.instructions),
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
    reason: contractText("reason", req.reason),
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
  const status = contractText("status", req.status, "use letters, digits, '_', '.' or '-', e.g. in_progress") || "in_progress";
  return {
    ...sessionMessage(req),
    taskId: optionalIdOf("task_id", req.taskId),
    progress: req.progress,
    status,
    message: contractText("message", req.message),
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
    summary: contractText("summary", req.summary),
  };
}

export interface TaskFailInput extends SessionMessageInput {
  taskId: string;
  errorCode: string;
  reason: string;
  retryable: boolean;
}

export function parseTaskFail(req: TaskFailRequest): TaskFailInput {
  const errorCode = contractText("errorCode", req.errorCode, "use letters, digits, '_', '.', ':' or '-', e.g. TIMEOUT");
  return {
    ...sessionMessage(req),
    taskId: optionalIdOf("task_id", req.taskId),
    errorCode,
    reason: contractText("reason", req.reason),
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
    authorityScope: contractText("authorityScope", req.authorityScope),
    reason: contractText("reason", req.reason),
  };
}
