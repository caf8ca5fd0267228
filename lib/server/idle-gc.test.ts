import { afterEach, describe, expect, it, vi } from "vitest";
import { IdleCollector } from "./idle-gc";

const MiB = 1_048_576;

function setup(opts: { memory: number[]; growth?: number }) {
  let now = 0;
  let mem = opts.memory[0] ?? 0;
  const gcs: number[] = [];
  const reports: { beforeBytes: number; afterBytes: number }[] = [];
  const c = new IdleCollector({
    gc: () => {
      gcs.push(now);
      mem = 10 * MiB; // what is live after the collection
    },
    memory: () => mem,
    quietMs: 1_000,
    minIntervalMs: 60_000,
    growthBytes: opts.growth ?? 32 * MiB,
    now: () => now,
    collected: (r) => reports.push(r),
  });
  return {
    c,
    gcs,
    reports,
    setMem: (m: number) => void (mem = m),
    advance: (ms: number) => {
      now += ms;
      vi.advanceTimersByTime(ms);
    },
  };
}

describe("IdleCollector", () => {
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
});
