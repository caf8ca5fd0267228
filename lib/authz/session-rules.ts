// The protocol half of decide() for actions inside a MACP session: mode,
// lifecycle, and who holds the authority for each handoff and task step in
// the session's current state (PROTOCOL.md §3.6–3.7, §4.3–4.6, §5.3–5.6).
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
import { roleAtLeast } from "@/lib/authz/roles";
import { ALLOW, deny, type Actor, type DecideContext, type Decision } from "./decision";
import { formatDurationWords } from "@/lib/base/duration";
import { capitalize, joinOr, shortParticipantName } from "./participants";
import { GLOBAL_ACTIONS, HANDOFF_ACTIONS, TASK_ACTIONS, type Action } from "./rules";

export class Decider {
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
      case "escalate":
        return this.escalate();
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

  /** Escalating: the owner's own offer must be waiting for an answer (only the owner offers, §4.3). */
  private escalate(): Decision {
    if (this.me !== this.owner) {
      return deny("authority", `Only the session's owner (${this.who(this.owner)}) can escalate its offer.`);
    }
    const pending = this.pendingOffer();
    if (!pending) {
      const accepted = this.acceptedOffer();
      if (accepted) return deny("state", `${this.Who(accepted.target)} already accepted the handoff; there is nothing to escalate.`);
      return deny("state", "No offer is waiting for an answer, so there is nothing to escalate.");
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
        `Waiting for ${this.who(pending.target)} to respond to the offer; it counts as accepted in ${formatDurationWords(timeout - elapsed)}.`,
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

function isDefaultPolicy(id: string): boolean {
  return id === "" || id === DEFAULT_POLICY_ID;
}
