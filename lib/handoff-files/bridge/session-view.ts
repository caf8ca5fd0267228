// What the bridge knows of a handoff's current session, as mapping.ts's
// planFor() reads it: the runtime's metadata and the Task-mode projection of
// its history (followed live while the session is open, mirrors.ts).
import { Code, ConnectError } from "@connectrpc/connect";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { TaskProjection, type MacpClient } from "@/lib/agent";
import type { SessionPhase, SessionView } from "./mapping";
import type { SessionMirrors } from "./mirrors";
import type { BridgeTask } from "./state";

const STATE_NAMES: Partial<Record<SessionState, SessionPhase>> = {
  [SessionState.OPEN]: "OPEN",
  [SessionState.SUSPENDED]: "SUSPENDED",
  [SessionState.RESOLVED]: "RESOLVED",
  [SessionState.EXPIRED]: "EXPIRED",
  [SessionState.CANCELLED]: "CANCELLED",
};

/** The current session as the runtime has it; an open one is followed from here on. */
export async function readSessionView(client: MacpClient, task: BridgeTask, mirrors: SessionMirrors): Promise<SessionView> {
  let meta;
  try {
    meta = await client.getSession(task.sessionId);
  } catch (e) {
    if (e instanceof ConnectError && e.code === Code.NotFound) {
      mirrors.drop(task.sessionId);
      return { exists: false, participants: [] };
    }
    throw e;
  }
  const state = STATE_NAMES[meta.state];
  let projection = mirrors.get(task.sessionId)?.projection;
  if (!projection) {
    const events = await client.history(task.sessionId);
    projection = TaskProjection.from(events);
    if (state === "OPEN") mirrors.follow(client, task.sessionId, task.taskId, projection, events.length);
  } else if (state !== "OPEN") mirrors.drop(task.sessionId);
  const t = projection.task;
  const report = projection.terminalReport();
  const view: SessionView = { exists: true, participants: meta.participants, initiator: meta.initiator };
  if (state) view.state = state;
  if (t) {
    view.task = {
      requestedAssignee: t.requestedAssignee,
      rejections: t.rejections.map((r) => ({ assignee: r.assignee, reason: r.reason })),
      ...(t.activeAssignee ? { activeAssignee: t.activeAssignee } : {}),
      ...(report
        ? {
            terminal:
              report.kind === "complete"
                ? {
                    kind: "complete" as const,
                    assignee: report.assignee,
                    atMs: report.timestampMs,
                    summary: report.summary,
                    output: report.output,
                  }
                : {
                    kind: "fail" as const,
                    assignee: report.assignee,
                    atMs: report.timestampMs,
                    errorCode: report.errorCode,
                    reason: report.reason,
                  },
          }
        : {}),
    };
  }
  const action = projection.commitment?.action;
  if (action) view.commitmentAction = action;
  return view;
}
