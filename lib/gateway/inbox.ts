// "Waiting on me": for one signed-in person, the sessions where the next move
// is theirs.
//   - OFFER: a pending offer addressed to them;
//   - APPROVAL: an answered offer (accepted or declined) or a finished task
//     (completed or failed) in a session they may commit, not committed yet;
//   - TASK: a task requested from them, or taken by them, not finished;
//   - DECLINED: their offer was declined and they may not commit (lead
//     approval), or the task they requested was turned down by its assignee:
//     back with them, to offer it to someone else or cancel.
// Every item is also something decide() lets them do right now (accept,
// commit, take or report on the task), so the inbox never lists what the
// person's buttons would refuse.
//   - APPROVAL_AHEAD (InboxUpdate.ahead, not counted): an offer waits for its
//     target in a session whose policy designates them to approve, so the
//     approver hears of it before the target answers. decide() has the last
//     word: "commit" is not refused to them for authority.
//
// Only OPEN sessions can hold inbox items, so the stream (inbox-stream.ts)
// rides on the open sessions the catalog feeder follows anyway
// (lib/gateway/catalog/feeder.ts: one upstream subscription per open session,
// shared with the list): each browser observes those, recomputes the items of
// a session when it changes, drops a session when it closes, and sends the
// whole inbox again whenever it changed. Closed sessions cost the inbox only
// their news (inbox-news.ts): the last day's, at most 500, read once for all.
import { create } from "@bufbuild/protobuf";
import { InboxItemKind, InboxItemSchema, type InboxItem } from "@/lib/gen/baton/v1/actions_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { decide, type Actor, type DecideContext } from "@/lib/authz/decide";
import { commitmentAuthority, type PolicySummary } from "@/lib/authz/policy-summary";
import type { SessionView } from "@/lib/macp/projections/session";
import { turnedDownByAssignee } from "@/lib/macp/projections/summary";
import { lifecycleOf } from "./session-state";

export interface InboxContext {
  /** Rules of the session's policy; undefined for policy.default or when not loaded yet. */
  policy?: PolicySummary;
  nameOf: (participantId: string) => string;
  now: number;
}

/** One inbox item of a session (the stream builds escalation items with it too). */
export function item(init: {
  kind: InboxItemKind;
  meta: SessionMetadata;
  view: SessionView;
  scope: string;
  from: string;
  subject: string;
  since: number;
  summary: string;
  asApprover?: boolean;
}): InboxItem {
  return create(InboxItemSchema, {
    kind: init.kind,
    sessionId: init.meta.sessionId,
    mode: init.meta.mode,
    intent: init.view.intent,
    scope: init.scope,
    fromParticipant: init.from,
    subjectId: init.subject,
    sinceUnixMs: BigInt(Math.trunc(init.since)),
    expiresAtUnixMs: init.meta.expiresAtUnixMs,
    summary: init.summary,
    asApprover: init.asApprover === true,
  });
}

/** What decide() is told about this session, as the inbox sees it now: its policy, lifecycle and deadline. */
export function decideContextOf(meta: SessionMetadata, ctx: InboxContext): DecideContext {
  return {
    ...(ctx.policy ? { policy: ctx.policy } : {}),
    lifecycle: lifecycleOf(meta.state),
    ...(Number(meta.expiresAtUnixMs) > 0 ? { expiresAt: Number(meta.expiresAtUnixMs) } : {}),
    now: ctx.now,
    nameOf: ctx.nameOf,
  };
}

