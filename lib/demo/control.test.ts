import { describe, expect, it } from "vitest";
import { DemoControl, type ControlSnapshot } from "./control";

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("DemoControl", () => {
  it("holds at the gate while paused, lets one step through per step(), and runs freely after resume", async () => {
    const seen: ControlSnapshot[] = [];
    const c = new DemoControl(2, (s) => seen.push(s), { paused: true });
    let passed = 0;
    const through = async (): Promise<void> => {
      await c.gate();
      passed += 1;
    };
    void through();
    await tick();
    expect(passed).toBe(0);
    expect(c.step()).toBe(true);
    await tick();
    expect(passed).toBe(1);
    void through();
    await tick();
    expect(passed).toBe(1); // paused again after the one step
    c.resume();
    await tick();
    expect(passed).toBe(2);
    await through();
    expect(passed).toBe(3);
    expect(c.step()).toBe(false); // not paused: nothing to step
    c.pause();
    c.played();
    expect(seen.at(-1)).toEqual({ paused: true, played: 1, pace: 2 });
  });

  it("scales pauses by the pace in force, and an aborted signal releases the gate", async () => {
    const c = new DemoControl(2, undefined, { paused: true });
    expect(c.scaled(1_000)).toBe(500);
    c.setPace("instant");
    expect(c.scaled(1_000)).toBe(0);
    const ac = new AbortController();
    let released = false;
    void c.gate(ac.signal).then(() => (released = true));
    await tick();
    expect(released).toBe(false);
    ac.abort();
    await tick();
    expect(released).toBe(true);
  });
});
