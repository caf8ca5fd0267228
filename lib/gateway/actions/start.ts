// Starting a session: decide() on the start form, the policy registered
// first when the form asks for one, and a SessionStart whose session id is
// derived from the browser's message_id, so a retry starts the same session.
import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ActionResult } from "@/lib/gen/baton/v1/actions_pb";
import { decide } from "@/lib/authz/decide";
import { CORE_TYPES, DEFAULT_CONFIGURATION_VERSION, MODE_VERSION, SCOPE_EXTENSION } from "@/lib/macp/constants";
import { buildEnvelope } from "@/lib/macp/payloads";
import type { StartInput } from "../action-input";
import { upstreamError } from "../errors";
import type { SignedInUser } from "../identity";
import { ensurePolicy, policyDescriptorFor } from "../policies";
import type { ActionCore } from "./core";
import { denied, resultFromAck } from "./results";

/** SessionStart extension keys the console writes (values are UTF-8). */
export { SCOPE_EXTENSION };
export const FROZEN_CONTEXT_EXTENSION = "baton.frozen_context";

const utf8 = new TextEncoder();

/** A session id for a new session, the same for every retry of one start (UUID v4 layout). */
export function sessionIdForStart(participantId: string, messageId: string): string {
  const h = createHash("sha256").update("baton start\u0000").update(participantId).update("\u0000").update(messageId).digest();
  h[6] = ((h[6] as number) & 0x0f) | 0x40;
  h[8] = ((h[8] as number) & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export async function startSession(core: ActionCore, user: SignedInUser, input: StartInput, signal?: AbortSignal): Promise<ActionResult> {
  const identity = core.identity(user);
  const users = await core.options.users.users();
  const d = decide({ role: user.role, participantId: user.participantId }, undefined, "startSession", {
    start: { mode: input.mode, participants: input.participants },
  });
  if (!d.allowed) throw denied(d.reason, d.code);

  const names = core.nameOf(users);
  const descriptor = policyDescriptorFor(input.mode, input.policy, names);
  if (descriptor) {
    try {
      await ensurePolicy(core.options.actions, core.policies, descriptor, identity.credential, user.participantId, signal);
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
    timestampMs: core.now(),
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
  core.checkSize(env, "frozen_context_json");
  const ack = await core.send(env, identity.credential, signal);
  const result = resultFromAck(ack, { sessionId, messageId: input.messageId }, descriptor ? { policyId: descriptor.policyId } : {});
  core.audit(user, "startSession", result);
  return result;
}
