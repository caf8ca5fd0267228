import { describe, expect, it } from "vitest";
import { componentLoader } from "@/lib/client/after-load-import";

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
