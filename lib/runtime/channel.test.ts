import { describe, expect, it } from "vitest";
import { Channel, ChannelOverflowError } from "./channel";
import { SlidingWindowLimiter } from "./rate-limit";

describe("Channel", () => {
  it("delivers in order and ends after close", async () => {
    const ch = new Channel<number>(10);
    ch.push(1);
    ch.push(2);
    setTimeout(() => {
      ch.push(3);
      ch.close();
    }, 5);
    const got: number[] = [];
    for await (const n of ch) got.push(n);
    expect(got).toEqual([1, 2, 3]);
  });

  it("fails instead of growing past its capacity", async () => {
    const ch = new Channel<number>(2);
    expect(ch.push(1)).toBe(true);
    expect(ch.push(2)).toBe(true);
    expect(ch.push(3)).toBe(false);
    expect(ch.size).toBe(0);
    await expect((async () => {
      for await (const _ of ch) void _;
    })()).rejects.toBeInstanceOf(ChannelOverflowError);
  });
});

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
