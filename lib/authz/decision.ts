// What decide() answers, and what it is told: the Decision, its deny codes,
// the actor and the context (policy, clock, names, the details of the action
// about to be taken).
import type { HandoffStatus } from "@/lib/handoff-files/transitions";
import type { PolicySummary } from "@/lib/authz/policy-summary";
import type { SessionLifecycle } from "@/lib/macp/projections/session";
import type { Role } from "@/lib/authz/roles";

/** What decide() needs to know about a v0.1 handoff file. */
export interface FileHandoffFacts {
  /** The file exists. */
  present: boolean;
  /** Its latest snapshot is a valid v0.1 handoff (and its last step was not illegal). */
  valid: boolean;
  /** From the last valid snapshot. */
  status: HandoffStatus;
  fromAgent: string;
  /** "" = anyone may take it. */
  toAgent: string;
}

/** Why something was refused, for tests, icons and logs; the `reason` is what people read. */
export type DenyCode =
  /** The user's role does not allow this kind of action. */
  | "role"
  /** The account has no usable participant id. */
  | "no_identity"
  /** The session is unknown or its SessionStart has not been seen. */
  | "not_found"
  /** The action does not exist in this session's mode. */
  | "wrong_mode"
  /** The session is resolved, cancelled, expired or suspended. */
  | "not_open"
  /** The user is not a declared participant. */
  | "not_participant"
  /** Someone else holds the protocol authority for this (owner, target, assignee, approver). */
  | "authority"
  /** Not possible in the session's current state (pending offer, nothing to commit…). */
  | "state"
  /** The session's policy forbids it. */
  | "policy"
  /** The session uses a policy whose rules were not provided, so the answer is unknown. */
  | "unknown_policy"
  /** The details supplied for the action are wrong (offer to oneself, bad participant list). */
  | "invalid";

export type Decision = { allowed: true } | { allowed: false; reason: string; code: DenyCode };

export interface Actor {
  role: Role;
  /** The MACP sender id this person acts as, e.g. `human:alice`. */
  participantId: string;
}

export interface DecideContext {
  /**
   * Rules of the session's bound policy. Optional for sessions on
   * `policy.default`; for any other policy, decisions that depend on the rules
   * are refused with code `unknown_policy` until they are provided.
   */
  policy?: PolicySummary;
  /** Lifecycle as reported by the runtime (GetSession/WatchSessions); overrides the view's. */
  lifecycle?: SessionLifecycle;
  /** Current deadline from the runtime (Unix ms); overrides the view's start+TTL. */
  expiresAt?: number;
  /** Clock for TTL and the implicit-accept timeout (Unix ms). Defaults to Date.now(). */
  now?: number;
  /** Display name for a participant id ("Carol Lee"); defaults to the id without its `human:` / `agent://` prefix. */
  nameOf?: (participantId: string) => string | undefined;
  /** How to call the designated approvers in reasons, e.g. "a lead". */
  approverLabel?: string;
  /** For `startSession`: what is about to be started. */
  start?: { mode?: string; participants?: readonly string[] };
  /** For `offer`: the intended target. */
  offer?: { target?: string };
  /** For `taskRequest`: the intended assignee (empty = anyone but the requester). */
  task?: { requestedAssignee?: string };
  /** For file actions other than `fileOffer`: the handoff file acted on. */
  file?: FileHandoffFacts;
  /** For `cancelEscalation`: whose escalation it is (its owner's participant id). */
  escalation?: { owner: string };
  /** For `fileOffer`: the intended to_agent ("" or absent = anyone). */
  fileOffer?: { toAgent?: string };
}

export const ALLOW: Decision = Object.freeze({ allowed: true });

export function deny(code: DenyCode, reason: string): Decision {
  return { allowed: false, reason, code };
}
