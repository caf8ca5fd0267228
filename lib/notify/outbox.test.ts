import { describe, expect, it } from "vitest";
import { backoffMs, NotifyStore } from "./outbox";

describe("backoffMs", () => {
  it("doubles from 1 s up to 10 min, jittered within [d/2, d]", () => {
    const top = (n: number) => backoffMs(n, () => 1);
    const bottom = (n: number) => backoffMs(n, () => 0);
    expect([1, 2, 3, 4, 5].map(top)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000]);
    expect([1, 2, 3].map(bottom)).toEqual([500, 1_000, 2_000]);
    expect(top(10)).toBe(512_000);
    expect(top(11)).toBe(600_000);
    expect(top(1_000)).toBe(600_000);
    expect(bottom(1_000)).toBe(300_000);
    for (let i = 0; i < 100; i++) {
      const d = backoffMs(3);
      expect(d).toBeGreaterThanOrEqual(2_000);
      expect(d).toBeLessThanOrEqual(4_000);
    }
  });
});

describe("NotifyStore", () => {
  it("commits states, deliveries and the cursor together, and prunes what is done", () => {
    const s = new NotifyStore(":memory:");
    expect(s.cursor).toBeNull();
    s.rebase("cat-1", 0);
    const snap = { state: 1, phase: "OfferPending", owner: "a", target: "b", outcome: "" };
    const deliveries = Array.from({ length: 5 }, (_, i) => ({
      deliveryId: `d${i}`,
      hookId: "h",
      event: "offer.waiting",
      sessionId: "s",
      body: "{}",
    }));
    s.commit([{ sessionId: "s", snapshot: snap, closed: false }], deliveries, 7, 1_000);
    expect(s.cursor).toBe(7);
    expect(s.catalogId).toBe("cat-1");
    expect(s.state("s")).toEqual({ snapshot: snap, closed: false });
    const first = s.due("h", 1_000);
    expect(first?.deliveryId).toBe("d0");
    s.recordAttempt(first!.n, "pending", 500, "HTTP 500", 5_000, 1_000);
    expect(s.due("h", 1_000)?.deliveryId).toBe("d1"); // a retrying row does not hold the others back
    expect(s.nextDueMs()).toBe(1_000);
    for (const id of ["d1", "d2", "d3", "d4"]) {
      const r = s.due("h", 1_000);
      expect(r?.deliveryId).toBe(id);
      s.recordAttempt(r!.n, "delivered", 200, "", 0);
    }
    expect(s.due("h", 1_000)).toBeUndefined();
    expect(s.nextDueMs()).toBe(5_000);
    const retried = s.due("h", 5_000);
    expect(retried).toMatchObject({ deliveryId: "d0", attempts: 1, lastStatus: 500, lastError: "HTTP 500" });
    s.prune(["h"], 2, 2, 100, 1_000, 10_000);
    expect(s.recent("h", 10).map((r) => r.deliveryId)).toEqual(["d4", "d3", "d0"]);
    // A closed session's state goes after the TTL; an unknown hook's rows go at once.
    s.commit(
      [{ sessionId: "s", snapshot: { ...snap, state: 2 }, closed: true }],
      [{ deliveryId: "x", hookId: "gone", event: "e", sessionId: "s", body: "{}" }],
      8,
      1_000,
    );
    s.prune(["h"], 2, 2, 100, 5_000, 3_000);
    expect(s.state("s")?.closed).toBe(true);
    s.prune(["h"], 2, 2, 100, 5_000, 7_000);
    expect(s.state("s")).toBeUndefined();
    expect(s.recent("gone", 10)).toEqual([]);
    // At most maxPending wait per hook: the oldest go.
    s.commit(
      [],
      Array.from({ length: 4 }, (_, i) => ({ deliveryId: `p${i}`, hookId: "h", event: "e", sessionId: "s", body: "{}" })),
      9,
      1_000,
    );
    expect(s.prune(["h"], 2, 2, 2, 5_000, 7_000)).toBe(3);
    expect(s.count("h", "pending")).toBe(2);
    expect(s.due("h", 10_000)?.deliveryId).toBe("p2");
    s.close();
  });
});
