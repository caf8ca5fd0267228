import { describe, expect, it } from "vitest";
import { connectionFromRunner, INITIAL_CONNECTION } from "@/lib/client/connection";

describe("connectionFromRunner", () => {
  it("walks connecting → live → reconnecting → live → ended", () => {
    let c = connectionFromRunner(INITIAL_CONNECTION, { phase: "connecting", attempt: 1 });
    expect(c.state).toBe("connecting");
    c = connectionFromRunner(c, { phase: "open", attempt: 1 });
    expect(c).toEqual({ state: "live", reconnects: 0 });
    c = connectionFromRunner(c, { phase: "waiting", attempt: 1, retryAt: 123, error: "network down" });
    expect(c).toMatchObject({ state: "reconnecting", retryAt: 123, error: "network down" });
    c = connectionFromRunner(c, { phase: "connecting", attempt: 2 });
    expect(c.state).toBe("reconnecting");
    expect(c.retryAt).toBeUndefined();
    c = connectionFromRunner(c, { phase: "open", attempt: 2 });
    expect(c).toEqual({ state: "live", reconnects: 1 });
    c = connectionFromRunner(c, { phase: "ended", fatal: false });
    expect(c).toEqual({ state: "ended", reconnects: 1, fatal: false });
  });

  it("starts clean when a stopped stream is restarted", () => {
    const ended = connectionFromRunner(INITIAL_CONNECTION, { phase: "ended", fatal: true, error: "Not found" });
    expect(connectionFromRunner(ended, { phase: "connecting", attempt: 1 })).toEqual({ state: "connecting", reconnects: 0 });
  });

  it("keeps the reason of a fatal end", () => {
    expect(connectionFromRunner(INITIAL_CONNECTION, { phase: "ended", fatal: true, error: "Not found" })).toEqual({
      state: "ended",
      reconnects: 0,
      fatal: true,
      error: "Not found",
    });
  });
});
