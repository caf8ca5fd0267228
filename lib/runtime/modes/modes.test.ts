// Pure mode rules, without the kernel: each rejection carries the right code
// and the state is never mutated in place.
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { buildEnvelope } from "@/lib/macp/payloads";
import { CommitmentPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import { MacpRejection } from "../errors";
import { DEFAULT_POLICY, parseRules, type BoundPolicy } from "../policy";
import { handoffMode, type HandoffState } from "./handoff";
import { taskMode, type TaskState } from "./task";
import type { SessionContext } from "./types";

const ctx = (initiator: string, parts: string[], rulesJson = "{}", mode = HANDOFF_MODE): SessionContext => {
  const parsed = parseRules(mode, rulesJson, true);
  if (!("rules" in parsed)) throw new Error(parsed.error);
  const policy: BoundPolicy = { descriptor: DEFAULT_POLICY.descriptor, rules: parsed.rules };
  return { initiator, participants: new Set(parts), policy };
};
const env = (mode: string, type: string, sender: string, payload: Record<string, unknown>, ts = 1000) => ({
  ...buildEnvelope({ mode, messageType: type, sessionId: "s".repeat(22), payload, timestampMs: ts }),
  sender,
});
const codeOf = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    if (e instanceof MacpRejection) return e.code;
    throw e;
  }
  return "OK";
};
const commitment = create(CommitmentPayloadSchema, {});

describe("handoff mode", () => {
  const c = ctx("o", ["o", "t", "u"]);
  const offer = (s: HandoffState, id: string, target: string, ts = 1000) =>
    handoffMode.apply(s, env(HANDOFF_MODE, "HandoffOffer", "o", { handoffId: id, targetParticipant: target }, ts), c);

  it("walks offer → decline → re-offer → accept without mutating earlier states", () => {
    const s0 = handoffMode.initialState();
    const s1 = offer(s0, "h1", "t");
    const s2 = handoffMode.apply(s1, env(HANDOFF_MODE, "HandoffDecline", "t", { handoffId: "h1", reason: "busy" }), c);
    const s3 = offer(s2, "h2", "u");
    const s4 = handoffMode.apply(s3, env(HANDOFF_MODE, "HandoffAccept", "u", { handoffId: "h2" }), c);
    expect(s0.offers.size).toBe(0);
    expect(s1.offers.get("h1")?.disposition).toBe("Offered");
    expect(s2.offers.get("h1")?.disposition).toBe("Declined");
    expect(s4.offers.get("h2")).toMatchObject({ disposition: "Accepted", acceptedBy: "u" });
    expect([...s4.offers.keys()]).toEqual(["h1", "h2"]);
    expect(codeOf(() => offer(s4, "h3", "t"))).toBe("INVALID_ENVELOPE"); // nothing after an accept
  });

  it("rejects offers to non-participants, re-used ids, and answers by others", () => {
    const s = offer(handoffMode.initialState(), "h1", "t");
    expect(codeOf(() => offer(handoffMode.initialState(), "h1", "stranger"))).toBe("INVALID_ENVELOPE");
    expect(codeOf(() => offer(handoffMode.initialState(), "", "t"))).toBe("INVALID_ENVELOPE");
    expect(codeOf(() => handoffMode.apply(s, env(HANDOFF_MODE, "HandoffAccept", "u", { handoffId: "h1" }), c))).toBe("FORBIDDEN");
    expect(codeOf(() => handoffMode.apply(s, env(HANDOFF_MODE, "HandoffAccept", "t", { handoffId: "zz" }), c))).toBe("INVALID_ENVELOPE");
    expect(codeOf(() => handoffMode.apply(s, env(HANDOFF_MODE, "HandoffOffer", "o", { handoffId: "h1", targetParticipant: "u" }), c))).toBe(
      "INVALID_ENVELOPE",
    );
  });

  it("implicit accept counts from the offer's timestamp at commitment time", () => {
    const ci = ctx("o", ["o", "t"], JSON.stringify({ acceptance: { implicit_accept_timeout_ms: 500 } }));
    const s = handoffMode.apply(
      handoffMode.initialState(),
      env(HANDOFF_MODE, "HandoffOffer", "o", { handoffId: "h1", targetParticipant: "t" }, 1000),
      ci,
    );
    const commitAt = (ts: number) => handoffMode.commit(s, env(HANDOFF_MODE, "Commitment", "o", {}, ts), commitment, ci);
    expect(codeOf(() => commitAt(1499))).toBe("INVALID_ENVELOPE");
    expect(commitAt(1500).offers.get("h1")).toMatchObject({ disposition: "Accepted", acceptedBy: "t" });
    expect(s.offers.get("h1")?.disposition).toBe("Offered");
  });
});

describe("task mode", () => {
  const c = ctx("p", ["p", "w1", "w2"], "{}", TASK_MODE);
  const req = (assignee = "") =>
    taskMode.apply(taskMode.initialState(), env(TASK_MODE, "TaskRequest", "p", { taskId: "t1", requestedAssignee: assignee }), c);
  const step = (s: TaskState, type: string, sender: string, extra: Record<string, unknown> = {}, cc = c) =>
    taskMode.apply(s, env(TASK_MODE, type, sender, { taskId: "t1", ...extra }), cc);

  it("open tasks go to the first non-initiator who accepts", () => {
    const s = step(req(), "TaskAccept", "w2");
    expect(s.activeAssignee).toBe("w2");
    expect(codeOf(() => step(s, "TaskAccept", "w1"))).toBe("INVALID_ENVELOPE");
    expect(codeOf(() => step(s, "TaskUpdate", "w1", { progress: 0.5 }))).toBe("FORBIDDEN");
    expect(codeOf(() => step(req(), "TaskAccept", "p"))).toBe("FORBIDDEN");
  });

  it("reassignment after a reject needs the policy", () => {
    const rejected = step(req(), "TaskReject", "w1", { reason: "no" });
    expect(codeOf(() => step(rejected, "TaskAccept", "w2"))).toBe("POLICY_DENIED");
    expect(codeOf(() => step(rejected, "TaskReject", "w1"))).toBe("INVALID_ENVELOPE");
    const open = ctx("p", ["p", "w1", "w2"], JSON.stringify({ assignment: { allow_reassignment_on_reject: true } }), TASK_MODE);
    const r2 = step(req(), "TaskReject", "w1", {}, open);
    const a2 = step(r2, "TaskAccept", "w2", {}, open);
    const back = step(a2, "TaskReject", "w2", {}, open);
    expect(back.activeAssignee).toBe("");
    expect(back.rejectedBy).toEqual(["w1", "w2"]);
  });

  it("commitment needs a terminal report, and output when the policy says so", () => {
    const accepted = step(req("w1"), "TaskAccept", "w1");
    const commit = (s: TaskState, cc = c) => taskMode.commit(s, env(TASK_MODE, "Commitment", "p", {}), commitment, cc);
    expect(codeOf(() => commit(accepted))).toBe("INVALID_ENVELOPE");
    const failed = step(accepted, "TaskFail", "w1", { errorCode: "E", retryable: true });
    expect(codeOf(() => commit(failed))).toBe("OK");
    const strict = ctx("p", ["p", "w1", "w2"], JSON.stringify({ completion: { require_output: true } }), TASK_MODE);
    expect(codeOf(() => commit(failed, strict))).toBe("POLICY_DENIED");
    const done = step(accepted, "TaskComplete", "w1", { output: new TextEncoder().encode("{}") });
    expect(codeOf(() => commit(done, strict))).toBe("OK");
    expect(codeOf(() => step(done, "TaskFail", "w1"))).toBe("FORBIDDEN");
  });
});
