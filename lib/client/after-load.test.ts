import { describe, expect, it, vi } from "vitest";
import { afterLoad, afterLoadAndIdle, onLoad, type LoadIdleWindow } from "@/lib/client/after-load";

function fakeWindow(readyState: string, idle: boolean) {
  const loadListeners = new Set<() => void>();
  const idleQueue = new Map<number, { cb: () => void; timeout?: number }>();
  const timers = new Map<number, { cb: () => void; ms?: number }>();
  let next = 1;
  const win: LoadIdleWindow & { document: { readyState: string } } = {
    document: { readyState },
    addEventListener: (_t, l) => void loadListeners.add(l),
    removeEventListener: (_t, l) => void loadListeners.delete(l),
    setTimeout: (cb, ms) => {
      timers.set(next, { cb, ms });
      return next++;
    },
    clearTimeout: (h) => void timers.delete(h),
  };
  if (idle) {
    win.requestIdleCallback = (cb, opts) => {
      idleQueue.set(next, { cb, timeout: opts?.timeout });
      return next++;
    };
    win.cancelIdleCallback = (h) => void idleQueue.delete(h);
  }
  return {
    win,
    loadListeners,
    idleQueue,
    timers,
    load() {
      win.document.readyState = "complete";
      for (const l of [...loadListeners]) l();
    },
    flush() {
      for (const [h, e] of [...idleQueue, ...timers]) {
        idleQueue.delete(h);
        timers.delete(h);
        e.cb();
      }
    },
  };
}

describe("afterLoadAndIdle", () => {
  it("waits for the load event, then for an idle period (with a timeout)", () => {
    const f = fakeWindow("interactive", true);
    const run = vi.fn();
    afterLoadAndIdle(f.win, run, 1000);
    expect(f.loadListeners.size).toBe(1);
    f.flush();
    expect(run).not.toHaveBeenCalled();
    f.load();
    expect(f.loadListeners.size).toBe(0);
    expect(run).not.toHaveBeenCalled();
    expect([...f.idleQueue.values()].map((e) => e.timeout)).toEqual([1000]);
    f.flush();
    expect(run).toHaveBeenCalledTimes(1);
  });

  it("goes straight to the idle period when the page has already loaded", () => {
    const f = fakeWindow("complete", true);
    const run = vi.fn();
    afterLoadAndIdle(f.win, run);
    expect(f.loadListeners.size).toBe(0);
    expect(f.idleQueue.size).toBe(1);
    f.flush();
    expect(run).toHaveBeenCalledTimes(1);
  });

  it("falls back to setTimeout 0 without requestIdleCallback", () => {
    const f = fakeWindow("loading", false);
    const run = vi.fn();
    afterLoadAndIdle(f.win, run);
    f.load();
    expect([...f.timers.values()].map((t) => t.ms)).toEqual([0]);
    f.flush();
    expect(run).toHaveBeenCalledTimes(1);
  });

  it("never runs once cancelled, before or after load", () => {
    const before = fakeWindow("interactive", true);
    const run = vi.fn();
    afterLoadAndIdle(before.win, run)();
    expect(before.loadListeners.size).toBe(0);
    before.load();
    before.flush();

    const after = fakeWindow("complete", false);
    const cancel = afterLoadAndIdle(after.win, run);
    expect(after.timers.size).toBe(1);
    cancel();
    expect(after.timers.size).toBe(0);
    after.flush();
    expect(run).not.toHaveBeenCalled();
  });
});

describe("afterLoad", () => {
  it("runs in a task right after the load event, without asking for an idle period", () => {
    const f = fakeWindow("interactive", true);
    const run = vi.fn();
    afterLoad(f.win, run);
    f.flush();
    expect(run).not.toHaveBeenCalled();
    f.load();
    expect(f.idleQueue.size).toBe(0);
    expect([...f.timers.values()].map((e) => e.ms)).toEqual([0]);
    f.flush();
    expect(run).toHaveBeenCalledTimes(1);
  });

  it("runs at the next task when the page has already loaded, and never after its canceller", () => {
    const f = fakeWindow("complete", true);
    const run = vi.fn();
    afterLoad(f.win, run)();
    f.flush();
    expect(run).not.toHaveBeenCalled();
    const again = vi.fn();
    afterLoad(f.win, again);
    f.flush();
    expect(again).toHaveBeenCalledTimes(1);
  });
});

describe("onLoad", () => {
  it("runs inside the load event, in no later task, and not before it", () => {
    const f = fakeWindow("interactive", true);
    const run = vi.fn();
    onLoad(f.win, run);
    f.flush();
    expect(run).not.toHaveBeenCalled();
    f.load();
    expect(run).toHaveBeenCalledTimes(1);
    expect(f.timers.size).toBe(0);
    expect(f.idleQueue.size).toBe(0);
    expect(f.loadListeners.size).toBe(0);
  });

  it("runs at once when the page has already loaded, and never after its canceller", () => {
    const done = fakeWindow("complete", false);
    const now = vi.fn();
    onLoad(done.win, now);
    expect(now).toHaveBeenCalledTimes(1);
    const f = fakeWindow("loading", false);
    const cancelled = vi.fn();
    onLoad(f.win, cancelled)();
    f.load();
    expect(cancelled).not.toHaveBeenCalled();
  });
});
