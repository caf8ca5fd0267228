// The bridge's decisions, as pure functions: which steps bring a session to
// the file's state, which MACP results go into the file, and when the two
// sides disagree, that the file wins in a new session.
import { describe, expect, it } from "vitest";
import { isValidSessionId } from "@/lib/macp/ids";
import type { HandoffRecord } from "../record";
import { bridgeMessageId, bridgeSessionId, participantsFor, planFor, type SessionView } from "./mapping";

const rec = (over: Partial<HandoffRecord> = {}): HandoffRecord => ({
  task_id: "t-1",
  from_agent: "planner",
  to_agent: "",
  status: "offered",
  description: "work",
  context: {},
  created_at: "2026-11-20T10:00:00Z",
  updated_at: "2026-11-20T10:00:00Z",
  ...over,
});
/** MACP reports happen after the file's last change (10:00) unless a test says otherwise. */
const T0 = Date.UTC(2026, 10, 20, 10, 5);
const none: SessionView = { exists: false, participants: [] };
const open = (task?: SessionView["task"], extra: Partial<SessionView> = {}): SessionView => ({
  exists: true,
  state: "OPEN",
  initiator: "planner",
  participants: ["planner", "worker", "filer"],
  ...(task ? { task } : {}),
  ...extra,
});
const requested = (over: Partial<NonNullable<SessionView["task"]>> = {}) => ({ requestedAssignee: "", rejections: [], ...over });
const POOL = ["worker"];

describe("ids", () => {
  it("derives the same valid UUID v4 session id for the same secret, task and epoch, and another for the next epoch", () => {
    const secret = new Uint8Array(32).fill(7);
    const a = bridgeSessionId(secret, "/srv/h", "t-1", 1);
    expect(isValidSessionId(a)).toBe(true);
    expect(bridgeSessionId(secret, "/srv/h", "t-1", 1)).toBe(a);
    expect(bridgeSessionId(secret, "/srv/h", "t-1", 2)).not.toBe(a);
    expect(bridgeSessionId(new Uint8Array(32).fill(8), "/srv/h", "t-1", 1)).not.toBe(a);
    expect(bridgeMessageId("accept")).toBe("handoff-files:accept");
  });

  it("puts from_agent, to_agent and the pool in the session, once each", () => {
    expect(participantsFor(rec({ to_agent: "filer" }), ["worker", "planner"])).toEqual(["planner", "filer", "worker"]);
  });
});

describe("file → MACP", () => {
  it("replays the file's state into a new session", () => {
    const kinds = (r: HandoffRecord) => {
      const p = planFor(r, none, POOL);
      return p.kind === "send" ? p.steps.map((s) => ("as" in s ? `${s.kind}:${s.as}` : s.kind)) : [p.kind];
    };
    expect(kinds(rec())).toEqual(["start", "request"]);
    expect(kinds(rec({ status: "accepted", to_agent: "filer" }))).toEqual(["start", "request", "accept:filer"]);
    expect(kinds(rec({ status: "completed", to_agent: "filer" }))).toEqual([
      "start",
      "request",
      "accept:filer",
      "complete:filer",
      "commit",
    ]);
    expect(kinds(rec({ status: "failed", to_agent: "filer" }))).toEqual(["start", "request", "accept:filer", "fail:filer", "commit"]);
    expect(kinds(rec({ status: "rejected", to_agent: "filer" }))).toEqual(["start", "request", "reject:filer", "cancel"]);
    expect(kinds(rec({ status: "accepted" }))).toEqual(["blocked"]);
  });

  it("sends only what the session lacks", () => {
    const p = planFor(rec({ status: "completed", to_agent: "worker" }), open(requested({ activeAssignee: "worker" })), POOL);
    expect(p).toEqual({
      kind: "send",
      steps: [
        { kind: "complete", as: "worker" },
        { kind: "commit", action: "task.completed" },
      ],
    });
    const done = open(
      requested({
        activeAssignee: "worker",
        terminal: { kind: "complete", assignee: "worker", atMs: T0, summary: "", output: new Uint8Array() },
      }),
      {
        state: "RESOLVED",
        commitmentAction: "task.completed",
      },
    );
    expect(planFor(rec({ status: "completed", to_agent: "worker" }), done, POOL)).toEqual({ kind: "idle", done: true });
  });

  it("cannot offer to anyone when nobody on the MACP side could take it", () => {
    expect(planFor(rec(), none, [])).toMatchObject({ kind: "blocked", reason: expect.stringContaining("--participants") });
  });
});

