// Envelope builders for gateway tests: one Handoff session, offer → accept →
// commit, built with the shared envelope builder.
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { DEFAULT_CONFIGURATION_VERSION, DEFAULT_POLICY_ID, HANDOFF_MODE, MODE_VERSION } from "@/lib/macp/constants";
import { newSessionId } from "@/lib/macp/ids";
import { buildEnvelope } from "@/lib/macp/payloads";

export const OWNER = "agent://owner";
export const TARGET = "agent://target";

export function handoffScript(sessionId = newSessionId(), owner = OWNER, target = TARGET) {
  const env = (messageType: string, sender: string, payload: Record<string, unknown>): Envelope =>
    buildEnvelope({ mode: HANDOFF_MODE, messageType, sessionId, sender, payload });
  return {
    sessionId,
    owner,
    target,
    start: (intent = "hand over the pager") =>
      env("SessionStart", owner, {
        intent,
        participants: [owner, target],
        modeVersion: MODE_VERSION,
        configurationVersion: DEFAULT_CONFIGURATION_VERSION,
        policyVersion: "",
        ttlMs: 60_000n,
      }),
    offer: (handoffId = "h1", scope = "pager") =>
      env("HandoffOffer", owner, { handoffId, targetParticipant: target, scope, reason: "shift change" }),
    context: (handoffId = "h1", text = "runbook") =>
      env("HandoffContext", owner, { handoffId, contentType: "text/plain", context: new TextEncoder().encode(text) }),
    accept: (handoffId = "h1") => env("HandoffAccept", target, { handoffId, acceptedBy: target, reason: "on it" }),
    commit: () =>
      env("Commitment", owner, {
        commitmentId: `c-${sessionId}`,
        action: "handoff.accepted",
        authorityScope: "pager",
        reason: `${target} owns the pager`,
        modeVersion: MODE_VERSION,
        configurationVersion: DEFAULT_CONFIGURATION_VERSION,
        policyVersion: DEFAULT_POLICY_ID,
        outcomePositive: true,
      }),
  };
}
