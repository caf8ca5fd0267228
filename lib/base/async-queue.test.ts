import { describe, expect, it } from "vitest";
import { AsyncQueue, Limiter, QueueOverflowError } from "./async-queue";
import { linkedController, sleep, whenAborted } from "./abort";

async function drain<T>(q: AsyncIterable<T>): Promise<{ got: T[]; error: unknown }> {
  const got: T[] = [];
  try {
    for await (const x of q) got.push(x);
  } catch (e) {
    return { got, error: e };
  }
  return { got, error: null };
}

describe("AsyncQueue, bounded (the runtime's subscriber streams)", () => {
  it("delivers in order and ends after close", async () => {
    const ch = new AsyncQueue<number>({ capacity: 10 });
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
    const ch = new AsyncQueue<number>({ capacity: 2 });
    expect(ch.push(1)).toBe(true);
    expect(ch.push(2)).toBe(true);
    expect(ch.push(3)).toBe(false);
    expect(ch.size).toBe(0);
    await expect(
      (async () => {
        for await (const _ of ch) void _;
      })(),
    ).rejects.toBeInstanceOf(QueueOverflowError);
  });

  it("fails past its byte bound, but always takes one item into an empty queue", async () => {
    const ch = new AsyncQueue<string>({ capacity: 100, maxBytes: 10, sizeOf: (s) => s.length });
    expect(ch.push("x".repeat(50))).toBe(true);
    expect(ch.bytes).toBe(50);
    expect(ch.push("y")).toBe(false);
    const { got, error } = await drain(ch);
    expect(got).toEqual([]);
    expect(error).toBeInstanceOf(QueueOverflowError);
    expect((error as Error).message).toBe("consumer fell more than 10 bytes behind");
  });

  it("failNow drops what is queued; fail ends after it", async () => {
    const now = new AsyncQueue<number>();
    now.push(1);
    now.failNow(new Error("gone"));
    expect(now.push(2)).toBe(false);
    expect(await drain(now)).toEqual({ got: [], error: new Error("gone") });

    const later = new AsyncQueue<number>();
    later.push(1);
    later.push(2);
    later.fail(new Error("after"));
    later.fail(new Error("ignored: already ended"));
    expect(await drain(later)).toEqual({ got: [1, 2], error: new Error("after") });
  });

  it("keeps no consumed item reachable and compacts its arrays", async () => {
    const q = new AsyncQueue<{ n: number }>();
    for (let i = 0; i < 5_000; i++) q.push({ n: i });
    q.close();
    let sum = 0;
    for await (const x of q) sum += x.n;
    expect(sum).toBe((4_999 * 5_000) / 2);
    expect(q.size).toBe(0);
  });
});

describe("AsyncQueue, unbounded with backpressure (the gateway's browser streams)", () => {
  it("waitBelow resolves once the consumer drains below the mark, by count and bytes", async () => {
    const q = new AsyncQueue<string>({ sizeOf: (s) => s.length });
    q.push("aaaa");
    q.push("bbbb");
    q.push("cccc");
    let released = false;
    const wait = q.waitBelow(2, 4).then(() => (released = true));
    const it = q[Symbol.asyncIterator]();
    await it.next();
    await Promise.resolve();
    expect(released).toBe(false); // 2 items, 8 bytes
    await it.next();
    await wait;
    expect(released).toBe(true);
    expect(q.size).toBe(1);
    expect(q.bytes).toBe(4);
  });

  it("discard ends at once; close releases waiting producers; pushes after the end are ignored", async () => {
    const q = new AsyncQueue<number>();
    q.push(1);
    const wait = q.waitBelow(1);
    q.discard();
    await wait;
    expect(q.push(2)).toBe(false);
    expect(await drain(q)).toEqual({ got: [], error: null });
  });
});

describe("Limiter", () => {
  it("runs at most max at once, in order; an abort while waiting rejects with its reason", async () => {
    const l = new Limiter(1);
    const first = await l.acquire();
    const ac = new AbortController();
    const aborted = l.acquire(ac.signal);
    const second = l.acquire();
    expect(l.queued).toBe(2);
    ac.abort(new Error("left"));
    await expect(aborted).rejects.toThrow("left");
    first();
    first(); // idempotent
    const release = await second;
    expect(l.running).toBe(1);
    release();
    expect(l.running).toBe(0);
  });
});

describe("abort helpers", () => {
  it("sleep resolves true after the time, false at once when aborted", async () => {
    expect(await sleep(5)).toBe(true);
    const ac = new AbortController();
    const t0 = Date.now();
    const p = sleep(10_000, ac.signal);
    ac.abort();
    expect(await p).toBe(false);
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(await sleep(10, ac.signal)).toBe(false);
  });

  it("linkedController aborts with a parent's reason and lets go of the parents when it ends", async () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkedController(a.signal, undefined, b.signal);
    b.abort("b went");
    expect(linked.signal.aborted).toBe(true);
    expect(linked.signal.reason).toBe("b went");
    await whenAborted(linked.signal);
    expect(linkedController(b.signal).signal.reason).toBe("b went");
    // Done early: aborting it detaches it, so a later parent abort reaches nothing.
    const parent = new AbortController();
    const child = linkedController(parent.signal);
    child.abort("done");
    parent.abort("later");
    expect(child.signal.reason).toBe("done");
  });
});
