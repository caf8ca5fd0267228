import { describe, expect, it } from "vitest";
import { HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { makeEvent } from "@/lib/macp/test-utils";
import type { SessionEvent } from "@/lib/macp/projections/types";
import {
  activeAssignee,
  activeTasks,
  initialTaskState,
  isAccepted,
  isCommitted,
  isComplete,
  isCompleted,
  isFailed,
  isPositiveOutcome,
  isRetryable,
  latestProgress,
  progressOf,
  reduceTask,
  taskFromEvents,
  terminalReport,
  type TaskState,
} from "@/lib/macp/projections/task";

const PLANNER = "agent://planner";
const WORKER = "agent://worker";
const OTHER = "agent://other";

const request = (assignee = WORKER, taskId = "t1") =>
  makeEvent(
    TASK_MODE,
    "TaskRequest",
    {
      taskId,
      title: "Build",
      instructions: "Do it",
      requestedAssignee: assignee,
      input: new Uint8Array([7]),
      deadlineUnixMs: 1773509100000n,
    },
    { sender: PLANNER, ts: 500 },
  );
const accept = (sender = WORKER, taskId = "t1") =>
  makeEvent(TASK_MODE, "TaskAccept", { taskId, assignee: sender, reason: "ready" }, { sender });
const reject = (sender = WORKER, reason = "busy") => makeEvent(TASK_MODE, "TaskReject", { taskId: "t1", assignee: "", reason }, { sender });
const update = (progress: number, message = "working", sender = WORKER) =>
  makeEvent(TASK_MODE, "TaskUpdate", { taskId: "t1", status: "running", progress, message }, { sender, ts: 700 });
const complete = () =>
  makeEvent(
    TASK_MODE,
    "TaskComplete",
    { taskId: "t1", assignee: WORKER, output: new Uint8Array([1]), summary: "done" },
    { sender: WORKER },
  );
const fail = (retryable: boolean) =>
  makeEvent(
    TASK_MODE,
    "TaskFail",
    { taskId: "t1", assignee: WORKER, errorCode: "E_TIMEOUT", reason: "slow", retryable },
    { sender: WORKER },
  );
const commit = (action: string, outcomePositive: boolean) =>
  makeEvent(
    TASK_MODE,
    "Commitment",
    { commitmentId: "c1", action, authorityScope: "s", reason: "r", outcomePositive },
    { sender: PLANNER },
  );

const fold = (...events: SessionEvent[]): TaskState => taskFromEvents(events);

describe("task phases and statuses (§5.7)", () => {
  it("starts Pending with no task", () => {
    expect(initialTaskState.phase).toBe("Pending");
    expect(activeTasks(initialTaskState)).toEqual([]);
    expect(progressOf(initialTaskState)).toBe(0);
    expect(latestProgress(initialTaskState)).toBeUndefined();
  });

  it("TaskRequest → Requested, record copied with requester", () => {
    const s = fold(request());
    expect(s.phase).toBe("Requested");
    expect(s.task).toMatchObject({
      taskId: "t1",
      title: "Build",
      instructions: "Do it",
      requestedAssignee: WORKER,
      input: new Uint8Array([7]),
      deadlineUnixMs: 1773509100000,
      requester: PLANNER,
      requestedAt: 500,
      status: "requested",
      rejections: [],
      updates: [],
    });
    expect(activeTasks(s).map((t) => t.taskId)).toEqual(["t1"]);
    expect(isAccepted(s)).toBe(false);
    expect(activeAssignee(s)).toBeUndefined();
  });

  it("TaskAccept → InProgress, status accepted, active assignee", () => {
    const s = fold(request(), accept());
    expect(s.phase).toBe("InProgress");
    expect(s.task?.status).toBe("accepted");
    expect(activeAssignee(s)).toBe(WORKER);
    expect(isAccepted(s)).toBe(true);
    expect(isAccepted(s, "t1")).toBe(true);
    expect(isAccepted(s, "t2")).toBe(false);
    expect(activeTasks(s)).toHaveLength(1);
  });

  it("TaskReject leaves the phase unchanged and records the rejection", () => {
    const s = fold(request(""), reject(OTHER, "nope"));
    expect(s.phase).toBe("Requested");
    expect(s.task?.status).toBe("rejected");
    expect(s.task?.rejections).toEqual([expect.objectContaining({ taskId: "t1", assignee: OTHER, reason: "nope", sender: OTHER })]);
    expect(activeTasks(s)).toEqual([]);
  });

  it("a reject by the active assignee clears the assignment (policy permitting)", () => {
    const s = fold(request(), accept(), reject(WORKER));
    expect(s.phase).toBe("InProgress");
    expect(activeAssignee(s)).toBeUndefined();
    expect(isAccepted(s)).toBe(false);
    const again = reduceTask(s, accept(WORKER));
    expect(activeAssignee(again)).toBe(WORKER);
  });

  it("progress 0.3 → 0.7 → complete = 1", () => {
    let s = fold(request(), accept());
    s = reduceTask(s, update(0.3));
    expect(s.phase).toBe("InProgress");
    expect(s.task?.status).toBe("in_progress");
    expect(progressOf(s)).toBeCloseTo(0.3);
    s = reduceTask(s, update(0.7, "more"));
    expect(latestProgress(s)).toBeCloseTo(0.7);
    expect(s.task?.updates.map((u) => [u.progress, u.message, u.status, u.sender, u.timestampMs])).toEqual([
      [0.3, "working", "running", WORKER, 700],
      [0.7, "more", "running", WORKER, 700],
    ]);
    s = reduceTask(s, complete());
    expect(s.phase).toBe("Completed");
    expect(s.task?.status).toBe("completed");
    expect(progressOf(s)).toBe(1);
    expect(isCompleted(s)).toBe(true);
    expect(isComplete(s)).toBe(true);
    expect(isFailed(s)).toBe(false);
    expect(terminalReport(s)).toMatchObject({ kind: "complete", assignee: WORKER, output: new Uint8Array([1]), summary: "done" });
    expect(activeTasks(s)).toEqual([]);
  });

  it("clamps progress to 0..1", () => {
    const s = fold(request(), accept(), update(3));
    expect(progressOf(s)).toBe(1);
  });

  it("TaskFail → Failed with error code, reason and retryable", () => {
    const s = fold(request(), accept(), update(0.5), fail(true));
    expect(s.phase).toBe("Failed");
    expect(s.task?.status).toBe("failed");
    expect(isFailed(s)).toBe(true);
    expect(isRetryable(s)).toBe(true);
    expect(isCompleted(s)).toBe(false);
    expect(progressOf(s)).toBeCloseTo(0.5);
    expect(terminalReport(s)).toMatchObject({ kind: "fail", errorCode: "E_TIMEOUT", reason: "slow", retryable: true });
    expect(isRetryable(fold(request(), accept(), fail(false)))).toBe(false);
  });

  it("Commitment → Committed; a negative outcome survives", () => {
    const ok = fold(request(), accept(), complete(), commit("task.completed", true));
    expect(ok.phase).toBe("Committed");
    expect(isCommitted(ok)).toBe(true);
    expect(isPositiveOutcome(ok)).toBe(true);
    const bad = fold(request(), accept(), fail(false), commit("task.failed", false));
    expect(bad.commitment?.outcomePositive).toBe(false);
    expect(isPositiveOutcome(bad)).toBe(false);
    expect(isPositiveOutcome(fold(request()))).toBeUndefined();
  });
});

describe("tolerance and immutability", () => {
  it("ignores a second request, mismatched task ids, foreign modes and unknown types", () => {
    const s = fold(request(), accept());
    for (const e of [
      request(WORKER, "t2"),
      accept(OTHER, "t2"),
      accept(OTHER),
      makeEvent(TASK_MODE, "TaskPing", new Uint8Array([1])),
      makeEvent(HANDOFF_MODE, "HandoffOffer", { handoffId: "h" }),
      makeEvent(TASK_MODE, "TaskUpdate", new Uint8Array([0xff, 0xff, 0xff])),
    ]) {
      expect(reduceTask(s, e)).toBe(s);
    }
  });

  it("ignores updates and reports after a terminal report", () => {
    const s = fold(request(), accept(), complete());
    expect(reduceTask(s, update(0.2))).toBe(s);
    expect(reduceTask(s, fail(true))).toBe(s);
  });

  it("ignores messages before any request", () => {
    expect(reduceTask(initialTaskState, accept())).toBe(initialTaskState);
  });

  it("never mutates the input state", () => {
    const s0 = fold(request(), accept());
    const snap = structuredClone(s0);
    const s1 = reduceTask(s0, update(0.4));
    reduceTask(reduceTask(s1, reject(WORKER)), complete());
    expect(s0).toEqual(snap);
    expect(s1.task).not.toBe(s0.task);
  });
});
