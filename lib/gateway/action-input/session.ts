// Validation of the session-wide actions: StartSession (checked against the
// users file: people, approvers and the policy) and Cancel.
import { PolicyChoice, SessionKind, type CancelRequest, type StartSessionRequest } from "@/lib/gen/baton/v1/actions_pb";
import type { UserRecord } from "@/lib/accounts/users-file";
import { roleAtLeast } from "@/lib/authz/roles";
import { LIMITS } from "@/lib/actions/rules";
import { HANDOFF_MODE, MAX_PARTICIPANTS, MAX_TTL_MS, TASK_MODE } from "@/lib/macp/constants";
import { contractText, invalidField, jsonTextOf, messageIdOf, participantOf, sessionMessage, type SessionMessageInput } from "./fields";

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

export interface CancelInput extends SessionMessageInput {
  reason: string;
}

export function parseCancel(req: CancelRequest): CancelInput {
  return { ...sessionMessage(req), reason: contractText("reason", req.reason) };
}
