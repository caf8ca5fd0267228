import { describe, expect, it } from "vitest";
import { emptySessionView, type SessionView } from "@/lib/macp/projections/session";
import type { HandoffRecord } from "@/lib/macp/projections/handoff";
import { EscalationStore, policyRequestOf, stepIds, stopReason, type EscalationRecord } from "./escalations";

function rec(origin: string, over: Partial<EscalationRecord> = {}): EscalationRecord {
  return {
    origin,
    sessionId: origin,
    handoffId: "h1",
    target: "human:bob",
    owner: "human:alice",
    ownerUser: "alice",
    state: "pending",
    steps: [{ kind: "notify", afterMinutes: 1, participants: ["human:carol"] }],
    nextStep: 0,
    nextAtMs: 1_000,
    inflight: false,
    done: [],
    detail: "",
    sessionIds: [origin],
    createdMs: 0,
    updatedMs: 0,
    ...over,
  };
}

function offer(status: HandoffRecord["status"], over: Partial<HandoffRecord> = {}): HandoffRecord {
  return {
    handoffId: "h1",
    target: "human:bob",
    scope: "s",
    reason: "",
    offeredBy: "human:alice",
    offeredAt: 1,
    offerMessageId: "m",
    status,
    contexts: [],
    ...over,
  };
}

function view(offers: HandoffRecord[], over: Partial<SessionView> = {}): SessionView {
  return {
    ...emptySessionView("s1"),
    started: true,
    initiator: "human:alice",
    handoff: { phase: "OfferPending", offers },
    ...over,
  } as SessionView;
}

const names = (id: string) => ({ "human:bob": "Bob Ito" })[id] ?? id;

describe("escalation ids", () => {
  it("are the same for a chain's step every time, distinct per step and per part, UUID v4 shaped", () => {
    const a = stepIds("s1", 1);
    const b = stepIds("s1", 1);
    expect(a.start).toBe(b.start);
    expect(a.context(0)).toBe(b.context(0));
    const all = [a.start, a.offer, a.cancel, a.context(0), a.context(1), a.delivery, stepIds("s1", 2).start, stepIds("s2", 1).start];
    expect(new Set(all).size).toBe(all.length);
    for (const id of all) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe("when a chain stops", () => {
  it("waits while its own offer is pending in an open session", () => {
    expect(stopReason(view([offer("offered")]), "Open", "h1", names)).toBeUndefined();
    expect(stopReason(view([offer("context_sent")]), "Open", "h1", names)).toBeUndefined();
  });
  it("stops on an answer, naming who answered", () => {
    expect(stopReason(view([offer("accepted", { acceptedBy: "human:bob" })]), "Open", "h1", names)).toBe("Bob Ito accepted the offer.");
    expect(stopReason(view([offer("declined")]), "Open", "h1", names)).toBe("Bob Ito declined the offer.");
  });
  it("stops when the session closed or moved on", () => {
    expect(stopReason(view([offer("offered")]), "Cancelled", "h1", names)).toBe("The session was cancelled.");
    expect(stopReason(view([offer("offered")]), "Expired", "h1", names)).toBe("The session expired.");
    expect(stopReason(view([offer("offered")]), "Resolved", "h1", names)).toBe("The session was committed.");
    expect(stopReason(view([offer("declined"), offer("offered", { handoffId: "h2" })]), "Open", "h2", names)).toBeUndefined();
    expect(stopReason(view([offer("offered")]), "Open", "h9", names)).toBe("The offer it watched is not in the session.");
    expect(stopReason(view([offer("offered")]), "Suspended", "h1", names)).toBe("The session is suspended.");
  });
});

describe("the re-offer's policy", () => {
  it("re-creates lead approval, implicit accept and the default", () => {
    expect(policyRequestOf(undefined)).toEqual({ kind: "default" });
    expect(policyRequestOf({ commitment: { authority: "designated_role", designatedRoles: ["human:carol"] } })).toEqual({
      kind: "approval",
      approvers: ["human:carol"],
    });
    expect(policyRequestOf({ acceptance: { implicitAcceptTimeoutMs: 5_000 } })).toEqual({ kind: "implicit", timeoutMs: 5_000 });
    expect(policyRequestOf({ commitment: { authority: "initiator_only" } })).toEqual({ kind: "default" });
  });
});

describe("EscalationStore", () => {
  it("finds a chain by any of its sessions, and what is due in order", () => {
    const s = new EscalationStore(":memory:");
    s.put(rec("a", { nextAtMs: 3_000 }));
    s.put(rec("b", { nextAtMs: 1_000, sessionIds: ["b", "b2"], sessionId: "b2" }));
    s.put(rec("c", { state: "done", nextAtMs: 0 }));
    expect(s.bySession("b2")?.origin).toBe("b");
    expect(s.bySession("zzz")).toBeUndefined();
    expect(s.due(2_000, 10).map((r) => r.origin)).toEqual(["b"]);
    expect(s.due(5_000, 10).map((r) => r.origin)).toEqual(["b", "a"]);
    expect(s.due(5_000, 1).map((r) => r.origin)).toEqual(["b"]);
    expect(s.nextDueMs()).toBe(1_000);
    expect(s.pending(10).map((r) => r.origin)).toEqual(["b", "a"]);
    s.close();
  });

  it("update changes a chain in a transaction, or leaves it when the change declines", () => {
    const s = new EscalationStore(":memory:");
    s.put(rec("a"));
    expect(s.update("a", (r) => (r.state === "pending" ? { ...r, state: "cancelled" } : undefined))?.state).toBe("cancelled");
    expect(s.update("a", (r) => (r.state === "pending" ? { ...r, state: "done" } : undefined))).toBeUndefined();
    expect(s.get("a")?.state).toBe("cancelled");
    expect(s.due(10_000, 10)).toEqual([]);
    expect(s.update("nope", (r) => r)).toBeUndefined();
    s.close();
  });

  it("keeps a bounded number of finished chains, never a pending one", () => {
    const s = new EscalationStore(":memory:");
    for (let i = 0; i < 5; i++) s.put(rec(`done${i}`, { state: "done", updatedMs: i }));
    s.put(rec("live"));
    expect(s.prune(2)).toBe(3);
    expect(s.get("done0")).toBeUndefined();
    expect(s.bySession("done1")).toBeUndefined();
    expect(s.get("done4")?.state).toBe("done");
    expect(s.get("live")?.state).toBe("pending");
    s.close();
  });
});
