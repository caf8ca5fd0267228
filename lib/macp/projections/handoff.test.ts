import { describe, expect, it } from "vitest";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { makeEvent } from "@/lib/macp/test-utils";
import type { SessionEvent } from "@/lib/macp/projections/types";
import {
  activeOffer,
  currentTarget,
  dispositionOf,
  getHandoff,
  handoffFromEvents,
  hasAcceptedOffer,
  initialHandoffState,
  isAccepted,
  isCommitted,
  isDeclined,
  isPositiveOutcome,
  offerDispositions,
  pendingHandoffs,
  reduceHandoff,
  type HandoffState,
} from "@/lib/macp/projections/handoff";

const OWNER = "agent://owner";
const BOB = "agent://bob";
const CAROL = "agent://carol";

const offer = (id: string, target: string, ts?: number, scope = "support") =>
  makeEvent(HANDOFF_MODE, "HandoffOffer", { handoffId: id, targetParticipant: target, scope, reason: "why" }, { sender: OWNER, ts });
const context = (id: string, text = "ctx", ts?: number) =>
  makeEvent(
    HANDOFF_MODE,
    "HandoffContext",
    { handoffId: id, contentType: "text/plain", context: new TextEncoder().encode(text) },
    { sender: OWNER, ts },
  );
const accept = (id: string, by: string, ts?: number) =>
  makeEvent(HANDOFF_MODE, "HandoffAccept", { handoffId: id, acceptedBy: by, reason: "ok" }, { sender: by, ts });
const decline = (id: string, by: string) =>
  makeEvent(HANDOFF_MODE, "HandoffDecline", { handoffId: id, declinedBy: "", reason: "busy" }, { sender: by });
const commit = (action: string, outcomePositive: boolean) =>
  makeEvent(
    HANDOFF_MODE,
    "Commitment",
    { commitmentId: "c1", action, authorityScope: "s", reason: "r", outcomePositive, modeVersion: "1.0.0" },
    { sender: OWNER, ts: 99 },
  );

function fold(...events: SessionEvent[]): HandoffState {
  return handoffFromEvents(events);
}

describe("handoff phases (§4.7)", () => {
  it("starts Pending with no offers", () => {
    expect(initialHandoffState.phase).toBe("Pending");
    expect(initialHandoffState.offers).toEqual([]);
    expect(currentTarget(initialHandoffState)).toBeUndefined();
    expect(activeOffer(initialHandoffState)).toBeUndefined();
  });

  it("Offer → OfferPending, with the offer record", () => {
    const s = fold(offer("h1", BOB, 1000));
    expect(s.phase).toBe("OfferPending");
    expect(getHandoff(s, "h1")).toMatchObject({
      handoffId: "h1",
      target: BOB,
      scope: "support",
      reason: "why",
      offeredBy: OWNER,
      offeredAt: 1000,
      status: "offered",
      contexts: [],
    });
    expect(pendingHandoffs(s).map((o) => o.handoffId)).toEqual(["h1"]);
    expect(activeOffer(s)?.handoffId).toBe("h1");
    expect(currentTarget(s)).toBe(BOB);
  });

  it("Context → ContextSharing only from OfferPending; status context_sent", () => {
    const s = fold(offer("h1", BOB), context("h1", "a", 2000), context("h1", "b"));
    expect(s.phase).toBe("ContextSharing");
    const rec = getHandoff(s, "h1");
    expect(rec?.status).toBe("context_sent");
    expect(rec?.contexts).toHaveLength(2);
    expect(new TextDecoder().decode(rec?.contexts[0]?.context)).toBe("a");
    expect(rec?.contexts[0]).toMatchObject({ contentType: "text/plain", sender: OWNER, timestampMs: 2000, late: false });
    expect(pendingHandoffs(s)).toHaveLength(1);
  });

  it("Accept → Accepted (from OfferPending or ContextSharing)", () => {
    for (const s of [fold(offer("h1", BOB), accept("h1", BOB, 3000)), fold(offer("h1", BOB), context("h1"), accept("h1", BOB, 3000))]) {
      expect(s.phase).toBe("Accepted");
      expect(getHandoff(s, "h1")).toMatchObject({ status: "accepted", acceptedBy: BOB, responseReason: "ok", respondedAt: 3000 });
      expect(isAccepted(s, "h1")).toBe(true);
      expect(isDeclined(s, "h1")).toBe(false);
      expect(hasAcceptedOffer(s)).toBe(true);
      expect(pendingHandoffs(s)).toEqual([]);
      expect(activeOffer(s)).toBeUndefined();
      expect(currentTarget(s)).toBe(BOB);
    }
  });

  it("Decline → Declined; declined_by falls back to the sender", () => {
    const s = fold(offer("h1", BOB), decline("h1", BOB));
    expect(s.phase).toBe("Declined");
    expect(getHandoff(s, "h1")).toMatchObject({ status: "declined", declinedBy: BOB, responseReason: "busy" });
    expect(isDeclined(s, "h1")).toBe(true);
    expect(hasAcceptedOffer(s)).toBe(false);
  });

  it("Context after a decline leaves the phase Declined", () => {
    const s = fold(offer("h1", BOB), decline("h1", BOB), context("h1"));
    expect(s.phase).toBe("Declined");
  });

  it("Commitment → Committed, keeping every commitment field", () => {
    const s = fold(offer("h1", BOB), accept("h1", BOB), commit("handoff.accepted", true));
    expect(s.phase).toBe("Committed");
    expect(isCommitted(s)).toBe(true);
    expect(isPositiveOutcome(s)).toBe(true);
    expect(s.commitment).toMatchObject({
      commitmentId: "c1",
      action: "handoff.accepted",
      authorityScope: "s",
      reason: "r",
      outcomePositive: true,
      modeVersion: "1.0.0",
      policyVersion: "",
      configurationVersion: "",
      sender: OWNER,
      timestampMs: 99,
    });
  });

  it("outcome_positive: false survives (SDK pitfall)", () => {
    const s = fold(offer("h1", BOB), decline("h1", BOB), commit("handoff.declined", false));
    expect(s.commitment?.outcomePositive).toBe(false);
    expect(isPositiveOutcome(s)).toBe(false);
    expect(isPositiveOutcome(fold(offer("h1", BOB)))).toBeUndefined();
  });

  it("stays Committed once committed", () => {
    const s = fold(offer("h1", BOB), decline("h1", BOB), commit("handoff.declined", false), offer("h2", CAROL));
    expect(s.phase).toBe("Committed");
  });
});

