import { create } from "@bufbuild/protobuf";
import { expect, it } from "vitest";
import { RunDemoResponseSchema } from "@/lib/gen/baton/v1/actions_pb";
import { EMPTY_DEMO_RUN, applyDemoMessage, paceValueOf, refusalOfStep } from "@/features/admin/demo-run";

it("folds a demo run's narration, sessions and verdict", () => {
  const msgs = [
    create(RunDemoResponseSchema, { item: { case: "line", value: "━━ Rotation that needs the lead's approval" } }),
    create(RunDemoResponseSchema, { item: { case: "session", value: { alias: "main", sessionId: "s-1" } } }),
    create(RunDemoResponseSchema, { item: { case: "heartbeat", value: { serverTimeUnixMs: 1n } } }),
    create(RunDemoResponseSchema, { item: { case: "finished", value: { passed: true, problems: [], durationMs: 1200n } } }),
  ];
  const s = msgs.reduce(applyDemoMessage, EMPTY_DEMO_RUN);
  expect(s).toEqual({
    lines: ["━━ Rotation that needs the lead's approval"],
    sessions: [{ alias: "main", sessionId: "s-1" }],
    finished: { passed: true, problems: [], durationMs: 1200 },
    totalSteps: 0,
    steps: [],
  });
});

it("folds the run id, pause/step/pace and each step; a refused step becomes a local annotation", () => {
  const msgs = [
    create(RunDemoResponseSchema, { item: { case: "started", value: { runId: "r1", steps: 9 } } }),
    create(RunDemoResponseSchema, { item: { case: "control", value: { paused: true, played: 0, speed: 2 } } }),
    create(RunDemoResponseSchema, {
      item: {
        case: "step",
        value: { index: 1, sessionId: "s-1", actor: "agent://a", action: "start", result: "ok", asExpected: true, atUnixMs: 10n },
      },
    }),
    create(RunDemoResponseSchema, {
      item: {
        case: "step",
        value: {
          index: 7,
          sessionId: "s-1",
          actor: "agent://a",
          action: "commit",
          result: "FORBIDDEN",
          runtimeMessage: "not a designated approver",
          explanation: "The sender may not do this.",
          asExpected: true,
          atUnixMs: 70n,
        },
      },
    }),
    create(RunDemoResponseSchema, { item: { case: "control", value: { paused: false, played: 7, instant: true } } }),
  ];
  const s = msgs.reduce(applyDemoMessage, EMPTY_DEMO_RUN);
  expect(s.runId).toBe("r1");
  expect(s.totalSteps).toBe(9);
  expect(s.control).toEqual({ paused: false, played: 7, speed: 0, instant: true });
  expect(s.steps.map((x) => x.result)).toEqual(["ok", "FORBIDDEN"]);
  expect(refusalOfStep("r1", s.steps[0] as (typeof s.steps)[number])).toBeNull();
  expect(refusalOfStep("r1", s.steps[1] as (typeof s.steps)[number])).toEqual({
    id: "demo-r1-7",
    sessionId: "s-1",
    atMs: 70,
    actor: "agent://a",
    attempt: "commit (demo step 7, refused as the script expects)",
    code: "FORBIDDEN",
    explanation: "The sender may not do this. Runtime: not a designated approver",
    source: "demo",
  });
  expect(paceValueOf({ speed: 2, instant: false })).toBe("2");
  expect(paceValueOf({ speed: 0, instant: true })).toBe("instant");
});
