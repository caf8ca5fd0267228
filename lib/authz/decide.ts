// Authorization decisions for signed-in people. Pure and synchronous, with no
// Node imports: the browser calls it to enable or explain a button, and the
// server calls the same function before it sends anything to the runtime.
//
// A decision combines two things:
//  1. the console role (roles.ts): may this kind of user do this at all?
//  2. the protocol: would the runtime accept it from this participant in the
//     session's current state? This mirrors the runtime's authority matrix and
//     mode rules (PROTOCOL.md §3.6–3.7, §4.3–4.6, §5.3–5.6, §10.3), so a button
//     the UI enables is one the runtime will not reject for those reasons.
//
// Protocol authority always binds to the user's own participant id, whatever
// their role: an admin cannot accept an offer made to someone else, because
// the runtime would refuse it. The one exception is `cancel`, which an admin
// may do for any open session (the gateway then needs a runtime identity with
// cancel rights for it; see §3.7).
//
// Reasons are plain sentences meant for the person looking at the button.

import { DEFAULT_POLICY_ID, HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import type { HandoffRecord } from "@/lib/macp/projections/handoff";
import type { SessionLifecycle, SessionView } from "@/lib/macp/projections/session";
import type { TaskRecord } from "@/lib/macp/projections/task";
import {
  DEFAULT_POLICY_SUMMARY,
  allowsReassignment,
  commitmentAuthority,
  designatedRoles,
  hasCommitmentAuthority,
  implicitAcceptTimeoutMs,
  requiresOutput,
  type PolicySummary,
} from "@/lib/authz/policy-summary";
import { roleAtLeast, type Role } from "@/lib/authz/roles";
import { ACTION_TARGET, canTransition, type ActionKind as FileActionKind, type HandoffStatus } from "@/lib/handoff-files/transitions";

export const ACTIONS = [
  "view",
  "startSession",
  "offer",
  "attachContext",
  "accept",
  "decline",
  "commit",
  "cancel",
  "taskRequest",
  "taskAccept",
  "taskReject",
  "taskUpdate",
  "taskComplete",
  "taskFail",
  "runDemo",
  "manageUsers",
  "managePolicies",
] as const;

/**
 * Actions on v0.1 file-based handoffs (lib/handoff-files): the same roles as
 * the MACP task actions, decided on the file's last valid snapshot
 * (`DecideContext.file`) instead of a session view. Kept out of ACTIONS, which
 * is the session toolbar's list (decideAll).
 */
export const FILE_ACTIONS = ["fileOffer", "fileAccept", "fileReject", "fileComplete", "fileFail", "fileReoffer"] as const;
export type FileAction = (typeof FILE_ACTIONS)[number];
export type Action = (typeof ACTIONS)[number] | FileAction;

export function isAction(value: unknown): value is Action {
  return typeof value === "string" && ((ACTIONS as readonly string[]).includes(value) || isFileAction(value));
}

export function isFileAction(value: unknown): value is FileAction {
  return typeof value === "string" && (FILE_ACTIONS as readonly string[]).includes(value);
}

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
  /** For `fileOffer`: the intended to_agent ("" or absent = anyone). */
  fileOffer?: { toAgent?: string };
}

const ALLOW: Decision = Object.freeze({ allowed: true });

function deny(code: DenyCode, reason: string): Decision {
  return { allowed: false, reason, code };
}

/** Lowest role that may attempt each action at all. */
export const MINIMUM_ROLE: Readonly<Record<Action, Role>> = Object.freeze({
  view: "viewer",
  startSession: "operator",
  offer: "operator",
  attachContext: "operator",
  accept: "operator",
  decline: "operator",
  commit: "operator",
  cancel: "operator",
  taskRequest: "operator",
  taskAccept: "operator",
  taskReject: "operator",
  taskUpdate: "operator",
  taskComplete: "operator",
  taskFail: "operator",
  runDemo: "admin",
  manageUsers: "admin",
  managePolicies: "admin",
  fileOffer: "operator",
  fileAccept: "operator",
  fileReject: "operator",
  fileComplete: "operator",
  fileFail: "operator",
  fileReoffer: "operator",
});

