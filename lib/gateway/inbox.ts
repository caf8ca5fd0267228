// "Waiting on me": for one signed-in person, the sessions where the next move
// is theirs.
//   - OFFER: a pending offer addressed to them;
//   - APPROVAL: an answered offer (accepted or declined) or a finished task
//     (completed or failed) in a session they may commit, not committed yet;
//   - TASK: a task requested from them, or taken by them, not finished.
// Every item is also something decide() lets them do right now (accept,
// commit, take or report on the task), so the inbox never lists what the
// person's buttons would refuse.
//   - APPROVAL_AHEAD (InboxUpdate.ahead, not counted): an offer waits for its
//     target in a session whose policy designates them to approve, so the
//     approver hears of it before the target answers. decide() has the last
//     word: "commit" is not refused to them for authority.
//
// Only OPEN sessions can hold inbox items, so the stream rides on the open
// sessions the catalog feeder follows anyway (lib/gateway/catalog/feeder.ts:
// one upstream subscription per open session, shared with the list): each
// browser observes those, recomputes the items of a session when it changes,
// drops a session when it closes, and sends the whole inbox again whenever it
// changed. Closed sessions, however many, cost the inbox nothing.
import { create } from "@bufbuild/protobuf";
import {
  InboxItemKind,
  InboxItemSchema,
  InboxUpdateSchema,
  WatchInboxResponseSchema,
  type InboxItem,
  type InboxUpdate,
  type WatchInboxResponse,
} from "@/lib/gen/baton/v1/actions_pb";
import { HeartbeatSchema } from "@/lib/gen/baton/v1/console_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { decide, shortParticipantName, type Actor, type DecideContext } from "@/lib/authz/decide";
import { commitmentAuthority, type PolicySummary } from "@/lib/authz/policy-summary";
import { DEFAULT_POLICY_ID } from "@/lib/macp/constants";
import type { SessionView } from "@/lib/macp/projections/session";
import type { GatewayLogger } from "./logger";
import type { PolicyCache } from "./policies";
import type { CatalogFeeder } from "./catalog/feeder";
import { lifecycleOf } from "./session-state";

export interface InboxContext {
  /** Rules of the session's policy; undefined for policy.default or when not loaded yet. */
  policy?: PolicySummary;
  nameOf: (participantId: string) => string;
  now: number;
}

