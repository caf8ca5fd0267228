import { describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { CommitmentPayloadSchema, SessionStartPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import { HandoffOfferPayloadSchema } from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import { TaskRequestPayloadSchema } from "@/lib/gen/macp/modes/task/v1/task_pb";
import { EnvelopeSchema } from "@/lib/gen/macp/v1/envelope_pb";
import {
  buildEnvelope,
  decodePayload,
  decodePayloadToJson,
  encodePayload,
  payloadFromJson,
  payloadSchemaFor,
  payloadToJson,
} from "@/lib/macp/payloads";
import { DECISION_MODE, HANDOFF_MODE, PROPOSAL_MODE, QUORUM_MODE, TASK_MODE } from "@/lib/macp/constants";

describe("payloadSchemaFor", () => {
  it("maps mode-specific types", () => {
    expect(payloadSchemaFor(HANDOFF_MODE, "HandoffOffer")?.typeName).toBe("macp.modes.handoff.v1.HandoffOfferPayload");
    expect(payloadSchemaFor(HANDOFF_MODE, "HandoffContext")?.typeName).toBe("macp.modes.handoff.v1.HandoffContextPayload");
    expect(payloadSchemaFor(TASK_MODE, "TaskFail")?.typeName).toBe("macp.modes.task.v1.TaskFailPayload");
    expect(payloadSchemaFor(TASK_MODE, "TaskUpdate")?.typeName).toBe("macp.modes.task.v1.TaskUpdatePayload");
  });

  it("distinguishes same message_type across modes", () => {
    expect(payloadSchemaFor(PROPOSAL_MODE, "Reject")?.typeName).toBe("macp.modes.proposal.v1.RejectPayload");
    expect(payloadSchemaFor(QUORUM_MODE, "Reject")?.typeName).toBe("macp.modes.quorum.v1.RejectPayload");
    expect(payloadSchemaFor(DECISION_MODE, "Proposal")?.typeName).toBe("macp.modes.decision.v1.ProposalPayload");
    expect(payloadSchemaFor(PROPOSAL_MODE, "Proposal")?.typeName).toBe("macp.modes.proposal.v1.ProposalPayload");
  });

  it("maps core types in any mode, including the empty ambient mode", () => {
    for (const mode of [HANDOFF_MODE, TASK_MODE, "ext.whatever.v1", ""]) {
      expect(payloadSchemaFor(mode, "SessionStart")?.typeName).toBe("macp.v1.SessionStartPayload");
      expect(payloadSchemaFor(mode, "Commitment")?.typeName).toBe("macp.v1.CommitmentPayload");
      expect(payloadSchemaFor(mode, "SessionResume")?.typeName).toBe("macp.v1.SessionResumePayload");
    }
    expect(payloadSchemaFor("", "Signal")?.typeName).toBe("macp.v1.SignalPayload");
    expect(payloadSchemaFor("", "Progress")?.typeName).toBe("macp.v1.ProgressPayload");
  });

  it("returns undefined for unknown pairs and does not leak across modes", () => {
    expect(payloadSchemaFor(HANDOFF_MODE, "TaskRequest")).toBeUndefined();
    expect(payloadSchemaFor(TASK_MODE, "Bogus")).toBeUndefined();
    expect(payloadSchemaFor(TASK_MODE, "toString")).toBeUndefined();
    expect(payloadSchemaFor(TASK_MODE, "__proto__")).toBeUndefined();
    expect(payloadSchemaFor("__proto__", "toString")).toBeUndefined();
    expect(payloadSchemaFor("constructor", "name")).toBeUndefined();
  });
});

describe("decodePayload / encodePayload", () => {
  it("round-trips an init object", () => {
    const bytes = encodePayload(HANDOFF_MODE, "HandoffOffer", { handoffId: "h1", targetParticipant: "bob", scope: "s" });
    const res = decodePayload(HANDOFF_MODE, "HandoffOffer", bytes);
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.typeName).toBe("macp.modes.handoff.v1.HandoffOfferPayload");
    expect(fromBinary(HandoffOfferPayloadSchema, bytes).targetParticipant).toBe("bob");
  });

  it("accepts a message of the right type and rejects one of the wrong type", () => {
    const offer = create(HandoffOfferPayloadSchema, { handoffId: "h1" });
    expect(encodePayload(HANDOFF_MODE, "HandoffOffer", offer)).toEqual(toBinary(HandoffOfferPayloadSchema, offer));
    expect(() => encodePayload(HANDOFF_MODE, "HandoffAccept", offer)).toThrow(/HandoffAcceptPayload/);
  });

  it("passes raw bytes through and throws on unknown pairs", () => {
    const raw = new Uint8Array([1, 2, 3]);
    expect(encodePayload(TASK_MODE, "Whatever", raw)).toBe(raw);
    expect(() => encodePayload(TASK_MODE, "Whatever", {})).toThrow(/no payload type/);
  });

  it("never throws: unknown types and malformed bytes give ok=false", () => {
    const unknown = decodePayload(TASK_MODE, "Nope", new Uint8Array());
    expect(unknown.ok).toBe(false);
    const garbage = decodePayload(TASK_MODE, "TaskRequest", new Uint8Array([0xff, 0xff, 0xff, 0xff]));
    expect(garbage).toMatchObject({ ok: false });
    if (!garbage.ok) expect(garbage.reason).toMatch(/TaskRequestPayload/);
  });

  it("decodes an empty payload as all defaults", () => {
    const res = decodePayload(HANDOFF_MODE, "Commitment", new Uint8Array());
    expect(res.ok).toBe(true);
  });
});

describe("payloadToJson", () => {
  it("keeps outcome_positive: false and other defaults, snake_case keys", () => {
    const bytes = toBinary(
      CommitmentPayloadSchema,
      create(CommitmentPayloadSchema, { commitmentId: "c1", action: "handoff.declined", outcomePositive: false }),
    );
    // false is a proto3 default: it is not even on the wire, yet must be rendered.
    expect(bytes.length).toBeGreaterThan(0);
    const json = decodePayloadToJson(HANDOFF_MODE, "Commitment", bytes);
    expect(json).toEqual({
      commitment_id: "c1",
      action: "handoff.declined",
      authority_scope: "",
      reason: "",
      mode_version: "",
      policy_version: "",
      configuration_version: "",
      outcome_positive: false,
    });
  });

  it("writes bytes as base64 and int64 as numbers, nested messages included", () => {
    const req = create(TaskRequestPayloadSchema, {
      taskId: "t1",
      input: new TextEncoder().encode("hi"),
      deadlineUnixMs: 1773509100000n,
    });
    const json = payloadToJson(TaskRequestPayloadSchema, req);
    expect(json.input).toBe("aGk=");
    expect(json.deadline_unix_ms).toBe(1773509100000);
    expect(json.requested_assignee).toBe("");

    const start = create(SessionStartPayloadSchema, {
      ttlMs: 600000n,
      roots: [{ uri: "macp://x", name: "X" }],
      extensions: { "x.y": new Uint8Array([1]) },
    });
    const sj = payloadToJson(SessionStartPayloadSchema, start);
    expect(sj.ttl_ms).toBe(600000);
    expect(sj.roots).toEqual([{ uri: "macp://x", name: "X" }]);
    expect(sj.extensions).toEqual({ "x.y": "AQ==" });
    expect(sj.context_id).toBe("");
  });

  it("keeps int64 beyond the safe range as a string", () => {
    const req = create(TaskRequestPayloadSchema, { deadlineUnixMs: 2n ** 60n });
    expect(payloadToJson(TaskRequestPayloadSchema, req).deadline_unix_ms).toBe((2n ** 60n).toString());
  });

  it("payloadFromJson reads snake_case and camelCase", () => {
    const a = payloadFromJson(TASK_MODE, "TaskAccept", { task_id: "t1", assignee: "w" });
    const b = payloadFromJson(TASK_MODE, "TaskAccept", { taskId: "t1", assignee: "w", extra: 1 });
    expect(a).toEqual(b);
  });
});

describe("buildEnvelope", () => {
  it("fills version, a UUID v4 message id and the encoded payload", () => {
    const env = buildEnvelope({
      mode: TASK_MODE,
      messageType: "TaskAccept",
      sessionId: "01JCTASK9Y5P9V4H0A8E0F4T01",
      payload: { taskId: "t1" },
      timestampMs: 1234,
    });
    expect(env.macpVersion).toBe("1.0");
    expect(env.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(env.sender).toBe("");
    expect(env.timestampUnixMs).toBe(1234n);
    const res = decodePayload(env.mode, env.messageType, env.payload);
    expect(res.ok && res.typeName).toBe("macp.modes.task.v1.TaskAcceptPayload");
    // And it is a valid Envelope on the wire.
    const back = fromBinary(EnvelopeSchema, toBinary(EnvelopeSchema, env));
    expect(back.messageId).toBe(env.messageId);
  });

  it("uses the given sender, message id and current time by default", () => {
    const before = Date.now();
    const env = buildEnvelope({
      mode: HANDOFF_MODE,
      messageType: "Commitment",
      sessionId: "s",
      sender: "agent://a",
      messageId: "m1",
      payload: { action: "x" },
    });
    expect(env.sender).toBe("agent://a");
    expect(env.messageId).toBe("m1");
    expect(Number(env.timestampUnixMs)).toBeGreaterThanOrEqual(before);
  });
});

describe("payloadToJson overloads", () => {
  it("accepts a successful DecodeResult directly", () => {
    const bytes = encodePayload(TASK_MODE, "TaskFail", { taskId: "t", retryable: false });
    const decoded = decodePayload(TASK_MODE, "TaskFail", bytes);
    if (!decoded.ok) throw new Error(decoded.reason);
    expect(payloadToJson(decoded)).toEqual(payloadToJson(decoded.schema, decoded.message));
    expect(payloadToJson(decoded).retryable).toBe(false);
  });
});