const HANDOFF_ACTIONS: ReadonlySet<Action> = new Set<Action>(["offer", "attachContext", "accept", "decline"]);
const TASK_ACTIONS: ReadonlySet<Action> = new Set<Action>([
  "taskRequest",
  "taskAccept",
  "taskReject",
  "taskUpdate",
  "taskComplete",
  "taskFail",
]);
const GLOBAL_ACTIONS: ReadonlySet<Action> = new Set<Action>(["view", "startSession", "runDemo", "manageUsers", "managePolicies"]);

const MAX_PARTICIPANT_ID = 512;
/** Same shape rule the runtime applies to identities: non-empty, bounded, no whitespace or control characters. */
export function isValidParticipantId(id: string): boolean {
  return id.length > 0 && id.length <= MAX_PARTICIPANT_ID && !/[\s\u0000-\u001f\u007f]/.test(id) && id !== "_runtime";
}

/** Decide whether `user` may perform `action` on the session shown by `view`. */
export function decide(user: Actor, view: SessionView | undefined, action: Action, ctx: DecideContext = {}): Decision {
  const roleDecision = checkRole(user.role, action);
  if (!roleDecision.allowed) return roleDecision;
  if (action === "view" || action === "manageUsers" || action === "managePolicies") return ALLOW;

  if (!isValidParticipantId(user.participantId)) {
    return deny("no_identity", "Your account has no valid participant id, so it can't act in sessions. Ask an admin to set one.");
  }
  if (action === "runDemo") return ALLOW;
  if (action === "startSession") return checkStart(user, ctx);
  if (isFileAction(action)) return decideFile(user, action, ctx);

  if (!view || !view.started) return deny("not_found", "This session isn't loaded yet, or doesn't exist.");
  const d = new Decider(user, view, ctx);
  return d.decide(action);
}

/** Every action's decision at once, for rendering a toolbar. */
export function decideAll(user: Actor, view: SessionView | undefined, ctx: DecideContext = {}): Record<Action, Decision> {
  const out = {} as Record<Action, Decision>;
  for (const a of ACTIONS) out[a] = decide(user, view, a, ctx);
  return out;
}

function checkRole(role: Role, action: Action): Decision {
  const minimum = MINIMUM_ROLE[action];
  if (roleAtLeast(role, minimum)) return ALLOW;
  switch (action) {
    case "manageUsers":
      return deny("role", "Only an admin can manage users.");
    case "managePolicies":
      return deny("role", "Only an admin can manage policies.");
    case "runDemo":
      return deny("role", "Only an admin can run demos from the console (anyone can run npm run demo).");
    default:
      return deny("role", "Your account is read-only (viewer): you can watch sessions but not act in them.");
  }
}

function checkStart(user: Actor, ctx: DecideContext): Decision {
  const start = ctx.start;
  if (!start) return ALLOW;
  if (start.mode !== undefined && start.mode !== HANDOFF_MODE && start.mode !== TASK_MODE) {
    return deny("wrong_mode", "Baton can only start handoff and task sessions.");
  }
  if (start.participants !== undefined) {
    const seen = new Set<string>();
    for (const raw of start.participants) {
      const p = raw.trim();
      if (p === "") return deny("invalid", "A participant id is empty.");
      if (!isValidParticipantId(p)) return deny("invalid", `"${raw}" isn't a valid participant id (no spaces, at most 512 characters).`);
      if (seen.has(p)) return deny("invalid", `${p} is listed twice.`);
      seen.add(p);
    }
    if (!seen.has(user.participantId)) {
      return deny("invalid", `You (${user.participantId}) must be one of the participants, because you start the session.`);
    }
    if (seen.size < 2) return deny("invalid", "Add at least one other participant.");
    if (seen.size > 1000) return deny("invalid", "A session can have at most 1000 participants.");
  }
  return ALLOW;
}

