import { describe, expect, it } from "vitest";
import { silentLogger } from "./logger";
import { RuntimeHealth, type RuntimeHealthStatus } from "./runtime-health";
import { FakeRuntime } from "./testing/fake-runtime";

describe("RuntimeHealth", () => {
  it("is unknown until a probe answers, then changes (and tells listeners) only when reachability does", async () => {
    const runtime = new FakeRuntime();
    let t = 1_000;
    const health = new RuntimeHealth({ runtime, address: "10.0.0.5:50051", logger: silentLogger, now: () => t });
    const changes: RuntimeHealthStatus[] = [];
    health.onChange((s) => changes.push(s));
    expect(health.status()).toMatchObject({ reachable: null, address: "10.0.0.5:50051", kind: "embedded", sinceMs: 0 });

    expect(await health.probe()).toMatchObject({ reachable: true, sinceMs: 1_000, checkedAtMs: 1_000, error: "" });
    t = 2_000;
    expect(await health.probe()).toMatchObject({ reachable: true, sinceMs: 1_000, checkedAtMs: 2_000 });

    runtime.unreachable = true;
    t = 3_000;
    const down = await health.probe();
    expect(down).toMatchObject({ reachable: false, sinceMs: 3_000 });
    expect(down.error).toContain("ECONNREFUSED");
    t = 4_000;
    expect(await health.probe()).toMatchObject({ reachable: false, sinceMs: 3_000, checkedAtMs: 4_000 });

    runtime.unreachable = false;
    t = 5_000;
    expect(await health.probe()).toMatchObject({ reachable: true, sinceMs: 5_000, error: "" });
    expect(changes.map((c) => [c.reachable, c.sinceMs])).toEqual([
      [true, 1_000],
      [false, 3_000],
      [true, 5_000],
    ]);
    health.close();
  });
});
