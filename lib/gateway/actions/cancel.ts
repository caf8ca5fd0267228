// Cancel, by the initiator or someone with commitment authority under their
// own identity. An admin without that authority cancels on the initiator's
// behalf (see ActionGatewayOptions.cancelAsInitiator); the reason then names
// the admin.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ActionResultSchema, type ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import type { Ack } from "@/lib/gen/macp/v1/envelope_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import type { UserRecord } from "@/lib/accounts/users-file";
import { decide } from "@/lib/authz/decide";
import { hasCommitmentAuthority, DEFAULT_POLICY_SUMMARY } from "@/lib/authz/policy-summary";
import { RUNTIME_SENDER } from "@/lib/macp/constants";
import type { CancelInput } from "../action-input";
import { upstreamError } from "../errors";
import type { SignedInUser } from "../identity";
import type { ActionCore } from "./core";
import { denied, refused, resultFromAck } from "./results";

export async function cancelSession(core: ActionCore, user: SignedInUser, input: CancelInput, signal?: AbortSignal): Promise<ActionResult> {
  const ids = { sessionId: input.sessionId, messageId: input.messageId };
  const audited = (result: ActionResult): ActionResult => {
    core.audit(user, "cancel", result);
    return result;
  };
  const [loaded, users] = await core.loadWithUsers(input.sessionId, signal);
  if (loaded.meta.state === SessionState.CANCELLED) {
    return audited(create(ActionResultSchema, { ok: true, duplicate: true, ...ids, sessionState: SessionState.CANCELLED }));
  }
  const ctx = await core.decideContext(loaded, users, {}, signal);
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
      const identity = core.identity(user);
      ack = await core.options.actions.cancelSession(
        input.sessionId,
        input.reason || `Cancelled in the Baton console by ${who}.`,
        identity.credential,
        signal,
      );
    } else {
      const reason = `Cancelled by admin ${who}${input.reason ? `: ${input.reason}` : "."}`;
      ack = await cancelForAdmin(core, input.sessionId, initiator, reason, users, signal);
      core.log.warn({ user: user.username, sessionId: input.sessionId, initiator }, "admin cancelled a session on its initiator's behalf");
    }
  } catch (e) {
    if (e instanceof ConnectError && e.code === Code.FailedPrecondition) throw e;
    const ce = ConnectError.from(e);
    if (ce.code === Code.PermissionDenied) return audited(refused("FORBIDDEN", ce.rawMessage, ids));
    if (ce.code === Code.NotFound) return audited(refused("SESSION_NOT_FOUND", ce.rawMessage, ids));
    throw upstreamError(e, "cancelling the session");
  }
  return audited(resultFromAck(ack, ids));
}

async function cancelForAdmin(
  core: ActionCore,
  sessionId: string,
  initiator: string,
  reason: string,
  users: readonly UserRecord[],
  signal?: AbortSignal,
): Promise<Ack> {
  const { options } = core;
  if (options.cancelAsInitiator) return options.cancelAsInitiator(sessionId, reason);
  if (initiator === "" || initiator === RUNTIME_SENDER)
    throw new ConnectError("this session has no initiator to cancel it for", Code.FailedPrecondition);
  let credential: string | undefined;
  if (options.authMode === "dev") credential = options.devCredential ? options.devCredential(initiator) : initiator;
  else credential = users.find((u) => u.participantId === initiator)?.runtimeToken;
  if (credential === undefined || credential === "") {
    throw new ConnectError(
      `Baton can't cancel this session for you: the runtime only lets its initiator (${initiator}) or whoever may commit it cancel it, ` +
        `and the console has no runtime credential for ${initiator}. Cancel it with that identity (e.g. the baton CLI).`,
      Code.FailedPrecondition,
    );
  }
  return options.actions.cancelSession(sessionId, reason, credential, signal);
}