function item(init: {
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

function signature(items: readonly InboxItem[]): string {
  return items
    .map((i) => `${i.kind}\u0000${i.subjectId}\u0000${i.fromParticipant}\u0000${i.sinceUnixMs}\u0000${i.expiresAtUnixMs}\u0000${i.summary}`)
    .join("\u0001");
}

export interface InboxOptions {
  /** The open sessions (the catalog feeder). */
  feeder: Pick<CatalogFeeder, "observeOpen">;
  policies: PolicyCache;
  logger: GatewayLogger;
  heartbeatMs?: number;
  /** Coalescing window for changes. Default 25 ms. */
  flushMs?: number;
  now?: () => number;
  /** Escalation chains whose "tell" step named people (lib/gateway/escalations/). */
  escalations?: EscalationNotices;
}

/** Who an escalation chain told that a session's offer is unanswered, while the chain runs. */
export interface EscalationNotices {
  /** The running chain's last "tell" in this session, if any. */
  noticeFor(sessionId: string): { owner: string; target: string; to: readonly string[]; sinceMs: number } | undefined;
  /** Told with the session id whenever a chain changes; returns the unsubscribe. */
  onChange(listener: (sessionId: string) => void): () => void;
}

/**
 * The inbox stream for one person: an InboxUpdate once the session index
 * has loaded, then one after every change, with heartbeats in between.
 */
export async function* watchInbox(
  options: InboxOptions,
  user: Actor,
  nameOf: (participantId: string) => string,
  signal: AbortSignal,
): AsyncGenerator<WatchInboxResponse> {
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const flushMs = options.flushMs ?? 25;
  const now = options.now ?? Date.now;
  const sessions = new Map<string, { meta: SessionMetadata; view: SessionView }>();
  const items = new Map<string, InboxItem[]>();
  const ahead = new Map<string, InboxItem>();
  let loaded = false;
  let dirty = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const names = (id: string) => nameOf(id) || shortParticipantName(id);

  const recompute = (id: string): void => {
    const s = sessions.get(id);
    if (!s) return;
    const policyId = s.meta.policyVersion;
    let policy: PolicySummary | undefined;
    if (policyId !== "" && policyId !== DEFAULT_POLICY_ID) {
      policy = options.policies.peek(policyId);
      if (!policy) {
        options.policies.summary(policyId).then(
          (p) => {
            if (p && !ended.signal.aborted) {
              recompute(id);
              poke();
            }
          },
          (err: unknown) => options.logger.warn({ err, policyId }, "inbox: could not read a session's policy"),
        );
      }
    }
    const ctx: InboxContext = { ...(policy ? { policy } : {}), nameOf: names, now: now() };
    const next = inboxItemsFor(user, s.meta, s.view, ctx);
    const notice = options.escalations?.noticeFor(id);
    if (notice && notice.to.includes(user.participantId) && s.meta.state === SessionState.OPEN && next.length === 0) {
      const scope = s.view.handoff?.offers.at(-1)?.scope ?? "";
      next.push(
        item({
          kind: InboxItemKind.ESCALATION,
          meta: s.meta,
          view: s.view,
          scope,
          from: notice.owner,
          subject: id,
          since: notice.sinceMs,
          summary: `${names(notice.owner)}'s offer of ${scope || "a handoff"} to ${notice.target === user.participantId ? "you" : names(notice.target)} is unanswered; Baton told you for ${names(notice.owner)}.`,
        }),
      );
    }
    const before = items.get(id) ?? [];
    if (signature(before) !== signature(next)) {
      if (next.length === 0) items.delete(id);
      else items.set(id, next);
      dirty = true;
    }
    const soon = approvalAheadFor(user, s.meta, s.view, ctx);
    const was = ahead.get(id);
    if (signature(was ? [was] : []) !== signature(soon ? [soon] : [])) {
      if (soon) ahead.set(id, soon);
      else ahead.delete(id);
      dirty = true;
    }
  };

  const ended = new AbortController();
  const unwatch = options.escalations?.onChange((id) => {
    recompute(id);
    if (dirty) poke();
  });
  ended.signal.addEventListener("abort", () => unwatch?.(), { once: true });
  const stop = () => ended.abort();
  signal.addEventListener("abort", stop, { once: true });
  try {
    options.feeder.observeOpen(
      {
        update(meta, view) {
          sessions.set(meta.sessionId, { meta, view });
          recompute(meta.sessionId);
          if (dirty) poke();
        },
        closed(sessionId) {
          sessions.delete(sessionId);
          if (items.delete(sessionId) || ahead.delete(sessionId)) {
            dirty = true;
            poke();
          }
        },
        loaded() {
          loaded = true;
          dirty = true;
          poke();
        },
      },
      ended.signal,
    );
    let nextHeartbeat = Date.now() + heartbeatMs;
    while (!ended.signal.aborted) {
      if (!(loaded && dirty)) {
        const wait = nextHeartbeat - Date.now();
        if (wait > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(done, wait);
            function done() {
              clearTimeout(timer);
              ended.signal.removeEventListener("abort", done);
              wake = null;
              resolve();
            }
            ended.signal.addEventListener("abort", done, { once: true });
            wake = done;
          });
        }
        if (ended.signal.aborted) return;
        if (Date.now() >= nextHeartbeat) {
          nextHeartbeat = Date.now() + heartbeatMs;
          yield create(WatchInboxResponseSchema, {
            item: { case: "heartbeat", value: create(HeartbeatSchema, { serverTimeUnixMs: BigInt(Date.now()) }) },
          });
        }
        continue;
      }
      // Let a burst of changes settle into one update.
      if (flushMs > 0) await new Promise((r) => setTimeout(r, flushMs));
      if (ended.signal.aborted) return;
      dirty = false;
      const bySince = (a: InboxItem, b: InboxItem) => (a.sinceUnixMs < b.sinceUnixMs ? -1 : a.sinceUnixMs > b.sinceUnixMs ? 1 : 0);
      const all = [...items.values()].flat().sort(bySince);
      yield create(WatchInboxResponseSchema, {
        item: {
          case: "update",
          value: create(InboxUpdateSchema, { items: all, count: all.length, ahead: [...ahead.values()].sort(bySince) }),
        },
      });
    }
  } finally {
    signal.removeEventListener("abort", stop);
    ended.abort();
  }
}

/**
 * The inbox's first update for one person, as the stream would send it first
 * (for the /inbox page's server-rendered first view): undefined when the
 * session index has not loaded within `timeoutMs`, or `signal` ends first.
 * Rides on the open sessions like the stream, and stops observing them once
 * it has its answer.
 */
export async function firstInboxUpdate(
  options: InboxOptions,
  user: Actor,
  nameOf: (participantId: string) => string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<InboxUpdate | undefined> {
  const ac = new AbortController();
  const stop = (): void => ac.abort();
  const timer = setTimeout(stop, timeoutMs);
  signal?.addEventListener("abort", stop, { once: true });
  try {
    // No coalescing window (the first update comes at once), no heartbeat before the timeout.
    for await (const m of watchInbox({ ...options, flushMs: 0, heartbeatMs: timeoutMs + 60_000 }, user, nameOf, ac.signal)) {
      if (m.item.case === "update") return m.item.value;
    }
    return undefined;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", stop);
    ac.abort();
  }
}