const PREFIXES = ["human:", "agent://", "agent:", "user:"];

/** Default display of a participant id: without a conventional prefix. */
export function shortParticipantName(id: string): string {
  for (const p of PREFIXES) if (id.startsWith(p) && id.length > p.length) return id.slice(p.length);
  return id;
}

function capitalize(s: string): string {
  return s.length > 0 ? s.charAt(0).toUpperCase() + s.slice(1) : s;
}

function joinOr(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? "";
  return `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}`;
}

function formatDuration(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.ceil(s / 60);
  if (m < 120) return `${m} min`;
  return `${Math.ceil(m / 60)} h`;
}

class Decider {
  private readonly me: string;
  private readonly policy: PolicySummary | undefined;
  private readonly noun: string;

  constructor(
    private readonly user: Actor,
    private readonly view: SessionView,
    private readonly ctx: DecideContext,
  ) {
    this.me = user.participantId;
    this.policy = ctx.policy ?? (isDefaultPolicy(view.effectivePolicyId) ? DEFAULT_POLICY_SUMMARY : undefined);
    this.noun = view.mode === HANDOFF_MODE ? "handoff" : view.mode === TASK_MODE ? "task" : "session";
  }

  /** "you" for the user themself, otherwise their display name. */
  private who(id: string): string {
    if (id === this.me) return "you";
    const named = this.ctx.nameOf?.(id);
    return named !== undefined && named !== "" ? named : shortParticipantName(id);
  }

  private Who(id: string): string {
    return capitalize(this.who(id));
  }

  private get owner(): string {
    return this.view.initiator;
  }

  private unknownPolicy(): Decision {
    return deny(
      "unknown_policy",
      `The rules of policy ${this.view.effectivePolicyId} aren't loaded yet, so Baton can't tell whether this is allowed.`,
    );
  }

  decide(action: Action): Decision {
    if (GLOBAL_ACTIONS.has(action)) return ALLOW; // handled before; kept for exhaustiveness
    const modeCheck = this.checkMode(action);
    if (!modeCheck.allowed) return modeCheck;
    const open = this.checkOpen(action);
    if (!open.allowed) return open;
    switch (action) {
      case "offer":
        return this.offer();
      case "attachContext":
        return this.attachContext();
      case "accept":
        return this.respond("accept");
      case "decline":
        return this.respond("decline");
      case "commit":
        return this.commit();
      case "cancel":
        return this.cancel();
      case "taskRequest":
        return this.taskRequest();
      case "taskAccept":
        return this.taskRespond("accept");
      case "taskReject":
        return this.taskRespond("reject");
      case "taskUpdate":
      case "taskComplete":
      case "taskFail":
        return this.taskReport(action);
      default:
        return ALLOW;
    }
  }

  private checkMode(action: Action): Decision {
    const mode = this.view.mode;
    if (HANDOFF_ACTIONS.has(action) && mode !== HANDOFF_MODE) {
      return deny("wrong_mode", "Offers and their answers only exist in handoff sessions.");
    }
    if (TASK_ACTIONS.has(action) && mode !== TASK_MODE) {
      return deny("wrong_mode", "Task actions only exist in task sessions.");
    }
    if (action === "commit" && mode !== HANDOFF_MODE && mode !== TASK_MODE) {
      return deny("wrong_mode", "Baton can only commit handoff and task sessions.");
    }
    return ALLOW;
  }

  private lifecycle(): SessionLifecycle {
    if (this.view.commitment) return "Resolved";
    const reported = this.ctx.lifecycle ?? this.view.lifecycle;
    if (reported !== "Open") return reported;
    const deadline = this.ctx.expiresAt ?? this.view.expiresAt;
    const now = this.ctx.now ?? Date.now();
    // A message arriving exactly at the deadline is still accepted (§3.4).
    if (deadline !== undefined && deadline > 0 && now > deadline) return "Expired";
    return "Open";
  }

