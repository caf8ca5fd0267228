// @vitest-environment happy-dom
// A task its assignee turned down reads as what it is (issue 12, problem 8):
// the status says "Rejected", not "Requested", and the task's summary says
// the assignee turned it down, not "(not accepted yet)".

import { cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { TASK_MODE } from "@/lib/macp/constants";
import { phaseDetail, sessionStatus } from "@/lib/macp/projections/status";
import { applySubscribeBatch, beginConnection, initialSessionStreamState } from "@/lib/views/session-stream-state";
import { statusBadge } from "@/lib/views/labels";
import { SID, env, eventMsg, start, taskEnv } from "@/lib/views/test/fixtures";
import { TaskSummary } from "@/features/session/Summaries";

afterEach(cleanup);

const names: Record<string, string> = { alice: "Alice Ng", bob: "Bob Ito" };
const nameOf = (id: string): string => names[id] ?? id;

function viewOf(envs: Envelope[]) {
  return applySubscribeBatch(
    beginConnection(initialSessionStreamState(SID)),
    envs.map((e, i) => eventMsg(i + 1, e)),
  ).state.view;
}

const reject = (): Envelope => env(TASK_MODE, "TaskReject", { taskId: "t1", assignee: "bob", reason: "no capacity" }, { sender: "bob" });

describe("a task its assignee turned down", () => {
  it("has the status Rejected, and its summary says who turned it down", () => {
    const view = viewOf([start(["alice", "bob"], TASK_MODE), taskEnv.request(), reject()]);
    const facts = { state: SessionState.OPEN, phase: view.phase, outcome: "", detail: phaseDetail(view) };
    expect(sessionStatus(facts)).toBe("rejected");
    expect(statusBadge(facts).label).toBe("Rejected");

    const { getByTestId } = render(<TaskSummary view={view} nameOf={nameOf} renderOutput={() => null} />);
    const text = getByTestId("task-summary").textContent ?? "";
    expect(text).toContain("Assignee: Bob Ito (turned it down)");
    expect(text).not.toContain("not accepted yet");
    expect(text).toContain("Turned down by Bob Ito: no capacity");
  });

  it("still reads as requested while nobody has answered", () => {
    const view = viewOf([start(["alice", "bob"], TASK_MODE), taskEnv.request()]);
    expect(sessionStatus({ state: SessionState.OPEN, phase: view.phase, outcome: "", detail: phaseDetail(view) })).toBe("requested");
    const { getByTestId } = render(<TaskSummary view={view} nameOf={nameOf} renderOutput={() => null} />);
    expect(getByTestId("task-summary").textContent).toContain("Assignee: Bob Ito (not accepted yet)");
  });
});
