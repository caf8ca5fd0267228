import { describe, expect, it, vi } from "vitest";
import { componentLoader, fetchWithRetries, moduleLoader, RETRY_DELAYS_MS } from "@/lib/client/after-load-import";

describe("componentLoader", () => {
  it("fetches once while a fetch is pending or done, and again after a failure", async () => {
    const component = () => null;
    let calls = 0;
    let fail = true;
    const load = componentLoader(async () => {
      calls += 1;
      if (fail) throw new Error("chunk failed");
      return component;
    });
    await expect(load()).rejects.toThrow("chunk failed");
    fail = false;
    const [a, b] = await Promise.all([load(), load()]);
    expect(a).toBe(component);
    expect(b).toBe(component);
    expect(await load()).toBe(component);
    expect(calls).toBe(2);
  });
});

describe("moduleLoader", () => {
  it("holds the module once a fetch succeeded, and nothing before", async () => {
    const mod = { answer: 42 };
    let release: (m: typeof mod) => void = () => undefined;
    const load = moduleLoader(() => new Promise<typeof mod>((resolve) => (release = resolve)));
    const pending = load();
    expect(load.loaded()).toBeUndefined();
    release(mod);
    expect(await pending).toBe(mod);
    expect(load.loaded()).toBe(mod);
  });
});

describe("fetchWithRetries", () => {
  /** A window whose page has loaded, with no idle callbacks (the scheduler falls back to a timer). */
  const loaded = {
    document: { readyState: "complete" },
    addEventListener: () => undefined,
    removeEventListener: () => undefined,
    setTimeout: (f: () => void, ms?: number) => setTimeout(f, ms) as unknown as number,
    clearTimeout: (h: number) => clearTimeout(h),
  };

  it("tries again after each of RETRY_DELAYS_MS, tells every failure, and gives the value once it comes", async () => {
    vi.useFakeTimers();
    try {
      let calls = 0;
      const failures: boolean[] = [];
      const values: string[] = [];
      fetchWithRetries(
        loaded,
        "now",
        async () => {
          calls += 1;
          if (calls < 3) throw new Error("chunk failed");
          return "code";
        },
        (v) => values.push(v),
        (_e, retrying) => failures.push(retrying),
      );
      await vi.advanceTimersByTimeAsync(0);
      expect([calls, failures]).toEqual([1, [true]]);
      await vi.advanceTimersByTimeAsync((RETRY_DELAYS_MS[0] ?? 0) - 1);
      expect(calls).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      expect([calls, failures]).toEqual([2, [true, true]]);
      await vi.advanceTimersByTimeAsync(RETRY_DELAYS_MS[1] ?? 0);
      expect([calls, values]).toEqual([3, ["code"]]);
    } finally {
      vi.useRealTimers();
    }
  });

  it("stops after the last delay, saying no more attempt follows; a cancelled one fetches and tells nothing more", async () => {
    vi.useFakeTimers();
    try {
      const failures: boolean[] = [];
      let calls = 0;
      fetchWithRetries(
        loaded,
        "now",
        () => {
          calls += 1;
          return Promise.reject(new Error("offline"));
        },
        () => undefined,
        (_e, retrying) => failures.push(retrying),
      );
      await vi.advanceTimersByTimeAsync(RETRY_DELAYS_MS.reduce((a, b) => a + b, 0) + 1);
      expect(calls).toBe(RETRY_DELAYS_MS.length + 1);
      expect(failures).toEqual([...RETRY_DELAYS_MS.map(() => true), false]);

      let later = 0;
      const cancel = fetchWithRetries(
        loaded,
        "after-load",
        () => {
          later += 1;
          return Promise.resolve(1);
        },
        () => expect.unreachable("cancelled before its start"),
        () => undefined,
      );
      cancel();
      await vi.advanceTimersByTimeAsync(5_000);
      expect(later).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