  private checkOpen(action: Action): Decision {
    const state = this.lifecycle();
    if (state === "Open") return ALLOW;
    // Cancel also works on a suspended session (§3.7).
    if (state === "Suspended" && action === "cancel") return ALLOW;
    switch (state) {
      case "Resolved":
        return deny("not_open", `This ${this.noun} is already committed; nothing more can happen in it.`);
      case "Cancelled":
        return deny("not_open", `This ${this.noun} was cancelled.`);
      case "Expired":
        return deny("not_open", `This ${this.noun} expired before it was committed.`);
      default:
        return deny("not_open", `This ${this.noun} is suspended; it has to be resumed first.`);
    }
  }

  // ---------------------------------------------------------------- handoff

  private offers(): readonly HandoffRecord[] {
    return this.view.handoff?.offers ?? [];
  }

  private pendingOffer(): HandoffRecord | undefined {
    const pending = this.offers().filter((o) => o.status === "offered" || o.status === "context_sent");
    return pending[pending.length - 1];
  }

  private acceptedOffer(): HandoffRecord | undefined {
    return this.offers().find((o) => o.status === "accepted");
  }

  private offer(): Decision {
    if (this.me !== this.owner) {
      return deny("authority", `Only the session's owner (${this.who(this.owner)}) can offer the handoff.`);
    }
    const pending = this.pendingOffer();
    if (pending) {
      return deny("state", `The offer to ${this.who(pending.target)} is still waiting for an answer.`);
    }
    const accepted = this.acceptedOffer();
    if (accepted) {
      return deny("state", `${this.Who(accepted.target)} already accepted the handoff, so no further offers can be made.`);
    }
    const others = this.view.participants.filter((p) => p !== this.me);
    if (others.length === 0) return deny("state", "There is nobody else in this session to hand off to.");
    const target = this.ctx.offer?.target;
    if (target !== undefined) {
      if (target === this.me) return deny("invalid", "You can't offer the handoff to yourself.");
      if (!this.view.participants.includes(target)) {
        return deny("invalid", `${this.Who(target)} isn't a participant in this session, so they can't receive the offer.`);
      }
    }
    return ALLOW;
  }

  private attachContext(): Decision {
    if (this.me !== this.owner) {
      return deny("authority", `Only the session's owner (${this.who(this.owner)}) can attach context to the offer.`);
    }
    const offers = this.offers();
    const last = offers[offers.length - 1];
    if (!last) return deny("state", "Make an offer first; context is attached to an offer.");
    if (last.offeredBy !== this.me) {
      return deny("authority", `Only ${this.who(last.offeredBy)}, who made the offer, can attach context to it.`);
    }
    return ALLOW;
  }

  private respond(kind: "accept" | "decline"): Decision {
    const pending = this.pendingOffer();
    if (!pending) {
      const accepted = this.acceptedOffer();
      if (accepted) return deny("state", `${this.Who(accepted.target)} already accepted the handoff.`);
      const offers = this.offers();
      const last = offers[offers.length - 1];
      if (last?.status === "declined") return deny("state", `${this.Who(last.target)} already declined the offer.`);
      return deny("state", "There is no offer to answer yet.");
    }
    if (pending.target !== this.me) {
      return deny("authority", `This offer is for ${this.who(pending.target)}; only they can ${kind} it.`);
    }
    return ALLOW;
  }

  // ------------------------------------------------------------- commitment

