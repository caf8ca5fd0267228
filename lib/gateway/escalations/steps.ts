// The two steps a chain runs for its owner, through the same ActionGateway
// the owner's clicks go through: NOTIFY (the webhooks' offer.escalated) and
// REOFFER (cancel the unanswered session, hand off again in a new one to the
// next person, with the runbooks the owner attached).
import type { EscalationStepInput } from "@/lib/actions/rules";
import type { PolicySummary } from "@/lib/authz/policy-summary";
import { HANDOFF_MODE, MAX_TTL_MS, SCOPE_EXTENSION } from "@/lib/macp/constants";
import type { StartInput } from "../action-input";
import type { ActionGateway } from "../actions";
import { sessionIdForStart } from "../actions/start";
import type { SignedInUser } from "../identity";
import type { GatewayLogger } from "../logger";
import type { LoadedSession } from "../session-state";
import { policyRequestOf, stepIds, type EscalationActionRecord, type EscalationHooks, type EscalationRecord } from "./model";
import type { EscalationStore } from "./store";

/** The offer was answered while the step ran: the chain stops with this sentence. */
export class StepStopped extends Error {}

export class StepFailure extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

/** What a step needs from the scheduler. */
export interface StepDeps {
  store: EscalationStore;
  actions: ActionGateway;
  notify?: () => EscalationHooks | null;
  log: GatewayLogger;
  now: () => number;
}

export async function notifyStep(
  deps: StepDeps,
  rec: EscalationRecord,
  step: EscalationStepInput,
  loaded: LoadedSession,
  nameOf: (id: string) => string,
): Promise<EscalationActionRecord> {
  const ids = stepIds(rec.origin, rec.nextStep);
  const offer = loaded.view.handoff?.offers.find((o) => o.handoffId === rec.handoffId);
  const hooks = deps.notify?.() ?? null;
  await hooks?.escalated({
    deliveryKey: ids.delivery,
    sessionId: rec.sessionId,
    intent: loaded.view.intent,
    scope: offer?.scope ?? "",
    owner: rec.owner,
    target: rec.target,
    to: [...step.participants],
    involved: [...new Set([rec.owner, rec.target, ...step.participants, ...loaded.view.participants])],
    unansweredMs: offer ? deps.now() - offer.offeredAt : 0,
    atMs: deps.now(),
  });
  deps.log.info(
    { sessionId: rec.sessionId, to: step.participants.map(nameOf), webhooks: hooks !== null },
    "escalation: told the approvers the offer is unanswered",
  );
  return {
    step: rec.nextStep,
    kind: "notify",
    sessionId: rec.sessionId,
    messageIds: [],
    cancelledSessionId: "",
    participants: [...step.participants],
    atMs: deps.now(),
  };
}

export async function reofferStep(
  deps: StepDeps,
  rec: EscalationRecord,
  step: EscalationStepInput,
  old: LoadedSession,
  policy: PolicySummary | undefined,
  user: SignedInUser,
): Promise<EscalationActionRecord> {
  const next = step.participants[0] as string;
  const ids = stepIds(rec.origin, rec.nextStep);
  const offer = old.view.handoff?.offers.find((o) => o.handoffId === rec.handoffId);
  if (!offer) throw new StepFailure("The offer to escalate is not in the session any more.", false);
  const actions = deps.actions;
  const names = await actions.names();
  // Mark it in flight first: after a crash the step is finished, not re-judged on the session it cancelled.
  if (!rec.inflight) deps.store.update(rec.origin, (r) => (r.state === "pending" ? { ...r, inflight: true } : undefined));
  const request = policyRequestOf(policy);
  const approvers = request.kind === "approval" ? request.approvers : [];
  const fromStart = old.start;
  const scopeExt = fromStart?.extensions[SCOPE_EXTENSION];
  const scope = offer.scope || (scopeExt ? new TextDecoder().decode(scopeExt) : "");
  const ttl = Number(fromStart?.ttlMs ?? 0n);
  const start: StartInput = {
    messageId: ids.start,
    mode: HANDOFF_MODE,
    intent: old.view.intent || scope,
    scope,
    participants: [...new Set([rec.owner, next, ...approvers])],
    ttlMs: ttl >= 60_000 && ttl <= MAX_TTL_MS ? ttl : 3_600_000,
    policy: request,
    frozenContextJson: "",
    contextId: fromStart?.contextId ?? "",
  };
  const newSession = sessionIdForStart(rec.owner, ids.start);
  // 1. Close the unanswered session (its offer can be neither withdrawn nor superseded, §4.4).
  const cancelled = await actions.cancel(user, {
    sessionId: rec.sessionId,
    messageId: ids.cancel,
    reason: `Escalated by Baton for ${user.displayName}: ${names(rec.target)} did not answer in time; handed off to ${names(next)} in session ${newSession}.`,
  });
  if (!cancelled.ok)
    throw new StepFailure(
      `Baton could not close the unanswered session: ${cancelled.explanation || cancelled.code}`,
      cancelled.code === "UNAVAILABLE",
    );
  // An answer can arrive between the check and the cancel (the runtime has no conditional cancel):
  // then nothing is re-offered, and the chain says what happened.
  const after = await actions.decideOn(user, rec.sessionId, "escalate");
  const answered = after.loaded.view.handoff?.offers.find((o) => o.handoffId === rec.handoffId);
  if (answered && (answered.status === "accepted" || answered.status === "declined")) {
    throw new StepStopped(
      `${names(answered.acceptedBy ?? answered.declinedBy ?? answered.target)} ${answered.status} the offer just as Baton closed the session for ${user.displayName}; nothing was re-offered.`,
    );
  }
  // 2. The same handoff, to the next person, in a new session.
  const started = await actions.startSession(user, start);
  if (!started.ok) throw new StepFailure(`Baton could not start the re-offer's session: ${started.explanation || started.code}`, false);
  const offered = await actions.offer(user, {
    sessionId: started.sessionId,
    messageId: ids.offer,
    target: next,
    scope,
    reason: offer.reason
      ? `${offer.reason} (escalated: ${names(rec.target)} did not answer)`
      : `Escalated: ${names(rec.target)} did not answer.`,
  });
  if (!offered.ok) throw new StepFailure(`Baton could not re-offer to ${names(next)}: ${offered.explanation || offered.code}`, false);
  // 3. The runbook(s) the owner attached to the unanswered offer.
  const sent = [ids.start, ids.offer];
  const contexts = offer.contexts.filter((c) => c.sender === rec.owner && !c.late);
  for (const [i, c] of contexts.entries()) {
    const r = await actions.attachContext(user, {
      sessionId: started.sessionId,
      messageId: ids.context(i),
      handoffId: ids.offer,
      contentType: c.contentType,
      data: c.context,
      field: "context",
    });
    if (!r.ok) throw new StepFailure(`Baton could not attach the runbook for ${names(next)}: ${r.explanation || r.code}`, false);
    sent.push(ids.context(i));
  }
  return {
    step: rec.nextStep,
    kind: "reoffer",
    sessionId: started.sessionId,
    messageIds: sent,
    cancelledSessionId: rec.sessionId,
    participants: [next],
    atMs: deps.now(),
  };
}
