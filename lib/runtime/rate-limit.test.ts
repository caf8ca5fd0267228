import { describe, expect, it } from "vitest";
import { SlidingWindowLimiter } from "./rate-limit";

describe("SlidingWindowLimiter", () => {
  it("allows `limit` hits per window per key", () => {
    const l = new SlidingWindowLimiter(2, 1000);
    expect(l.tryAcquire("a", 0)).toBe(true);
    expect(l.tryAcquire("a", 10)).toBe(true);
    expect(l.tryAcquire("a", 20)).toBe(false);
    expect(l.tryAcquire("b", 20)).toBe(true);
    expect(l.tryAcquire("a", 1001)).toBe(true);
  });
  it("is disabled by a limit of 0", () => {
    const l = new SlidingWindowLimiter(0);
    for (let i = 0; i < 1000; i++) expect(l.tryAcquire("a", i)).toBe(true);
  });
});
