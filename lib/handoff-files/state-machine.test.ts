// The v0.1 state machine: exactly the five allowed steps, how two observed
// snapshots relate (legal, gap, illegal), and who may take which action.
import { describe, expect, it } from "vitest";
import { type HandoffError } from "./errors";
import { HANDOFF_STATUSES, type HandoffRecord, type HandoffStatus } from "./record";
import { applyAction, canTransition, classifyStep, newOffer, refusalFor } from "./state-machine";

const NOW = Date.UTC(2026, 10, 20, 12);
const offer = (over: Partial<HandoffRecord> = {}): HandoffRecord => ({
  ...newOffer({ description: "Rotate certs", from: "agent://planner", taskId: "t-1" }, NOW - 60_000),
  ...over,
});

describe("transitions", () => {
  it("allows exactly offered→accepted, offered→rejected, accepted→completed, accepted→failed, failed→offered", () => {
    const allowed = HANDOFF_STATUSES.flatMap((from) =>
      HANDOFF_STATUSES.filter((to) => canTransition(from, to)).map((to) => `${from}→${to}`),
    );
    expect(allowed.sort()).toEqual(["accepted→completed", "accepted→failed", "failed→offered", "offered→accepted", "offered→rejected"]);
  });

  it("classifies observed steps: unobserved states in between are a gap, leaving a final state is illegal", () => {
    const c = (a: HandoffStatus, b: HandoffStatus) => classifyStep(a, b);
    expect(c("offered", "offered")).toBe("same");
    expect(c("offered", "accepted")).toBe("legal");
    expect(c("offered", "completed")).toBe("gap");
    expect(c("accepted", "offered")).toBe("gap"); // through failed
    expect(c("completed", "offered")).toBe("illegal");
    expect(c("rejected", "accepted")).toBe("illegal");
    expect(c("completed", "failed")).toBe("illegal");
  });
});

describe("actions", () => {
  it("accept sets to_agent and updated_at; complete keeps to_agent; fail then re-offer to anyone", () => {
    const accepted = applyAction(offer(), { kind: "accept", agent: "agent://worker" }, NOW);
    expect(accepted).toMatchObject({ status: "accepted", to_agent: "agent://worker", updated_at: new Date(NOW).toISOString() });
    expect(applyAction(accepted, { kind: "complete", context: { result: "done" } }, NOW + 1)).toMatchObject({
      status: "completed",
      to_agent: "agent://worker",
      context: { result: "done" },
    });
    const failed = applyAction(accepted, { kind: "fail" }, NOW + 1);
    expect(applyAction(failed, { kind: "reoffer" }, NOW + 2)).toMatchObject({ status: "offered", to_agent: "" });
  });

  it("refuses illegal steps with a plain sentence and the kind illegal-transition", () => {
    const accepted = applyAction(offer(), { kind: "accept", agent: "bob" }, NOW);
    const err = (() => {
      try {
        applyAction(accepted, { kind: "accept", agent: "carol" }, NOW);
      } catch (e) {
        return e as HandoffError;
      }
      throw new Error("expected a refusal");
    })();
    expect(err.kind).toBe("illegal-transition");
    expect(err.message).toBe("cannot accept t-1: it is already accepted by bob (from accepted it can only go to completed or failed)");
    expect(() => applyAction(offer({ status: "completed" }), { kind: "reoffer" }, NOW)).toThrow(/completed is final/);
  });

  it("gives the roles of Task mode: only to_agent (or anyone when empty) accepts; only from_agent re-offers", () => {
    expect(refusalFor(offer({ to_agent: "bob" }), { kind: "accept", agent: "carol" })).toBe("it is offered to bob, not carol");
    expect(refusalFor(offer({ to_agent: "bob" }), { kind: "accept", agent: "bob" })).toBeUndefined();
    expect(refusalFor(offer(), { kind: "reject", agent: "anyone" })).toBeUndefined();
    expect(refusalFor(offer({ status: "accepted", to_agent: "bob" }), { kind: "complete", agent: "carol" })).toBe(
      "it was accepted by bob, not carol",
    );
    expect(refusalFor(offer({ status: "failed", to_agent: "bob" }), { kind: "reoffer", agent: "bob" })).toBe(
      "only agent://planner, who offered it, can re-offer it",
    );
    expect(() => applyAction(offer({ to_agent: "bob" }), { kind: "accept", agent: "carol" }, NOW)).toThrow(
      expect.objectContaining({ kind: "not-allowed" }),
    );
  });

  it("new offers need an offering agent", () => {
    expect(() => newOffer({ description: "x", from: " " }, NOW)).toThrow(expect.objectContaining({ kind: "bad-input" }));
    const r = newOffer({ description: "x", from: "a", to: "b", context: { k: "v" } }, NOW);
    expect(r).toMatchObject({ status: "offered", from_agent: "a", to_agent: "b", context: { k: "v" }, created_at: r.updated_at });
    expect(r.task_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
