import { create } from "@bufbuild/protobuf";
import { expect, it } from "vitest";
import { RunDemoResponseSchema } from "@/lib/gen/baton/v1/actions_pb";
import { EMPTY_DEMO_RUN, applyDemoMessage } from "./demo-run";

it("folds a demo run's narration, sessions and verdict", () => {
  const msgs = [
    create(RunDemoResponseSchema, { item: { case: "line", value: "━━ Rotation that needs the lead's approval" } }),
    create(RunDemoResponseSchema, { item: { case: "session", value: { alias: "main", sessionId: "s-1" } } }),
    create(RunDemoResponseSchema, { item: { case: "heartbeat", value: { serverTimeUnixMs: 1n } } }),
    create(RunDemoResponseSchema, { item: { case: "finished", value: { passed: true, problems: [], durationMs: 1200n } } }),
  ];
  const s = msgs.reduce(applyDemoMessage, EMPTY_DEMO_RUN);
  expect(s).toEqual({ lines: ["━━ Rotation that needs the lead's approval"], sessions: [{ alias: "main", sessionId: "s-1" }], finished: { passed: true, problems: [], durationMs: 1200 } });
});
