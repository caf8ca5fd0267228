import { afterEach, describe, expect, it, vi } from "vitest";
import { StreamCollector } from "./stream-gc";

const MiB = 1_048_576;

function setup(opts: { memory: number[]; growth?: number; live?: number }) {
  let now = 0;
  let mem = opts.memory[0] ?? 0;
  const gcs: number[] = [];
  const reports: { beforeBytes: number; afterBytes: number; busy: boolean }[] = [];
  let live = opts.live ?? 10 * MiB;
  const c = new StreamCollector({
    gc: () => {
      gcs.push(now);
      mem = live; // what is live after the collection
    },
    memory: () => mem,
    quietMs: 1_000,
    minIntervalMs: 60_000,
    growthBytes: opts.growth ?? 32 * MiB,
    busyStepBytes: 4 * MiB,
    busyGrowthBytes: 16 * MiB,
    busyIntervalMs: 1_000,
    now: () => now,
    collected: (r) => reports.push(r),
  });
  return {
    c,
    gcs,
    reports,
    setMem: (m: number) => void (mem = m),
    setLive: (m: number) => void (live = m),
    advance: (ms: number) => {
      now += ms;
      vi.advanceTimersByTime(ms);
    },
  };
}

describe("StreamCollector", () => {
  afterEach(() => vi.useRealTimers());

  it("collects once streams have been quiet, only when memory grew enough", () => {
    vi.useFakeTimers();
    const t = setup({ memory: [10 * MiB] });
    t.setMem(20 * MiB);
    t.c.streamEnded();
    t.advance(1_000);
    expect(t.gcs).toEqual([]); // grew 10 MiB: not worth a pause
    t.setMem(60 * MiB);
    t.c.streamEnded();
    t.advance(999);
    expect(t.gcs).toEqual([]); // not quiet yet
    t.c.streamEnded(); // another stream ended: the quiet period starts again
    t.advance(999);
    expect(t.gcs).toEqual([]);
    t.advance(1);
    expect(t.gcs).toHaveLength(1);
    expect(t.reports[0]).toMatchObject({ beforeBytes: 60 * MiB, afterBytes: 10 * MiB });
  });

  it("collects at most once per interval, and comes back when the interval is over", () => {
    vi.useFakeTimers();
    const t = setup({ memory: [10 * MiB] });
    t.setMem(60 * MiB);
    t.c.streamEnded();
    t.advance(1_000);
    expect(t.gcs).toHaveLength(1);
    t.setMem(80 * MiB);
    t.c.streamEnded();
    t.advance(1_000);
    expect(t.gcs).toHaveLength(1); // too soon after the last one
    t.advance(58_999);
    expect(t.gcs).toHaveLength(1);
    t.advance(1);
    expect(t.gcs).toEqual([1_000, 61_000]); // the deferred check ran when the interval ended
  });

  it("does nothing once closed", () => {
    vi.useFakeTimers();
    const t = setup({ memory: [10 * MiB] });
    t.setMem(100 * MiB);
    t.c.streamEnded();
    t.c.close();
    t.advance(120_000);
    expect(t.gcs).toEqual([]);
    expect(t.c.check()).toBe(false);
  });

  it("while streams send, looks at memory after each 4 MiB of payload and collects once it grew 16 MiB, at most once a second", () => {
    vi.useFakeTimers();
    const t = setup({ memory: [10 * MiB] });
    // 3 MiB of payload sent: no look yet, whatever memory says.
    t.setMem(200 * MiB);
    for (let i = 0; i < 3; i++) expect(t.c.sent(MiB)).toBe(false);
    expect(t.gcs).toEqual([]);
    // The 4th MiB: memory grew 190 MiB since the last collection.
    t.setLive(40 * MiB); // four streams' buffers are still live
    expect(t.c.sent(MiB)).toBe(true);
    expect(t.reports[0]).toEqual(expect.objectContaining({ beforeBytes: 200 * MiB, afterBytes: 40 * MiB, busy: true }));
    // Growth is now measured from what was live (40 MiB): 10 MiB more is not worth a pause...
    t.advance(1_000);
    t.setMem(50 * MiB);
    for (let i = 0; i < 4; i++) expect(t.c.sent(MiB)).toBe(false);
    // ...but the garbage keeps growing after the streams stop sending: one more look a second later.
    t.setMem(57 * MiB);
    t.advance(1_000);
    expect(t.gcs).toEqual([0, 2_000]);
    t.advance(5_000);
    expect(t.gcs).toHaveLength(2); // one look, not a poll
    t.setMem(80 * MiB);
    for (let i = 0; i < 4; i++) t.c.sent(MiB);
    expect(t.gcs).toEqual([0, 2_000, 7_000]);
    // Within the interval: no second pause at once, but a look when the interval ends.
    t.setMem(90 * MiB);
    for (let i = 0; i < 8; i++) expect(t.c.sent(MiB)).toBe(false);
    t.advance(999);
    expect(t.gcs).toHaveLength(3);
    t.advance(1);
    expect(t.gcs).toEqual([0, 2_000, 7_000, 8_000]);
    // Nothing happens once closed, not even a pending look.
    t.setMem(500 * MiB);
    for (let i = 0; i < 4; i++) t.c.sent(MiB);
    t.c.close();
    t.advance(5_000);
    for (let i = 0; i < 64; i++) expect(t.c.sent(MiB)).toBe(false);
    expect(t.gcs).toHaveLength(4);
  });

  it("after streams end, counts their buffers as growth even when collections while they sent saw them live", () => {
    vi.useFakeTimers();
    const t = setup({ memory: [10 * MiB] });
    t.setLive(40 * MiB);
    t.setMem(60 * MiB);
    for (let i = 0; i < 4; i++) t.c.sent(MiB);
    expect(t.gcs).toHaveLength(1); // memory is now 40 MiB, the streams' buffers
    // The streams leave and their buffers become garbage: 44 MiB is only 4 MiB above the last
    // collection, but 34 MiB above the quiet baseline (10 MiB).
    t.setLive(10 * MiB);
    t.setMem(44 * MiB);
    t.c.streamEnded();
    t.advance(1_000);
    expect(t.gcs).toHaveLength(2);
    expect(t.reports[1]).toEqual(expect.objectContaining({ beforeBytes: 44 * MiB, afterBytes: 10 * MiB, busy: false }));
  });
});
