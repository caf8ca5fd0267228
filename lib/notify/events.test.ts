import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { deriveEvents, snapshotOf, type Snapshot } from "./events";

function row(
  mode: string,
  phase: string,
  over: { state?: SessionState; owner?: string; target?: string; outcome?: string } = {},
): SessionSummary {
  return create(SessionSummarySchema, {
    metadata: {
      sessionId: "s-1",
      mode,
      state: over.state ?? SessionState.OPEN,
      initiator: "human:alice",
      participants: ["human:alice", "human:bob", "human:dave"],
      policyVersion: "policy.default",
    },
    phase,
    intent: "payments on-call",
    scope: "payments-api primary",
    currentOwner: over.owner ?? "human:alice",
    currentTarget: over.target ?? "",
    outcome: over.outcome ?? "",
    lastActivityUnixMs: 1_700_000_000_000n,
  });
}

const kinds = (before: Snapshot | undefined, after: SessionSummary, next: string[] = [], approvers: string[] = []) =>
  deriveEvents(before, after, next, approvers).map((e) => `${e.kind} ${e.from} -> ${e.to.join(",")}`);

describe("deriveEvents: handoff", () => {
  const pending = row(HANDOFF_MODE, "Pending");
  const offeredBob = row(HANDOFF_MODE, "OfferPending", { target: "human:bob" });
  const declined = row(HANDOFF_MODE, "Declined", { target: "human:bob" });
  const offeredDave = row(HANDOFF_MODE, "ContextSharing", { target: "human:dave" });
  const accepted = row(HANDOFF_MODE, "Accepted", { target: "human:dave" });
  const committed = row(HANDOFF_MODE, "Committed", {
    state: SessionState.RESOLVED,
    owner: "human:dave",
    target: "human:dave",
    outcome: "positive",
  });

  it("walks offer → decline → re-offer → accept → commit", () => {
    expect(kinds(undefined, pending)).toEqual([]);
    expect(kinds(snapshotOf(pending), offeredBob, ["human:bob"])).toEqual(["offer.waiting human:alice -> human:bob"]);
    expect(kinds(snapshotOf(offeredBob), declined, ["human:alice"])).toEqual(["offer.declined human:bob -> human:alice"]);
    expect(kinds(snapshotOf(declined), offeredDave, ["human:dave"])).toEqual(["offer.waiting human:alice -> human:dave"]);
    expect(kinds(snapshotOf(offeredDave), accepted, ["human:alice"])).toEqual(["offer.accepted human:dave -> human:alice"]);
    const done = deriveEvents(snapshotOf(accepted), committed, []);
    expect(done.map((e) => e.kind)).toEqual(["session.committed"]);
    expect(done[0]?.outcome).toBe("positive");
    expect(done[0]?.waitingOn).toEqual([]);
    expect(done[0]?.to).toEqual(["human:alice", "human:bob", "human:dave"]);
  });

  it("derives nothing again from an unchanged row (idempotent), and nothing after a close", () => {
    expect(kinds(snapshotOf(offeredBob), offeredBob)).toEqual([]);
    expect(kinds(snapshotOf(offeredDave), row(HANDOFF_MODE, "OfferPending", { target: "human:dave" }))).toEqual([]);
    expect(kinds(snapshotOf(committed), committed)).toEqual([]);
    expect(kinds(snapshotOf(committed), row(HANDOFF_MODE, "Committed", { state: SessionState.CANCELLED }))).toEqual([]);
  });

  it("tells the approvers when an accepted handoff needs their commit", () => {
    const events = deriveEvents(snapshotOf(offeredDave), accepted, ["human:alice"], ["human:carol"]);
    expect(events.map((e) => `${e.kind} ${e.to.join(",")} waiting ${e.waitingOn.join(",")}`)).toEqual([
      "offer.accepted human:alice waiting human:alice",
      "approval.needed human:carol waiting human:carol",
    ]);
    expect(events[1]?.involved).toContain("human:carol");
  });

  it("tells the approvers as soon as an offer waits, not only once it is answered (never the owner or the target)", () => {
    const events = deriveEvents(snapshotOf(declined), offeredDave, ["human:dave"], ["human:carol", "human:dave", "human:alice"]);
    expect(events.map((e) => `${e.kind} ${e.from} -> ${e.to.join(",")} waiting ${e.waitingOn.join(",")}`)).toEqual([
      "offer.waiting human:alice -> human:dave waiting human:dave",
      "approval.upcoming human:alice -> human:carol waiting human:dave",
    ]);
    // Without approvers nothing more is said; an unchanged row says nothing again.
    expect(kinds(snapshotOf(declined), offeredDave, ["human:dave"])).toEqual(["offer.waiting human:alice -> human:dave"]);
    expect(deriveEvents(snapshotOf(offeredDave), offeredDave, ["human:dave"], ["human:carol"])).toEqual([]);
  });

  it("a session first seen mid-way tells what is pending now", () => {
    expect(kinds(undefined, offeredBob)).toEqual(["offer.waiting human:alice -> human:bob"]);
  });

  it("expiry and cancellation tell everyone involved", () => {
    expect(kinds(snapshotOf(offeredBob), row(HANDOFF_MODE, "OfferPending", { state: SessionState.EXPIRED, target: "human:bob" }))).toEqual([
      "session.expired human:alice -> human:alice,human:bob,human:dave",
    ]);
    expect(kinds(snapshotOf(pending), row(HANDOFF_MODE, "Pending", { state: SessionState.CANCELLED }))).toEqual([
      "session.cancelled human:alice -> human:alice,human:bob,human:dave",
    ]);
  });
});

describe("deriveEvents: task", () => {
  const requested = row(TASK_MODE, "Requested", { target: "agent://ops/runner" });
  it("assigned when requested or reassigned, not when accepted", () => {
    expect(kinds(snapshotOf(row(TASK_MODE, "Pending")), requested)).toEqual(["task.assigned human:alice -> agent://ops/runner"]);
    expect(kinds(snapshotOf(requested), row(TASK_MODE, "InProgress", { target: "agent://ops/runner" }))).toEqual([]);
    expect(kinds(snapshotOf(requested), row(TASK_MODE, "Requested", { target: "human:bob" }))).toEqual([
      "task.assigned human:alice -> human:bob",
    ]);
  });
  it("reported completed or failed to the requester", () => {
    const inProgress = row(TASK_MODE, "InProgress", { target: "human:bob" });
    const done = deriveEvents(snapshotOf(inProgress), row(TASK_MODE, "Completed", { target: "human:bob" }), ["human:alice"]);
    expect(done.map((e) => [e.kind, e.detail, e.from, e.to])).toEqual([["task.reported", "completed", "human:bob", ["human:alice"]]]);
    const failed = deriveEvents(snapshotOf(inProgress), row(TASK_MODE, "Failed", { target: "human:bob" }), ["human:alice"]);
    expect(failed.map((e) => e.detail)).toEqual(["failed"]);
  });
});
