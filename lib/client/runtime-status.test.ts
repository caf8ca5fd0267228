import { beforeEach, describe, expect, it } from "vitest";
import {
  outageOf,
  parseRuntimeStatus,
  POLL_DOWN_MS,
  POLL_OK_MS,
  startRuntimeStatusPoller,
  useRuntimeStatusStore,
  type PollerEnv,
} from "@/lib/client/runtime-status";

const UP = { reachable: true, kind: "external", address: "rt:50051", sinceMs: 1, checkedAtMs: 2, error: "" };
const DOWN = { ...UP, reachable: false, sinceMs: 5, error: "connect ECONNREFUSED" };

/** A poller environment whose timers run when told and whose fetch answers from a script. */
function scripted(answers: (() => Promise<Response>)[]) {
  const timers: { fn: () => void; ms: number }[] = [];
  let hidden = false;
  let visible: (() => void) | undefined;
  const env: PollerEnv = {
    fetch: () => (answers.shift() ?? (() => Promise.reject(new Error("no more answers"))))(),
    setTimeout: (fn, ms) => timers.push({ fn, ms }),
    clearTimeout: () => undefined,
    hidden: () => hidden,
    onVisible: (fn) => {
      visible = fn;
      return () => (visible = undefined);
    },
  };
  return {
    env,
    timers,
    setHidden: (h: boolean) => (hidden = h),
    show: () => visible?.(),
    async next(): Promise<void> {
      const t = timers.shift();
      t?.fn();
      await new Promise((r) => setTimeout(r, 0));
    },
  };
}

const json = (body: unknown) => () => Promise.resolve(new Response(JSON.stringify(body), { status: 200 }));
const settle = () => new Promise((r) => setTimeout(r, 0));

beforeEach(() => useRuntimeStatusStore.setState({ status: null, consoleFailures: 0 }));

describe("runtime status in the browser", () => {
  it("reads only well-formed answers", () => {
    expect(parseRuntimeStatus(UP)).toEqual(UP);
    expect(parseRuntimeStatus({ ...UP, kind: "other" })).toBeNull();
    expect(parseRuntimeStatus({ ...UP, reachable: "yes" })).toBeNull();
    expect(parseRuntimeStatus("nope")).toBeNull();
  });

  it("polls slowly while all is well, quickly during a runtime outage, and names the runtime", async () => {
    const s = scripted([json(UP), json(DOWN), json(UP)]);
    const stop = startRuntimeStatusPoller(s.env);
    await settle();
    expect(outageOf(useRuntimeStatusStore.getState())).toBeNull();
    expect(s.timers.map((t) => t.ms)).toEqual([POLL_OK_MS]);
    await s.next();
    expect(outageOf(useRuntimeStatusStore.getState())).toEqual({
      kind: "runtime",
      address: "rt:50051",
      runtimeKind: "external",
      sinceMs: 5,
    });
    expect(s.timers.map((t) => t.ms)).toEqual([POLL_DOWN_MS]);
    await s.next();
    expect(outageOf(useRuntimeStatusStore.getState())).toBeNull();
    stop();
  });

  it("blames the console only after two polls it did not answer", async () => {
    const fail = () => Promise.reject(new TypeError("Failed to fetch"));
    const s = scripted([fail, fail, json(UP)]);
    startRuntimeStatusPoller(s.env);
    await settle();
    expect(outageOf(useRuntimeStatusStore.getState())).toBeNull();
    await s.next();
    expect(outageOf(useRuntimeStatusStore.getState())).toEqual({ kind: "console" });
    await s.next();
    expect(outageOf(useRuntimeStatusStore.getState())).toBeNull();
  });

  it("does not poll a hidden tab, and polls at once when it is shown", async () => {
    const s = scripted([json(UP), json(DOWN)]);
    startRuntimeStatusPoller(s.env);
    await settle();
    s.setHidden(true);
    await s.next();
    expect(s.timers).toEqual([]);
    expect(useRuntimeStatusStore.getState().status?.reachable).toBe(true);
    s.setHidden(false);
    s.show();
    await settle();
    expect(useRuntimeStatusStore.getState().status?.reachable).toBe(false);
  });
});
