// The common path of every action: the gateway's options, policy cache and
// logger; the decide() context folded from a session's history; the payload
// size check; Send with a retry hint; the audit line; and the in-session
// pipeline (load → retry check → decide() → build → Send → ActionResult)
// that each action family feeds with a SessionActionSpec.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ActionResultSchema, type ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import type { Ack, Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import type { UserRecord } from "@/lib/accounts/users-file";
import { decide, shortParticipantName, type Action, type DecideContext } from "@/lib/authz/decide";
import type { PolicySummary } from "@/lib/authz/policy-summary";
import { buildEnvelope, type PayloadInput } from "@/lib/macp/payloads";
import type { SessionView } from "@/lib/macp/projections/session";
import type { SessionMessageInput } from "../action-input";
import { invalidField } from "../action-input";
import { upstreamError } from "../errors";
import { runtimeIdentityFor, type RuntimeIdentity, type SignedInUser, type UserAuthMode } from "../identity";
import { silentLogger, type GatewayLogger } from "../logger";
import { PolicyCache } from "../policies";
import type { RuntimeActions } from "../runtime-actions";
import type { RuntimeReader } from "../runtime-client";
import { lifecycleOf, loadSession, type AcceptedMessage, type LoadedSession } from "../session-state";
import { denied, extrasFromHistory, resultFromAck, type Extras, type ResultIds } from "./results";

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
  /** Participant ids seen in sessions, most recent first (the console's catalog); the directory's agents. */
  participantsSeen?: (limit: number) => readonly { participantId: string; sessions: number; lastSeenMs: number }[];
  /** Agents' display names (the agents directory, BATON_AGENTS_FILE). */
  agentNames?: ReadonlyMap<string, string>;
  /** Time allowed to read a session's history. Default 10 s. */
  historyTimeoutMs?: number;
}

export interface BuildContext {
  loaded: LoadedSession;
  view: SessionView;
  me: string;
  nameOf: (id: string) => string;
}

/** One in-session action: what decide() is asked, what is sent, and how its payload is built. */
export interface SessionActionSpec {
  action: Action;
  messageType: string;
  /** Request field that carries the bulk of the payload (for size errors). */
  sizeField: string;
  decideExtra?: (loaded: LoadedSession) => Partial<DecideContext>;
  /** The payload, once decide() allowed the action; throws ConnectErrors for inputs that don't fit the state. */
  build: (b: BuildContext) => { payload: PayloadInput; extras?: Extras };
}

export class ActionCore {
  readonly policies: PolicyCache;
  readonly log: GatewayLogger;
  readonly now: () => number;

  constructor(readonly options: ActionGatewayOptions) {
    this.policies = new PolicyCache((id, signal) => options.actions.getPolicy(id, signal));
    this.log = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
  }

  identity(user: SignedInUser): RuntimeIdentity {
    return runtimeIdentityFor(this.options.authMode, user, this.options.devCredential);
  }

  /** A session's state folded from its history, and the users file, read together. */
  loadWithUsers(sessionId: string, signal?: AbortSignal): Promise<[LoadedSession, readonly UserRecord[]]> {
    return Promise.all([loadSession(this.options.runtime, sessionId, signal, this.options.historyTimeoutMs), this.options.users.users()]);
  }

  nameOf(users: readonly UserRecord[]): (id: string) => string {
    const names = new Map(users.map((u) => [u.participantId, u.displayName]));
    return (id) => names.get(id) ?? shortParticipantName(id);
  }

  async decideContext(
    loaded: LoadedSession,
    users: readonly UserRecord[],
    extra: Partial<DecideContext> = {},
    signal?: AbortSignal,
  ): Promise<DecideContext> {
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

  checkSize(env: Envelope, field: string): void {
    const max = this.options.maxPayloadBytes;
    if (env.payload.byteLength > max) {
      throw invalidField(
        field,
        `makes a message of ${env.payload.byteLength} bytes; the runtime accepts at most ${max} bytes per message (a little of it is taken by the message's other fields)`,
      );
    }
  }

  async send(env: Envelope, credential: string, signal?: AbortSignal): Promise<Ack> {
    try {
      return await this.options.actions.send(env, credential, signal);
    } catch (e) {
      const ce = upstreamError(e, "sending to the MACP runtime");
      if (ce.code === Code.Unavailable) {
        throw new ConnectError(
          `${ce.rawMessage}. Retry with the same message_id: a message that did arrive is not sent twice.`,
          Code.Unavailable,
        );
      }
      throw ce;
    }
  }

  audit(user: SignedInUser, action: string, result: ActionResult): void {
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
  async inSession(user: SignedInUser, input: SessionMessageInput, spec: SessionActionSpec, signal?: AbortSignal): Promise<ActionResult> {
    const identity = this.identity(user);
    const [loaded, users] = await this.loadWithUsers(input.sessionId, signal);
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
    ids: ResultIds,
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
}