describe("serial offers", () => {
  it("decline then re-offer: new record in offer order, OfferPending again", () => {
    const s = fold(offer("h1", BOB, 1, "first"), decline("h1", BOB), offer("h2", CAROL, 2, "second"));
    expect(s.phase).toBe("OfferPending");
    expect(s.offers.map((o) => [o.handoffId, o.status])).toEqual([
      ["h1", "declined"],
      ["h2", "offered"],
    ]);
    expect(activeOffer(s)?.handoffId).toBe("h2");
    expect(currentTarget(s)).toBe(CAROL);
    expect(offerDispositions(s)).toEqual({ h1: { disposition: "Declined" }, h2: { disposition: "Offered" } });

    const t = reduceHandoff(reduceHandoff(s, context("h2")), accept("h2", CAROL));
    expect(t.phase).toBe("Accepted");
    expect(isDeclined(t, "h1")).toBe(true);
    expect(isAccepted(t, "h2")).toBe(true);
    expect(currentTarget(t)).toBe(CAROL);
  });

  it("keeps offer order even for numeric-looking handoff ids", () => {
    const s = fold(offer("10", BOB), decline("10", BOB), offer("2", CAROL));
    expect(s.offers.map((o) => o.handoffId)).toEqual(["10", "2"]);
    expect(Object.keys(offerDispositions(s))).toEqual(expect.arrayContaining(["10", "2"]));
  });

  it("re-offer to the same target after a decline is tracked (reference is lenient)", () => {
    const s = fold(offer("h1", BOB), decline("h1", BOB), offer("h2", BOB));
    expect(s.offers).toHaveLength(2);
    expect(currentTarget(s)).toBe(BOB);
  });
});

describe("late context", () => {
  it("marks context after accept or decline as late, without changing status or phase", () => {
    const s = fold(offer("h1", BOB), context("h1", "early"), accept("h1", BOB), context("h1", "late"));
    const rec = getHandoff(s, "h1");
    expect(rec?.status).toBe("accepted");
    expect(rec?.contexts.map((c) => c.late)).toEqual([false, true]);
    expect(s.phase).toBe("Accepted");

    const d = fold(offer("h1", BOB), decline("h1", BOB), context("h1"));
    expect(getHandoff(d, "h1")?.contexts[0]?.late).toBe(true);
    expect(getHandoff(d, "h1")?.status).toBe("declined");
  });
});

describe("tolerance and immutability", () => {
  it("ignores unknown types, foreign modes, undecodable payloads and unknown handoff ids", () => {
    const s = fold(offer("h1", BOB));
    const unknown = makeEvent(HANDOFF_MODE, "HandoffPing", new Uint8Array([1, 2]));
    const foreign = makeEvent(TASK_MODE, "TaskRequest", { taskId: "t" });
    const garbage = makeEvent(HANDOFF_MODE, "HandoffAccept", new Uint8Array([0xff, 0xff, 0xff]));
    const stranger = accept("nope", BOB);
    for (const e of [unknown, foreign, garbage, stranger, context("nope")]) {
      expect(reduceHandoff(s, e)).toBe(s);
    }
  });

  it("ignores a second response and a duplicate offer id", () => {
    const s = fold(offer("h1", BOB), accept("h1", BOB));
    expect(reduceHandoff(s, decline("h1", BOB))).toBe(s);
    expect(reduceHandoff(s, offer("h1", CAROL))).toBe(s);
  });

  it("never mutates the input state", () => {
    const s0 = fold(offer("h1", BOB));
    const snapshot = structuredClone(s0);
    const s1 = reduceHandoff(s0, context("h1"));
    const s2 = reduceHandoff(s1, accept("h1", BOB));
    reduceHandoff(s2, commit("handoff.accepted", true));
    expect(s0).toEqual(snapshot);
    expect(s1).not.toBe(s0);
    expect(s1.offers[0]).not.toBe(s0.offers[0]);
    expect(s0.phase).toBe("OfferPending");
    expect(initialHandoffState.offers).toEqual([]);
  });

  it("maps statuses to runtime dispositions", () => {
    expect(dispositionOf("offered")).toBe("Offered");
    expect(dispositionOf("context_sent")).toBe("Offered");
    expect(dispositionOf("accepted")).toBe("Accepted");
    expect(dispositionOf("declined")).toBe("Declined");
  });
});