  private authorityDenial(): Decision {
    const names = (ids: readonly string[]) => joinOr(ids.map((id) => this.who(id)));
    switch (commitmentAuthority(this.policy ?? DEFAULT_POLICY_SUMMARY)) {
      case "any_participant":
        return deny("authority", `Only the participants of this ${this.noun} can commit it.`);
      case "designated_role": {
        const ids = designatedRoles(this.policy ?? DEFAULT_POLICY_SUMMARY);
        const list = names(ids);
        const label = this.ctx.approverLabel;
        if (ids.length === 0) return deny("authority", `Nobody is designated to approve this ${this.noun}.`);
        return deny(
          "authority",
          label ? `This ${this.noun} needs approval from ${label} (${list}).` : `This ${this.noun} needs approval from ${list}.`,
        );
      }
      default:
        return deny("authority", `Only the session's owner (${this.who(this.owner)}) can commit this ${this.noun}.`);
    }
  }

  private commit(): Decision {
    if (!this.policy) return this.unknownPolicy();
    if (!hasCommitmentAuthority(this.policy, this.me, this.owner, this.view.participants)) return this.authorityDenial();
    return this.view.mode === HANDOFF_MODE ? this.handoffCommittable(this.policy) : this.taskCommittable(this.policy);
  }

  private handoffCommittable(policy: PolicySummary): Decision {
    const offers = this.offers();
    if (offers.some((o) => o.status === "accepted" || o.status === "declined")) return ALLOW;
    const pending = this.pendingOffer();
    if (!pending) return deny("state", "There is nothing to commit yet: no offer has been made.");
    const timeout = implicitAcceptTimeoutMs(policy);
    if (timeout > 0 && pending.offeredAt > 0) {
      const elapsed = (this.ctx.now ?? Date.now()) - pending.offeredAt;
      // The runtime compares the commitment's timestamp with the offer's (§4.6).
      if (elapsed >= timeout) return ALLOW;
      return deny(
        "state",
        `Waiting for ${this.who(pending.target)} to respond to the offer; it counts as accepted in ${formatDuration(timeout - elapsed)}.`,
      );
    }
    return deny("state", `Waiting for ${this.who(pending.target)} to respond to the offer.`);
  }

  private taskCommittable(policy: PolicySummary): Decision {
    const task = this.view.task?.task;
    if (!task) return deny("state", "There is nothing to commit yet: no task has been requested.");
    const report = task.terminalReport;
    if (!report) {
      if (task.activeAssignee !== undefined) {
        return deny("state", `Waiting for ${this.who(task.activeAssignee)} to finish the task.`);
      }
      const stuck = this.reassignmentBlocked(task, policy);
      if (stuck) return stuck;
      return deny("state", "Waiting for someone to take the task.");
    }
    if (requiresOutput(policy)) {
      if (report.kind === "fail") {
        return deny(
          "policy",
          "This session's policy only accepts a completed task with output, so a failed task can't be committed. Cancel the session instead.",
        );
      }
      if (report.output.length === 0) {
        return deny(
          "policy",
          `This session's policy needs the task's output, and ${this.who(report.assignee)} completed it without any. Cancel the session instead.`,
        );
      }
    }
    return ALLOW;
  }

  /** Under a no-reassignment policy, one rejection leaves an unassigned task stuck (§5.4). */
  private reassignmentBlocked(task: TaskRecord, policy: PolicySummary): Decision | undefined {
    const first = task.rejections[0];
    if (!first || allowsReassignment(policy)) return undefined;
    return deny(
      "policy",
      `${this.Who(first.sender)} turned the task down and this session's policy doesn't allow reassignment, so nobody can take it. Cancel the session instead.`,
    );
  }

  private cancel(): Decision {
    if (this.user.role === "admin") return ALLOW;
    if (this.me === this.owner) return ALLOW;
    // Besides the initiator, whoever has commitment authority may cancel (§3.7);
    // among non-admins only approvers get rights beyond their own sessions.
    if (roleAtLeast(this.user.role, "approver")) {
      if (!this.policy) return this.unknownPolicy();
      if (hasCommitmentAuthority(this.policy, this.me, this.owner, this.view.participants)) return ALLOW;
    }
    return deny("authority", `Only the session's owner (${this.who(this.owner)}) or an admin can cancel it.`);
  }

