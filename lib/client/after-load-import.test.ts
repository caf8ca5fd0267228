import { describe, expect, it } from "vitest";
import { componentLoader, moduleLoader } from "@/lib/client/after-load-import";

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
