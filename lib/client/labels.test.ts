import { describe, expect, it } from "vitest";
import { TASK_MODE } from "@/lib/macp/constants";
import { emptySessionView, reduceSession } from "@/lib/macp/projections/session";
import { makeEvent } from "@/lib/macp/test-utils";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { SESSION_STATE, viewPhaseBadge } from "./labels";

const ALICE = "human:alice";
const BOB = "human:bob";

function task(steps: ("reject" | "accept")[]) {
  const events = [
    makeEvent(TASK_MODE, "SessionStart", { intent: "keys", participants: [ALICE, BOB], ttlMs: 60_000n }, { sender: ALICE }),
    makeEvent(TASK_MODE, "TaskRequest", { taskId: "t1", title: "Rotate", requestedAssignee: BOB }, { sender: ALICE }),
  ];
  for (const s of steps) {
    if (s === "reject") events.push(makeEvent(TASK_MODE, "TaskReject", { taskId: "t1", assignee: BOB, reason: "busy" }, { sender: BOB }));
    if (s === "accept") events.push(makeEvent(TASK_MODE, "TaskAccept", { taskId: "t1", assignee: BOB }, { sender: BOB }));
  }
  return events.reduce(reduceSession, emptySessionView());
}

describe("viewPhaseBadge", () => {
  it("shows a task its assignee turned down as rejected, not requested", () => {
    const rejected = task(["reject"]);
    expect(rejected.phase).toBe("Requested");
    expect(viewPhaseBadge(rejected)).toMatchObject({ label: "Rejected", tone: "warning" });
    expect(viewPhaseBadge(task([]))).toMatchObject({ label: "Requested" });
    expect(viewPhaseBadge(task(["accept"]))).toMatchObject({ label: "In progress" });
  });
});

describe("SESSION_STATE", () => {
  it("holds exactly the generated SessionState's names and values", () => {
    const generated = Object.fromEntries(Object.entries(SessionState).filter(([k]) => Number.isNaN(Number(k))));
    expect({ ...SESSION_STATE }).toEqual(generated);
  });
});
