// Actions of signed-in people, end to end on the server (DESIGN.md, "One
// human action"): validated input → the session's current state folded from
// its history → decide() (the same rules the UI uses to enable the button) →
// an envelope built here, with the person's own participant id as sender and
// the browser's message_id → Send as the person's runtime identity → the Ack
// as an ActionResult.
//
// Idempotency: the browser makes one message_id per attempt and reuses it on
// retry. The runtime deduplicates by message_id within a session; ids the
// console derives (session_id of a new session, handoff_id, task_id,
// commitment_id) come from the message_id too, so a retry is the same
// message. A retry arriving after the first attempt was accepted is answered
// from the session's history (duplicate=true) before decide() would refuse it
// for the state the first attempt created.
import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  ActionResultSchema,
  DirectoryAgentSchema,
  DirectoryUserSchema,
  ListDirectoryResponseSchema,
  type ActionResult,
  type ListDirectoryResponse,
} from "@/lib/gen/baton/v1/actions_pb";
import type { Ack, Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import type { UserRecord } from "@/lib/accounts/users-file";
import { decide, shortParticipantName, type Action, type DecideContext } from "@/lib/authz/decide";
import { hasCommitmentAuthority, DEFAULT_POLICY_SUMMARY, type PolicySummary } from "@/lib/authz/policy-summary";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import type { PolicyDescriptor } from "@/lib/gen/macp/v1/policy_pb";
import {
  CORE_TYPES,
  DEFAULT_CONFIGURATION_VERSION,
  ERROR_EXPLANATIONS,
  HANDOFF_TYPES,
  MODE_VERSION,
  RUNTIME_SENDER,
  SCOPE_EXTENSION,
  TASK_TYPES,
  normalizeErrorCode,
  type MacpErrorCode,
} from "@/lib/macp/constants";
import { buildEnvelope, type PayloadInput } from "@/lib/macp/payloads";
import type { HandoffRecord } from "@/lib/macp/projections/handoff";
import type { SessionView } from "@/lib/macp/projections/session";
import type {
  CancelInput,
  CommitInput,
  ContextInput,
  OfferInput,
  RespondInput,
  SessionMessageInput,
  StartInput,
  TaskCommitInput,
  TaskCompleteInput,
  TaskFailInput,
  TaskRequestInput,
  TaskRespondInput,
  TaskUpdateInput,
} from "./action-input";
import { invalidField } from "./action-input";
import { upstreamError } from "./errors";
import { runtimeIdentityFor, type SignedInUser, type UserAuthMode } from "./identity";
import { silentLogger, type GatewayLogger } from "./logger";
import { PolicyCache, ensurePolicy, policyDescriptorFor } from "./policies";
import type { RuntimeActions } from "./runtime-actions";
import type { RuntimeReader } from "./runtime-client";
import { lifecycleOf, loadSession, type AcceptedMessage, type LoadedSession } from "./session-state";

/** SessionStart extension keys the console writes (values are UTF-8). */
export { SCOPE_EXTENSION };
export const FROZEN_CONTEXT_EXTENSION = "baton.frozen_context";

export interface ActionGatewayOptions {
  runtime: RuntimeReader;
  actions: RuntimeActions;
  /** The users file (UserDirectory satisfies it). */
  users: { users(): Promise<readonly UserRecord[]> };
  /** How people's runtime identities are presented (see identity.ts). */
  authMode: UserAuthMode;
  /** Dev mode: the delegate credential acting as a participant (see identity.ts); default the id itself. */
  devCredential?: (participantId: string) => string;
  /** The runtime's payload limit (MACP_MAX_PAYLOAD_BYTES). */
  maxPayloadBytes: number;
  /**
   * Cancel a session as its initiator, for admins acting on sessions they
   * have no authority in. The embedded runtime provides it in-process;
   * without it the console uses the initiator's credential when it has one.
   */
  cancelAsInitiator?: (sessionId: string, reason: string) => Promise<Ack>;
  logger?: GatewayLogger;
  now?: () => number;
  /** Time allowed to read a session's history. Default 10 s. */
  historyTimeoutMs?: number;
}

type Extras = { handoffId?: string; taskId?: string; policyId?: string };

interface BuildContext {
  loaded: LoadedSession;
  view: SessionView;
  me: string;
  nameOf: (id: string) => string;
}

interface SessionActionSpec {
  action: Action;
  messageType: string;
  /** Request field that carries the bulk of the payload (for size errors). */
  sizeField: string;
  decideExtra?: (loaded: LoadedSession) => Partial<DecideContext>;
  /** The payload, once decide() allowed the action; throws ConnectErrors for inputs that don't fit the state. */
  build: (b: BuildContext) => { payload: PayloadInput; extras?: Extras };
}

/** A session id for a new session, the same for every retry of one start (UUID v4 layout). */
export function sessionIdForStart(participantId: string, messageId: string): string {
  const h = createHash("sha256").update("baton start\u0000").update(participantId).update("\u0000").update(messageId).digest();
  h[6] = ((h[6] as number) & 0x0f) | 0x40;
  h[8] = ((h[8] as number) & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function explainCode(code: string): string {
  return (ERROR_EXPLANATIONS as Record<string, string | undefined>)[code] ?? "The runtime refused the message.";
}

/** An ActionResult from the runtime's Ack. */
export function resultFromAck(ack: Ack, ids: { sessionId: string; messageId: string }, extras: Extras = {}): ActionResult {
  const base = {
    sessionId: ack.sessionId || ids.sessionId,
    messageId: ack.messageId || ids.messageId,
    sessionState: ack.sessionState,
    acceptedAtUnixMs: ack.acceptedAtUnixMs,
    ...extras,
  };
  if (ack.ok) return create(ActionResultSchema, { ok: true, duplicate: ack.duplicate, ...base });
  const code = normalizeErrorCode(ack.error?.code || "INTERNAL_ERROR");
  return create(ActionResultSchema, {
    ok: false,
    ...base,
    code,
    explanation: explainCode(code),
    message: ack.error?.message ?? "",
  });
}

function refused(code: MacpErrorCode, message: string, ids: { sessionId: string; messageId: string }): ActionResult {
  return create(ActionResultSchema, { ok: false, ...ids, code, explanation: explainCode(code), message });
}

function denied(reason: string, code: string): ConnectError {
  return new ConnectError(reason, Code.PermissionDenied, { "x-baton-deny": code });
}

function pendingOffer(view: SessionView): HandoffRecord | undefined {
  const pending = (view.handoff?.offers ?? []).filter((o) => o.status === "offered" || o.status === "context_sent");
  return pending[pending.length - 1];
}

/** The handoff / task ids an already-accepted message refers to. */
function extrasFromHistory(view: SessionView, messageId: string): Extras {
  for (const o of view.handoff?.offers ?? []) {
    if (o.offerMessageId === messageId || o.responseMessageId === messageId || o.contexts.some((c) => c.messageId === messageId)) {
      return { handoffId: o.handoffId };
    }
  }
  const task = view.task?.task;
  return task ? { taskId: task.taskId } : {};
}

const utf8 = new TextEncoder();

export class ActionGateway {
  readonly policies: PolicyCache;
  private readonly log: GatewayLogger;
  private readonly now: () => number;

  constructor(private readonly options: ActionGatewayOptions) {
    this.policies = new PolicyCache((id, signal) => options.actions.getPolicy(id, signal));
    this.log = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
  }

  get maxPayloadBytes(): number {
    return this.options.maxPayloadBytes;
  }

  // ------------------------------------------------------------- plumbing

  private nameOf(users: readonly UserRecord[]): (id: string) => string {
    const names = new Map(users.map((u) => [u.participantId, u.displayName]));
    return (id) => names.get(id) ?? shortParticipantName(id);
  }

  private async decideContext(loaded: LoadedSession, users: readonly UserRecord[], extra: Partial<DecideContext> = {}, signal?: AbortSignal): Promise<DecideContext> {
    const policyId = loaded.meta.policyVersion || loaded.view.effectivePolicyId;
    let policy: PolicySummary | undefined;
    try {
      policy = await this.policies.summary(policyId, signal);
    } catch (e) {
      throw upstreamError(e, `policy ${policyId}`);
    }
    const names = this.nameOf(users);
    const expires = Number(loaded.meta.expiresAtUnixMs);
    return {
      ...(policy ? { policy } : {}),
      lifecycle: lifecycleOf(loaded.meta.state),
      ...(expires > 0 ? { expiresAt: expires } : {}),
      now: this.now(),
      nameOf: (id) => names(id),
      ...extra,
    };
  }

  private checkSize(env: Envelope, field: string): void {
    const max = this.options.maxPayloadBytes;
    if (env.payload.byteLength > max) {
      throw invalidField(
        field,
        `makes a message of ${env.payload.byteLength} bytes; the runtime accepts at most ${max} bytes per message (a little of it is taken by the message's other fields)`,
      );
    }
  }

  private async send(env: Envelope, credential: string, signal?: AbortSignal): Promise<Ack> {
    try {
      return await this.options.actions.send(env, credential, signal);
    } catch (e) {
      const ce = upstreamError(e, "sending to the MACP runtime");
      if (ce.code === Code.Unavailable) {
        throw new ConnectError(`${ce.rawMessage}. Retry with the same message_id: a message that did arrive is not sent twice.`, Code.Unavailable);
      }
      throw ce;
    }
  }

  private audit(user: SignedInUser, action: string, result: ActionResult): void {
    this.log.info(
      {
        user: user.username,
        participant: user.participantId,
        action,
        sessionId: result.sessionId,
        messageId: result.messageId,
        ok: result.ok,
        duplicate: result.duplicate,
        ...(result.ok ? {} : { code: result.code }),
      },
      `console action ${action}`,
    );
  }

  /** The common path of every in-session message. */
  private async inSession(user: SignedInUser, input: SessionMessageInput, spec: SessionActionSpec, signal?: AbortSignal): Promise<ActionResult> {
    const identity = runtimeIdentityFor(this.options.authMode, user, this.options.devCredential);
    const [loaded, users] = await Promise.all([
      loadSession(this.options.runtime, input.sessionId, signal, this.options.historyTimeoutMs),
      this.options.users.users(),
    ]);
    const ids = { sessionId: input.sessionId, messageId: input.messageId };
    const prior = loaded.accepted.get(input.messageId);
    if (prior) return this.retried(user, spec.action, prior, spec.messageType, loaded, ids);

    const ctx = await this.decideContext(loaded, users, spec.decideExtra?.(loaded), signal);
    const d = decide({ role: user.role, participantId: user.participantId }, loaded.view, spec.action, ctx);
    if (!d.allowed) throw denied(d.reason, d.code);

    const built = spec.build({ loaded, view: loaded.view, me: user.participantId, nameOf: this.nameOf(users) });
    const env = buildEnvelope({
      mode: loaded.meta.mode,
      messageType: spec.messageType,
      sessionId: input.sessionId,
      sender: identity.participantId,
      messageId: input.messageId,
      timestampMs: this.now(),
      payload: built.payload,
    });
    this.checkSize(env, spec.sizeField);
    const ack = await this.send(env, identity.credential, signal);
    const result = resultFromAck(ack, ids, built.extras);
    this.audit(user, spec.action, result);
    return result;
  }

  /** A message_id already in the session's history: a retry of the same action, or a misuse. */
  private retried(
    user: SignedInUser,
    action: string,
    prior: AcceptedMessage,
    messageType: string,
    loaded: LoadedSession,
    ids: { sessionId: string; messageId: string },
  ): ActionResult {
    if (prior.sender !== user.participantId || prior.messageType !== messageType) {
      throw invalidField("message_id", "was already used for another message in this session; make a new one for each new action");
    }
    const result = create(ActionResultSchema, {
      ok: true,
      duplicate: true,
      ...ids,
      sessionState: loaded.meta.state,
      ...extrasFromHistory(loaded.view, ids.messageId),
    });
    this.audit(user, action, result);
    return result;
  }

  // ---------------------------------------------------------------- start

  async startSession(user: SignedInUser, input: StartInput, signal?: AbortSignal): Promise<ActionResult> {
    const identity = runtimeIdentityFor(this.options.authMode, user, this.options.devCredential);
    const users = await this.options.users.users();
    const d = decide({ role: user.role, participantId: user.participantId }, undefined, "startSession", {
      start: { mode: input.mode, participants: input.participants },
    });
    if (!d.allowed) throw denied(d.reason, d.code);

    const names = this.nameOf(users);
    const descriptor = policyDescriptorFor(input.mode, input.policy, names);
    if (descriptor) {
      try {
        await ensurePolicy(this.options.actions, this.policies, descriptor, identity.credential, user.participantId, signal);
      } catch (e) {
        if (e instanceof ConnectError && e.code === Code.FailedPrecondition) throw e;
        throw upstreamError(e, `registering policy ${descriptor.policyId}`);
      }
    }
    const sessionId = sessionIdForStart(user.participantId, input.messageId);
    const extensions: Record<string, Uint8Array> = {};
    if (input.scope !== "") extensions[SCOPE_EXTENSION] = utf8.encode(input.scope);
    if (input.frozenContextJson !== "") extensions[FROZEN_CONTEXT_EXTENSION] = utf8.encode(input.frozenContextJson);
    const env = buildEnvelope({
      mode: input.mode,
      messageType: CORE_TYPES.SessionStart,
      sessionId,
      sender: identity.participantId,
      messageId: input.messageId,
      timestampMs: this.now(),
      payload: {
        intent: input.intent,
        participants: input.participants,
        modeVersion: MODE_VERSION,
        configurationVersion: DEFAULT_CONFIGURATION_VERSION,
        policyVersion: descriptor?.policyId ?? "",
        ttlMs: BigInt(input.ttlMs),
        contextId: input.contextId,
        extensions,
      },
    });
    this.checkSize(env, "frozen_context_json");
    const ack = await this.send(env, identity.credential, signal);
    const result = resultFromAck(ack, { sessionId, messageId: input.messageId }, descriptor ? { policyId: descriptor.policyId } : {});
    this.audit(user, "startSession", result);
    return result;
  }

  // -------------------------------------------------------------- handoff

  offer(user: SignedInUser, input: OfferInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.inSession(
      user,
      input,
      {
        action: "offer",
        messageType: HANDOFF_TYPES.Offer,
        sizeField: "reason",
        decideExtra: () => ({ offer: { target: input.target } }),
        build: ({ loaded }) => {
          const fallback = loaded.start?.extensions[SCOPE_EXTENSION];
          const scope = input.scope !== "" ? input.scope : fallback ? new TextDecoder().decode(fallback) : "";
          if (scope === "") throw invalidField("scope", "is required: say what is handed over (the session has no default scope)");
          return {
            payload: { handoffId: input.messageId, targetParticipant: input.target, scope, reason: input.reason },
            extras: { handoffId: input.messageId },
          };
        },
      },
      signal,
    );
  }

  attachContext(user: SignedInUser, input: ContextInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.inSession(
      user,
      input,
      {
        action: "attachContext",
        messageType: HANDOFF_TYPES.Context,
        sizeField: input.field,
        build: ({ view, me }) => {
          const offers = view.handoff?.offers ?? [];
          const offer = input.handoffId === "" ? offers[offers.length - 1] : offers.find((o) => o.handoffId === input.handoffId);
          if (!offer) throw invalidField("handoff_id", `there is no offer ${input.handoffId} in this session`);
          if (offer.offeredBy !== me) throw invalidField("handoff_id", "context can only be attached to your own offers");
          return {
            payload: { handoffId: offer.handoffId, contentType: input.contentType, context: input.data },
            extras: { handoffId: offer.handoffId },
          };
        },
      },
      signal,
    );
  }

  private respond(kind: "accept" | "decline", user: SignedInUser, input: RespondInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.inSession(
      user,
      input,
      {
        action: kind,
        messageType: kind === "accept" ? HANDOFF_TYPES.Accept : HANDOFF_TYPES.Decline,
        sizeField: "reason",
        build: ({ view, me }) => {
          const pending = pendingOffer(view);
          if (!pending) throw denied("There is no offer waiting for an answer.", "state");
          if (input.handoffId !== "" && input.handoffId !== pending.handoffId) {
            throw invalidField("handoff_id", `is not the offer waiting for your answer (that is ${pending.handoffId}); reload the session`);
          }
          const payload =
            kind === "accept"
              ? { handoffId: pending.handoffId, acceptedBy: me, reason: input.reason }
              : { handoffId: pending.handoffId, declinedBy: me, reason: input.reason };
          return { payload, extras: { handoffId: pending.handoffId } };
        },
      },
      signal,
    );
  }

  accept(user: SignedInUser, input: RespondInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.respond("accept", user, input, signal);
  }

  decline(user: SignedInUser, input: RespondInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.respond("decline", user, input, signal);
  }

  commit(user: SignedInUser, input: CommitInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.inSession(
      user,
      input,
      {
        action: "commit",
        messageType: CORE_TYPES.Commitment,
        sizeField: "reason",
        build: ({ loaded, view, nameOf }) => {
          if (!view.handoff) throw denied("This isn't a handoff session; use TaskCommit for tasks.", "wrong_mode");
          const offers = view.handoff.offers;
          const accepted = offers.find((o) => o.status === "accepted");
          // decide() allowed a commit with only a pending offer: its implicit-accept time has passed.
          const implicit = accepted ? undefined : pendingOffer(view);
          const decided = accepted ?? implicit ?? offers[offers.length - 1];
          const scope = decided?.scope || view.intent;
          let reason = input.reason;
          if (input.positive) {
            const newOwner = (accepted ?? implicit)?.target;
            if (newOwner === undefined) {
              throw invalidField("outcome", "no offer was accepted, so the handoff can only be committed as declined");
            }
            const named = `${nameOf(newOwner)} (${newOwner})`;
            if (reason === "") reason = `${named} takes over ${scope}.`;
            else if (!reason.includes(newOwner)) reason = `${reason} (new owner: ${newOwner})`;
          } else if (reason === "") {
            reason = `The handoff was declined; ${nameOf(view.initiator)} (${view.initiator}) keeps ${scope}.`;
          }
          return {
            payload: {
              commitmentId: input.messageId,
              action: input.positive ? "handoff.accepted" : "handoff.declined",
              authorityScope: input.authorityScope || scope || "handoff",
              reason,
              modeVersion: loaded.meta.modeVersion,
              policyVersion: loaded.meta.policyVersion,
              configurationVersion: loaded.meta.configurationVersion,
              outcomePositive: input.positive,
            },
            ...(decided ? { extras: { handoffId: decided.handoffId } } : {}),
          };
        },
      },
      signal,
    );
  }

  /**
   * Cancel, by the initiator or someone with commitment authority under
   * their own identity. An admin without that authority cancels on the
   * initiator's behalf (see ActionGatewayOptions.cancelAsInitiator); the
   * reason then names the admin.
   */
  async cancel(user: SignedInUser, input: CancelInput, signal?: AbortSignal): Promise<ActionResult> {
    const ids = { sessionId: input.sessionId, messageId: input.messageId };
    const [loaded, users] = await Promise.all([
      loadSession(this.options.runtime, input.sessionId, signal, this.options.historyTimeoutMs),
      this.options.users.users(),
    ]);
    if (loaded.meta.state === SessionState.CANCELLED) {
      const result = create(ActionResultSchema, { ok: true, duplicate: true, ...ids, sessionState: SessionState.CANCELLED });
      this.audit(user, "cancel", result);
      return result;
    }
    const ctx = await this.decideContext(loaded, users, {}, signal);
    const d = decide({ role: user.role, participantId: user.participantId }, loaded.view, "cancel", ctx);
    if (!d.allowed) throw denied(d.reason, d.code);

    const me = user.participantId;
    const initiator = loaded.meta.initiator || loaded.view.initiator;
    const policy = ctx.policy ?? DEFAULT_POLICY_SUMMARY;
    const own = me === initiator || hasCommitmentAuthority(policy, me, initiator, loaded.view.participants);
    const who = `${user.displayName} (${me})`;
    let ack: Ack;
    try {
      if (own) {
        const identity = runtimeIdentityFor(this.options.authMode, user, this.options.devCredential);
        ack = await this.options.actions.cancelSession(input.sessionId, input.reason || `Cancelled in the Baton console by ${who}.`, identity.credential, signal);
      } else {
        const reason = `Cancelled by admin ${who}${input.reason ? `: ${input.reason}` : "."}`;
        ack = await this.cancelForAdmin(input.sessionId, initiator, reason, users, signal);
        this.log.warn({ user: user.username, sessionId: input.sessionId, initiator }, "admin cancelled a session on its initiator's behalf");
      }
    } catch (e) {
      if (e instanceof ConnectError && e.code === Code.FailedPrecondition) throw e;
      const ce = ConnectError.from(e);
      if (ce.code === Code.PermissionDenied) return this.audited(user, refused("FORBIDDEN", ce.rawMessage, ids));
      if (ce.code === Code.NotFound) return this.audited(user, refused("SESSION_NOT_FOUND", ce.rawMessage, ids));
      throw upstreamError(e, "cancelling the session");
    }
    return this.audited(user, resultFromAck(ack, ids));
  }

  private audited(user: SignedInUser, result: ActionResult): ActionResult {
    this.audit(user, "cancel", result);
    return result;
  }

  private async cancelForAdmin(sessionId: string, initiator: string, reason: string, users: readonly UserRecord[], signal?: AbortSignal): Promise<Ack> {
    if (this.options.cancelAsInitiator) return this.options.cancelAsInitiator(sessionId, reason);
    if (initiator === "" || initiator === RUNTIME_SENDER) throw new ConnectError("this session has no initiator to cancel it for", Code.FailedPrecondition);
    let credential: string | undefined;
    if (this.options.authMode === "dev") credential = this.options.devCredential ? this.options.devCredential(initiator) : initiator;
    else credential = users.find((u) => u.participantId === initiator)?.runtimeToken;
    if (credential === undefined || credential === "") {
      throw new ConnectError(
        `Baton can't cancel this session for you: the runtime only lets its initiator (${initiator}) or whoever may commit it cancel it, ` +
          `and the console has no runtime credential for ${initiator}. Cancel it with that identity (e.g. the baton CLI).`,
        Code.FailedPrecondition,
      );
    }
    return this.options.actions.cancelSession(sessionId, reason, credential, signal);
  }

  // ----------------------------------------------------------------- task

  private taskId(view: SessionView, given: string): string {
    const task = view.task?.task;
    if (!task) throw denied("No task has been requested yet.", "state");
    if (given !== "" && given !== task.taskId) throw invalidField("task_id", `is not this session's task (${task.taskId})`);
    return task.taskId;
  }

  taskRequest(user: SignedInUser, input: TaskRequestInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.inSession(
      user,
      input,
      {
        action: "taskRequest",
        messageType: TASK_TYPES.Request,
        sizeField: "input_json",
        decideExtra: () => ({ task: { requestedAssignee: input.assignee } }),
        build: ({ me }) => {
          if (input.assignee === me) throw invalidField("assignee", "you can't request a task from yourself");
          return {
            payload: {
              taskId: input.messageId,
              title: input.title,
              instructions: input.instructions,
              requestedAssignee: input.assignee,
              input: utf8.encode(input.inputJson),
              deadlineUnixMs: BigInt(input.deadlineUnixMs),
            },
            extras: { taskId: input.messageId },
          };
        },
      },
      signal,
    );
  }

  private taskRespond(kind: "taskAccept" | "taskReject", user: SignedInUser, input: TaskRespondInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.inSession(
      user,
      input,
      {
        action: kind,
        messageType: kind === "taskAccept" ? TASK_TYPES.Accept : TASK_TYPES.Reject,
        sizeField: "reason",
        build: ({ view, me }) => {
          const taskId = this.taskId(view, input.taskId);
          return { payload: { taskId, assignee: me, reason: input.reason }, extras: { taskId } };
        },
      },
      signal,
    );
  }

  taskAccept(user: SignedInUser, input: TaskRespondInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.taskRespond("taskAccept", user, input, signal);
  }

  taskReject(user: SignedInUser, input: TaskRespondInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.taskRespond("taskReject", user, input, signal);
  }

  taskUpdate(user: SignedInUser, input: TaskUpdateInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.inSession(
      user,
      input,
      {
        action: "taskUpdate",
        messageType: TASK_TYPES.Update,
        sizeField: "message",
        build: ({ view }) => {
          const taskId = this.taskId(view, input.taskId);
          return { payload: { taskId, status: input.status, progress: input.progress, message: input.message }, extras: { taskId } };
        },
      },
      signal,
    );
  }

  taskComplete(user: SignedInUser, input: TaskCompleteInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.inSession(
      user,
      input,
      {
        action: "taskComplete",
        messageType: TASK_TYPES.Complete,
        sizeField: "output",
        build: ({ view, me }) => {
          const taskId = this.taskId(view, input.taskId);
          return { payload: { taskId, assignee: me, output: input.output, summary: input.summary }, extras: { taskId } };
        },
      },
      signal,
    );
  }

  taskFail(user: SignedInUser, input: TaskFailInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.inSession(
      user,
      input,
      {
        action: "taskFail",
        messageType: TASK_TYPES.Fail,
        sizeField: "reason",
        build: ({ view, me }) => {
          const taskId = this.taskId(view, input.taskId);
          return {
            payload: { taskId, assignee: me, errorCode: input.errorCode, reason: input.reason, retryable: input.retryable },
            extras: { taskId },
          };
        },
      },
      signal,
    );
  }

  taskCommit(user: SignedInUser, input: TaskCommitInput, signal?: AbortSignal): Promise<ActionResult> {
    return this.inSession(
      user,
      input,
      {
        action: "commit",
        messageType: CORE_TYPES.Commitment,
        sizeField: "reason",
        build: ({ loaded, view, nameOf }) => {
          const task = view.task?.task;
          if (!task) throw denied("This isn't a task session; use Commit for handoffs.", "wrong_mode");
          const report = task.terminalReport;
          if (input.positive && report?.kind === "fail") {
            throw invalidField("outcome", "the task failed, so it can only be committed as failed");
          }
          let reason = input.reason;
          if (reason === "" && report) {
            const by = `${nameOf(report.assignee)} (${report.assignee})`;
            reason =
              report.kind === "complete"
                ? report.summary || `Completed by ${by}.`
                : `Failed (${report.errorCode}) by ${by}${report.reason ? `: ${report.reason}` : "."}`;
          }
          if (reason === "") reason = input.positive ? "Task completed." : "Task failed.";
          return {
            payload: {
              commitmentId: input.messageId,
              action: input.positive ? "task.completed" : "task.failed",
              authorityScope: input.authorityScope || task.title || "task",
              reason,
              modeVersion: loaded.meta.modeVersion,
              policyVersion: loaded.meta.policyVersion,
              configurationVersion: loaded.meta.configurationVersion,
              outcomePositive: input.positive,
            },
            extras: { taskId: task.taskId },
          };
        },
      },
      signal,
    );
  }

  // -------------------------------------------------------------- policies

  /** A registered policy's descriptor (for decide() in the browser), or null when the runtime has none. */
  async policy(policyId: string, signal?: AbortSignal): Promise<PolicyDescriptor | null> {
    try {
      const descriptor = await this.options.actions.getPolicy(policyId, signal);
      if (descriptor) this.policies.remember(descriptor);
      return descriptor;
    } catch (e) {
      throw upstreamError(e, `policy ${policyId}`);
    }
  }

  // ------------------------------------------------------------ directory

  /** Users of the console, and the other participant ids (agents) seen in sessions. */
  async directory(signal?: AbortSignal): Promise<ListDirectoryResponse> {
    const users = await this.options.users.users();
    let sessions: SessionMetadata[];
    try {
      sessions = await this.options.actions.listSessions(signal);
    } catch (e) {
      throw upstreamError(e, "listing sessions");
    }
    const human = new Set(users.map((u) => u.participantId));
    const agents = new Map<string, { count: number; last: number }>();
    for (const s of sessions) {
      const ids = new Set([...s.participants, s.initiator]);
      for (const id of ids) {
        if (id === "" || id === RUNTIME_SENDER || human.has(id)) continue;
        const a = agents.get(id) ?? { count: 0, last: 0 };
        a.count += 1;
        a.last = Math.max(a.last, Number(s.startedAtUnixMs));
        agents.set(id, a);
      }
    }
    return create(ListDirectoryResponseSchema, {
      users: [...users]
        .sort((a, b) => a.displayName.localeCompare(b.displayName))
        .map((u) =>
          create(DirectoryUserSchema, {
            username: u.username,
            displayName: u.displayName,
            role: u.role,
            participantId: u.participantId,
            disabled: u.disabled === true,
          }),
        ),
      agents: [...agents.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([participantId, a]) => create(DirectoryAgentSchema, { participantId, sessionCount: a.count, lastSeenUnixMs: BigInt(a.last) })),
    });
  }
}