  // ------------------------------------------------------------------- task

  private taskRequest(): Decision {
    if (this.me !== this.owner) {
      return deny("authority", `Only the session's owner (${this.who(this.owner)}) can request the task.`);
    }
    const existing = this.view.task?.task;
    if (existing) {
      const title = existing.title !== "" ? ` ("${existing.title}")` : "";
      return deny("state", `This session already has its task${title}; a task session carries exactly one.`);
    }
    const assignee = this.ctx.task?.requestedAssignee;
    if (assignee !== undefined && assignee !== "" && !this.view.participants.includes(assignee)) {
      return deny("invalid", `${this.Who(assignee)} isn't a participant in this session, so the task can't be requested from them.`);
    }
    return ALLOW;
  }

  private finishedText(task: TaskRecord): string {
    return task.terminalReport?.kind === "fail" ? "failed" : "completed";
  }

  /** The runtime's "may respond" rule for an unassigned task (§5.4). */
  private eligibility(task: TaskRecord, verb: string): Decision {
    if (task.requestedAssignee !== "") {
      if (task.requestedAssignee === this.me) return ALLOW;
      return deny("authority", `This task was requested from ${this.who(task.requestedAssignee)}; only they can ${verb} it.`);
    }
    if (this.me === this.owner) return deny("authority", `You requested this task; someone else has to ${verb} it.`);
    if (!this.view.participants.includes(this.me)) {
      return deny("not_participant", "You aren't a participant in this session.");
    }
    return ALLOW;
  }

  private taskRespond(kind: "accept" | "reject"): Decision {
    const task = this.view.task?.task;
    if (!task) return deny("state", "No task has been requested yet.");
    if (task.terminalReport) return deny("state", `The task already ${this.finishedText(task)}.`);
    const verb = kind === "accept" ? "take" : "turn down";
    const assignee = task.activeAssignee;
    if (assignee !== undefined) {
      if (kind === "accept") {
        return deny("state", assignee === this.me ? "You already took this task." : `${this.Who(assignee)} already took this task.`);
      }
      if (assignee !== this.me) return deny("state", `${this.Who(assignee)} is already working on this task.`);
      if (!this.policy) return this.unknownPolicy();
      if (!allowsReassignment(this.policy)) {
        return deny("policy", "This session's policy doesn't let you hand back a task you took.");
      }
      return ALLOW;
    }
    const eligible = this.eligibility(task, verb);
    if (!eligible.allowed) return eligible;
    if (kind === "accept") {
      if (task.rejections.length > 0) {
        if (!this.policy) return this.unknownPolicy();
        const blocked = this.reassignmentBlocked(task, this.policy);
        if (blocked) return blocked;
      }
      return ALLOW;
    }
    if (task.rejections.some((r) => r.sender === this.me)) return deny("state", "You already turned this task down.");
    return ALLOW;
  }

  private taskReport(action: "taskUpdate" | "taskComplete" | "taskFail"): Decision {
    const task = this.view.task?.task;
    if (!task) return deny("state", "No task has been requested yet.");
    if (task.terminalReport) {
      return deny("state", `The task already ${this.finishedText(task)}; no further reports are possible.`);
    }
    const assignee = task.activeAssignee;
    if (assignee === undefined) {
      return deny("state", "Nobody has taken this task yet; it has to be accepted before anyone reports on it.");
    }
    if (assignee !== this.me) {
      const what = action === "taskUpdate" ? "report progress on it" : action === "taskComplete" ? "complete it" : "fail it";
      return deny("authority", `Only ${this.who(assignee)}, who took the task, can ${what}.`);
    }
    return ALLOW;
  }
}

// ------------------------------------------------------------ v0.1 files