describe("MACP → file", () => {
  it("writes an MACP agent's accept, reject, complete and fail into the file", () => {
    expect(planFor(rec(), open(requested({ activeAssignee: "worker" })), POOL, "s-1")).toMatchObject({
      kind: "file",
      action: { kind: "accept", agent: "worker" },
    });
    expect(planFor(rec(), open(requested({ rejections: [{ assignee: "worker", reason: "busy" }] })), POOL, "s-1")).toMatchObject({
      kind: "file",
      action: { kind: "reject", agent: "worker", context: { macp_reason: "busy", macp_session_id: "s-1" } },
    });
    const completed = open(
      requested({
        activeAssignee: "worker",
        terminal: { kind: "complete", assignee: "worker", atMs: T0, summary: "done", output: new TextEncoder().encode("42") },
      }),
    );
    expect(planFor(rec({ status: "accepted", to_agent: "worker" }), completed, POOL, "s-1")).toMatchObject({
      kind: "file",
      action: { kind: "complete", agent: "worker", context: { macp_summary: "done", macp_output: "42", macp_session_id: "s-1" } },
    });
    const failed = open(
      requested({ activeAssignee: "worker", terminal: { kind: "fail", assignee: "worker", atMs: T0, errorCode: "E", reason: "boom" } }),
    );
    expect(planFor(rec({ status: "accepted", to_agent: "worker" }), failed, POOL)).toMatchObject({
      kind: "file",
      action: { kind: "fail", context: { macp_error_code: "E", macp_reason: "boom" } },
    });
  });

  it("lets binary or large outputs stay in MACP only", () => {
    const big = open(
      requested({
        activeAssignee: "worker",
        terminal: { kind: "complete", assignee: "worker", atMs: T0, summary: "s", output: new Uint8Array([0xff, 0xfe]) },
      }),
    );
    const p = planFor(rec({ status: "accepted", to_agent: "worker" }), big, POOL);
    expect(p.kind === "file" && p.action.kind === "complete" && p.action.context).toEqual({ macp_summary: "s" });
  });
});

describe("disagreements: the file wins in a new session", () => {
  it("the file accepted by one agent while another accepted over MACP", () => {
    const p = planFor(rec({ status: "accepted", to_agent: "filer" }), open(requested({ activeAssignee: "worker" })), POOL);
    expect(p).toEqual({
      kind: "new-epoch",
      reason: "accepted by filer in the file and by worker over MACP; the file wins",
      cancelCurrent: true,
    });
  });

  it("the file accepted by an agent who is not in the session", () => {
    const p = planFor(rec({ status: "accepted", to_agent: "outsider" }), open(requested()), POOL);
    expect(p).toMatchObject({ kind: "new-epoch", cancelCurrent: true, reason: "outsider is not a participant of the current session" });
  });

  it("an expired session is replaced; one cancelled on the MACP side waits for the file to change", () => {
    expect(planFor(rec(), open(requested(), { state: "EXPIRED" }), POOL)).toMatchObject({ kind: "new-epoch", cancelCurrent: false });
    expect(planFor(rec(), open(requested(), { state: "CANCELLED" }), POOL)).toMatchObject({ kind: "parked" });
  });

  it("a session report older than the file's last change belongs to an earlier round", () => {
    // Failed over MACP at 10:05, then (while the bridge was down) re-offered and accepted again by the same agent at 11:00.
    const stale = open(
      requested({ activeAssignee: "worker", terminal: { kind: "fail", assignee: "worker", atMs: T0, errorCode: "", reason: "" } }),
    );
    const again = rec({ status: "accepted", to_agent: "worker", updated_at: "2026-11-20T11:00:00Z" });
    expect(planFor(again, stale, POOL)).toMatchObject({ kind: "new-epoch", cancelCurrent: true });
    // The same report after the file's last change is a result to write into the file.
    expect(planFor(rec({ status: "accepted", to_agent: "worker" }), stale, POOL)).toMatchObject({ kind: "file", action: { kind: "fail" } });
  });

  it("a re-offer after a failure opens a new session (a session carries one task)", () => {
    const failedDone = open(
      requested({ activeAssignee: "worker", terminal: { kind: "fail", assignee: "worker", atMs: T0, errorCode: "", reason: "" } }),
      {
        state: "RESOLVED",
        commitmentAction: "task.failed",
      },
    );
    expect(planFor(rec(), failedDone, POOL)).toMatchObject({ kind: "new-epoch", cancelCurrent: false });
  });
});