/** What in this session waits on `user`. Pure. */
export function inboxItemsFor(user: Actor, meta: SessionMetadata, view: SessionView | undefined, ctx: InboxContext): InboxItem[] {
  if (!view?.started || meta.state !== SessionState.OPEN || view.commitment) return [];
  const dctx = decideContextOf(meta, ctx);
  const allowed = (action: Parameters<typeof decide>[2]) => decide(user, view, action, dctx).allowed;
  const name = (id: string) => (id === user.participantId ? "you" : ctx.nameOf(id));
  const out: InboxItem[] = [];
  const me = user.participantId;

  if (view.handoff) {
    const offers = view.handoff.offers;
    const pending = offers.filter((o) => o.status === "offered" || o.status === "context_sent").at(-1);
    if (pending && pending.target === me && allowed("accept")) {
      out.push(
        item({
          kind: InboxItemKind.OFFER,
          meta,
          view,
          scope: pending.scope,
          from: pending.offeredBy,
          subject: pending.handoffId,
          since: pending.offeredAt,
          summary: `${name(pending.offeredBy)} offered you ${pending.scope || "a handoff"}.`,
        }),
      );
    }
    // Answered: an accepted offer, or a last offer that was declined (not while a new offer waits).
    const last = offers.at(-1);
    const answered = offers.find((o) => o.status === "accepted") ?? (last?.status === "declined" ? last : undefined);
    if (answered && allowed("commit")) {
      const by = answered.acceptedBy ?? answered.declinedBy ?? answered.target;
      const what = answered.scope || "the handoff";
      // Not the one handing over: an approver the policy designates, asked by the owner.
      const owner = answered.offeredBy || view.initiator;
      const asApprover = me !== owner && me !== view.initiator;
      out.push(
        item({
          kind: InboxItemKind.APPROVAL,
          meta,
          view,
          scope: answered.scope,
          from: asApprover ? owner : by,
          subject: answered.handoffId,
          since: answered.respondedAt ?? answered.offeredAt,
          asApprover,
          summary: asApprover
            ? answered.status === "accepted"
              ? `${name(owner)} asks you to approve handing ${what} to ${name(by)}, who accepted.`
              : `${name(by)} declined ${what}; reject to confirm ${name(owner)} keeps it.`
            : answered.status === "accepted"
              ? `${name(by)} accepted ${what}; commit it to make the handoff final.`
              : `${name(by)} declined ${what}; commit the outcome or offer it to someone else.`,
        }),
      );
    } else if (answered && answered.status === "declined" && me === (answered.offeredBy || view.initiator)) {
      // Back with the owner, who may not commit (lead approval: the approvers do):
      // they offer it to someone else or cancel.
      if (allowed("offer") || allowed("cancel")) {
        const by = answered.declinedBy ?? answered.target;
        out.push(
          item({
            kind: InboxItemKind.DECLINED,
            meta,
            view,
            scope: answered.scope,
            from: by,
            subject: answered.handoffId,
            since: answered.respondedAt ?? answered.offeredAt,
            summary: `${name(by)} declined ${answered.scope || "the handoff"}; offer it to someone else or cancel the handoff.`,
          }),
        );
      }
    }
  }

  const task = view.task?.task;
  if (task) {
    const report = task.terminalReport;
    if (report && allowed("commit")) {
      out.push(
        item({
          kind: InboxItemKind.APPROVAL,
          meta,
          view,
          scope: task.title,
          from: report.assignee,
          subject: task.taskId,
          since: report.timestampMs,
          summary:
            report.kind === "complete"
              ? `${name(report.assignee)} completed "${task.title}"; commit the result.`
              : `${name(report.assignee)} failed "${task.title}" (${report.errorCode}); commit the outcome.`,
        }),
      );
    }
    if (!report && me === task.requester && turnedDownByAssignee(task) && allowed("cancel")) {
      // Turned down by the one asked (nobody else may take it): back with the requester.
      const rejection = task.rejections.findLast((r) => r.sender === task.requestedAssignee || r.assignee === task.requestedAssignee);
      out.push(
        item({
          kind: InboxItemKind.DECLINED,
          meta,
          view,
          scope: task.title,
          from: task.requestedAssignee,
          subject: task.taskId,
          since: rejection?.timestampMs ?? task.requestedAt,
          summary: `${name(task.requestedAssignee)} turned down "${task.title}"; cancel it, or ask someone else in a new task.`,
        }),
      );
    }
    if (!report) {
      const mine = task.activeAssignee === me || (task.activeAssignee === undefined && task.requestedAssignee === me);
      const canAct = task.activeAssignee === me ? allowed("taskUpdate") : allowed("taskAccept");
      if (mine && canAct) {
        out.push(
          item({
            kind: InboxItemKind.TASK,
            meta,
            view,
            scope: task.title,
            from: task.requester,
            subject: task.taskId,
            since: task.requestedAt,
            summary:
              task.activeAssignee === me
                ? `You are working on "${task.title}" for ${name(task.requester)}.`
                : `${name(task.requester)} asked you to do "${task.title}".`,
          }),
        );
      }
    }
  }
  return out;
}

/**
 * The approval that will be `user`'s once the pending offer is answered, or
 * undefined. Only under a policy that designates approvers, only for someone
 * who is neither the owner nor the offer's target, and only when decide()
 * does not refuse them "commit" for authority. Pure.
 */
export function approvalAheadFor(
  user: Actor,
  meta: SessionMetadata,
  view: SessionView | undefined,
  ctx: InboxContext,
): InboxItem | undefined {
  if (!view?.started || !view.handoff || meta.state !== SessionState.OPEN || view.commitment) return undefined;
  if (!ctx.policy || commitmentAuthority(ctx.policy) !== "designated_role") return undefined;
  const pending = view.handoff.offers.filter((o) => o.status === "offered" || o.status === "context_sent").at(-1);
  const me = user.participantId;
  if (!pending) return undefined;
  const owner = pending.offeredBy || view.initiator;
  if (me === owner || me === view.initiator || me === pending.target) return undefined;
  const d = decide(user, view, "commit", decideContextOf(meta, ctx));
  // Refused for authority (not an approver, a viewer): nothing to promise. Refused
  // for the state (the offer is unanswered) or allowed (an earlier offer was
  // declined, so a negative commit is possible already): the approval that
  // matters comes once this offer is answered.
  if (!d.allowed && d.code !== "state") return undefined;
  const what = pending.scope || "a handoff";
  return item({
    kind: InboxItemKind.APPROVAL_AHEAD,
    meta,
    view,
    scope: pending.scope,
    from: owner,
    subject: pending.handoffId,
    since: pending.offeredAt,
    asApprover: true,
    summary: `${ctx.nameOf(owner)} offered ${what} to ${ctx.nameOf(pending.target)}; your approval comes next, once ${ctx.nameOf(pending.target)} answers.`,
  });
}