const FILE_KIND: Readonly<Record<Exclude<FileAction, "fileOffer">, FileActionKind>> = Object.freeze({
  fileAccept: "accept",
  fileReject: "reject",
  fileComplete: "complete",
  fileFail: "fail",
  fileReoffer: "reoffer",
});

/** The action with its object, for "only they can …". */
const FILE_VERB_IT: Readonly<Record<FileActionKind, string>> = Object.freeze({
  accept: "accept it",
  reject: "turn it down",
  complete: "complete it",
  fail: "mark it as failed",
  reoffer: "offer it again",
});

/** The status each action starts from (the v0.1 state machine has one per action). */
const FILE_FROM: Readonly<Record<FileActionKind, HandoffStatus>> = Object.freeze({
  accept: "offered",
  reject: "offered",
  complete: "accepted",
  fail: "accepted",
  reoffer: "failed",
});

/**
 * The roles of the MACP task actions, on a v0.1 file: the offer's to_agent
 * (or anyone but the offerer when it is empty) accepts or turns it down; who
 * accepted it completes or fails it; who offered it offers it again. The
 * state machine (transitions.ts) says which step is possible at all.
 */
function decideFile(user: Actor, action: FileAction, ctx: DecideContext): Decision {
  const me = user.participantId;
  const who = (id: string): string => {
    if (id === me) return "you";
    const named = ctx.nameOf?.(id);
    return named !== undefined && named !== "" ? named : shortParticipantName(id);
  };
  if (action === "fileOffer") {
    const to = ctx.fileOffer?.toAgent?.trim() ?? "";
    if (to === "") return ALLOW;
    if (to === me) return deny("invalid", "You can't offer a handoff to yourself.");
    if (!isValidParticipantId(to)) return deny("invalid", `"${to}" isn't a valid participant id (no spaces, at most 512 characters).`);
    return ALLOW;
  }
  const file = ctx.file;
  if (!file) return deny("not_found", "This handoff isn't loaded yet, or doesn't exist.");
  if (!file.present) return deny("not_found", "This handoff's file was removed.");
  if (!file.valid) return deny("state", "This file isn't a valid v0.1 handoff, so Baton leaves it alone.");
  const kind = FILE_KIND[action];
  const verb = FILE_VERB_IT[kind];
  if (!canTransition(file.status, ACTION_TARGET[kind])) {
    const by = file.toAgent !== "" && file.status !== "offered" ? ` by ${who(file.toAgent)}` : "";
    return deny("state", `This handoff is ${file.status}${by}; it can only be ${verbPast(kind)} while it is ${FILE_FROM[kind]}.`);
  }
  switch (kind) {
    case "accept":
    case "reject":
      if (file.toAgent !== "") {
        if (file.toAgent !== me) return deny("authority", `This handoff is offered to ${who(file.toAgent)}; only they can ${verb}.`);
        return ALLOW;
      }
      if (file.fromAgent === me) return deny("authority", `You offered this handoff; someone else has to ${verb}.`);
      return ALLOW;
    case "complete":
    case "fail":
      if (file.toAgent === "") {
        if (file.fromAgent === me) return deny("authority", `You offered this handoff; whoever took it has to ${verb}.`);
        return ALLOW;
      }
      if (file.toAgent !== me) return deny("authority", `Only ${who(file.toAgent)}, who accepted this handoff, can ${verb}.`);
      return ALLOW;
    case "reoffer":
      if (file.fromAgent !== me) return deny("authority", `Only ${who(file.fromAgent)}, who offered this handoff, can offer it again.`);
      return ALLOW;
  }
}

function verbPast(kind: FileActionKind): string {
  switch (kind) {
    case "accept":
      return "accepted";
    case "reject":
      return "turned down";
    case "complete":
      return "completed";
    case "fail":
      return "marked as failed";
    case "reoffer":
      return "offered again";
  }
}

function isDefaultPolicy(id: string): boolean {
  return id === "" || id === DEFAULT_POLICY_ID;
}
