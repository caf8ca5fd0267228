// Builders for lib/client unit tests: real envelopes (via the payload
// registry) wrapped in the browser-facing stream messages.

import { create } from "@bufbuild/protobuf";
import {
  SessionSummarySchema,
  SubscribeSessionResponseSchema,
  type SessionSummary,
  type SubscribeSessionResponse,
} from "@/lib/gen/baton/v1/console_pb";
import { SessionMetadataSchema, type SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { buildEnvelope, type PayloadInput } from "@/lib/macp/payloads";

export const SID = "01JTESTSESSION000000000001";
let counter = 0;

export function env(
  mode: string,
  messageType: string,
  payload: PayloadInput,
  opts: { sender?: string; messageId?: string; ts?: number; sessionId?: string } = {},
): Envelope {
  counter += 1;
  return buildEnvelope({
    mode,
    messageType,
    sessionId: opts.sessionId ?? SID,
    sender: opts.sender ?? "alice",
    messageId: opts.messageId ?? `m-${counter}`,
    timestampMs: opts.ts ?? 1_700_000_000_000 + counter * 1000,
    payload,
  });
}

export function eventMsg(sequence: number, envelope: Envelope, observedAt = 0): SubscribeSessionResponse {
  return create(SubscribeSessionResponseSchema, {
    item: {
      case: "event",
      value: { sessionId: envelope.sessionId, sequence: BigInt(sequence), envelope, observedAtUnixMs: BigInt(observedAt) },
    },
  });
}

export function metadata(
  state: SessionState,
  extra: Partial<{ sessionId: string; mode: string; expiresAt: number }> = {},
): SessionMetadata {
  return create(SessionMetadataSchema, {
    sessionId: extra.sessionId ?? SID,
    mode: extra.mode ?? HANDOFF_MODE,
    state,
    startedAtUnixMs: 1_700_000_000_000n,
    expiresAtUnixMs: BigInt(extra.expiresAt ?? 1_700_003_600_000),
    participants: ["alice", "bob", "carol"],
    initiator: "alice",
    modeVersion: "1.0.0",
    configurationVersion: "config.default",
    policyVersion: "policy.default",
  });
}

export function metadataMsg(state: SessionState): SubscribeSessionResponse {
  return create(SubscribeSessionResponseSchema, { item: { case: "metadata", value: metadata(state) } });
}

export function caughtUpMsg(head: number): SubscribeSessionResponse {
  return create(SubscribeSessionResponseSchema, { item: { case: "caughtUp", value: { headSequence: BigInt(head) } } });
}

export function heartbeatMsg(): SubscribeSessionResponse {
  return create(SubscribeSessionResponseSchema, { item: { case: "heartbeat", value: { serverTimeUnixMs: 1n } } });
}

export const start = (participants = ["alice", "bob", "carol"], mode = HANDOFF_MODE): Envelope =>
  env(mode, "SessionStart", {
    intent: "Hand over the pager",
    participants,
    modeVersion: "1.0.0",
    configurationVersion: "config.default",
    ttlMs: 3_600_000n,
  });

export const offer = (handoffId: string, target: string): Envelope =>
  env(HANDOFF_MODE, "HandoffOffer", { handoffId, targetParticipant: target, scope: "pager", reason: "shift change" });

export const context = (handoffId: string, text = "# Runbook"): Envelope =>
  env(HANDOFF_MODE, "HandoffContext", {
    handoffId,
    contentType: "text/markdown",
    context: new TextEncoder().encode(text),
  });

export const accept = (handoffId: string, by: string): Envelope =>
  env(HANDOFF_MODE, "HandoffAccept", { handoffId, acceptedBy: by, reason: "ok" }, { sender: by });

export const decline = (handoffId: string, by: string): Envelope =>
  env(HANDOFF_MODE, "HandoffDecline", { handoffId, declinedBy: by, reason: "busy" }, { sender: by });

export const commitment = (action = "handoff.accepted", positive = true, mode = HANDOFF_MODE): Envelope =>
  env(mode, "Commitment", {
    commitmentId: "c1",
    action,
    authorityScope: "pager",
    reason: "carol owns it",
    modeVersion: "1.0.0",
    policyVersion: "policy.default",
    configurationVersion: "config.default",
    outcomePositive: positive,
  });

export const taskEnv = {
  request: () => env(TASK_MODE, "TaskRequest", { taskId: "t1", title: "Rotate keys", instructions: "do it", requestedAssignee: "bob" }),
  accept: () => env(TASK_MODE, "TaskAccept", { taskId: "t1", assignee: "bob" }, { sender: "bob" }),
  update: (progress: number) =>
    env(TASK_MODE, "TaskUpdate", { taskId: "t1", status: "working", progress, message: `at ${progress}` }, { sender: "bob" }),
  complete: () =>
    env(
      TASK_MODE,
      "TaskComplete",
      { taskId: "t1", assignee: "bob", output: new TextEncoder().encode("{}"), summary: "done" },
      { sender: "bob" },
    ),
};

export function summary(
  id: string,
  fields: Partial<{
    state: SessionState;
    mode: string;
    phase: string;
    intent: string;
    owner: string;
    target: string;
    scope: string;
    eventCount: number;
    startedAt: number;
    expiresAt: number;
    activity: number;
    participants: string[];
    outcome: string;
  }> = {},
): SessionSummary {
  return create(SessionSummarySchema, {
    metadata: {
      sessionId: id,
      mode: fields.mode ?? HANDOFF_MODE,
      state: fields.state ?? SessionState.OPEN,
      startedAtUnixMs: BigInt(fields.startedAt ?? 1_700_000_000_000),
      expiresAtUnixMs: BigInt(fields.expiresAt ?? 1_700_003_600_000),
      participants: fields.participants ?? ["alice", "bob"],
      initiator: fields.owner ?? "alice",
    },
    phase: fields.phase ?? "OfferPending",
    intent: fields.intent ?? `intent of ${id}`,
    currentOwner: fields.owner ?? "alice",
    currentTarget: fields.target ?? "bob",
    scope: fields.scope ?? "pager",
    lastActivityUnixMs: BigInt(fields.activity ?? 1_700_000_100_000),
    eventCount: BigInt(fields.eventCount ?? 2),
    outcome: fields.outcome ?? "",
  });
}
