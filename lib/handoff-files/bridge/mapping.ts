// The mapping between one v0.1 handoff file and MACP Task-mode sessions,
// as pure functions: which session (ids derived from the task_id and an
// epoch), and what to do next given the file and the session as they are.
//
//   file                      MACP (Task mode, one session per epoch)
//   offered                   SessionStart + TaskRequest, sent as from_agent
//                             (task_id and context_id = the v0.1 task_id,
//                             requested_assignee = to_agent, input = context as JSON)
//   accepted (to_agent A)     TaskAccept sent as A
//   completed                 TaskComplete sent as A, then Commitment task.completed as from_agent
//   failed                    TaskFail (retryable) sent as A, then Commitment task.failed as from_agent
//   rejected                  TaskReject sent as A (when known), then CancelSession as from_agent
//   failed → offered          a new session (next epoch): Task mode carries one task per session
//
// And back: a TaskAccept/TaskReject/TaskComplete/TaskFail from an MACP agent
// becomes accept/reject/complete/fail in the file (results in context.macp_*).
// When the two sides disagree (e.g. the file was accepted by X while an
// MACP agent accepted as Y), the file wins: the session is cancelled and a
// new epoch replays the file's state.

import { createHmac } from "node:crypto";
import type { HandoffAction } from "../state-machine";
import { isoToMs, type HandoffRecord } from "../record";

/** Message ids of the bridge's envelopes: one per step and session, so a resend is a duplicate. */
export const BRIDGE_MESSAGE_PREFIX = "handoff-files:";

export function bridgeMessageId(step: BridgeStep["kind"]): string {
  return `${BRIDGE_MESSAGE_PREFIX}${step}`;
}

/**
 * The session of `taskId`'s epoch `epoch` in directory `dir`: a UUID v4
 * (valid for SessionStart) from an HMAC keyed by the bridge's secret, so it
 * is the same after a restart and unguessable without the secret.
 */
export function bridgeSessionId(secret: Uint8Array, dir: string, taskId: string, epoch: number): string {
  const b = createHmac("sha256", secret).update(`session\n${dir}\n${taskId}\n${epoch}`).digest().subarray(0, 16);
  b[6] = ((b[6] as number) & 0x0f) | 0x40;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The commitment id of a session's Commitment (stable across resends). */
export function bridgeCommitmentId(secret: Uint8Array, sessionId: string): string {
  return bridgeSessionId(secret, "commitment", sessionId, 0);
}

export type SessionPhase = "OPEN" | "SUSPENDED" | "RESOLVED" | "EXPIRED" | "CANCELLED";

/** What the bridge knows about the current epoch's session. */
export interface SessionView {
  exists: boolean;
  state?: SessionPhase;
  initiator?: string;
  participants: readonly string[];
  task?: {
    requestedAssignee: string;
    activeAssignee?: string;
    rejections: readonly { assignee: string; reason: string }[];
    /** The TaskComplete or TaskFail; `atMs` is its envelope time. */
    terminal?: ({ kind: "complete"; summary: string; output: Uint8Array } | { kind: "fail"; errorCode: string; reason: string }) & {
      assignee: string;
      atMs: number;
    };
  };
  commitmentAction?: string;
}

export type BridgeStep =
  | { kind: "start"; participants: readonly string[] }
  | { kind: "request"; requestedAssignee: string }
  | { kind: "accept"; as: string }
  | { kind: "reject"; as: string }
  | { kind: "complete"; as: string }
  | { kind: "fail"; as: string }
  | { kind: "commit"; action: "task.completed" | "task.failed" }
  | { kind: "cancel"; reason: string };

export type Plan =
  /** Nothing to do; `done` when the file is final and fully mirrored. */
  | { kind: "idle"; done: boolean }
  /** Send these envelopes, in order, on the current session. */
  | { kind: "send"; steps: BridgeStep[] }
  /** Write an MACP result into the file. */
  | { kind: "file"; action: HandoffAction; why: string }
  /** Start over in a new session (cancelling the current one first when it is open). */
  | { kind: "new-epoch"; reason: string; cancelCurrent: boolean }
  /** The session was cancelled on the MACP side: wait until the file changes. */
  | { kind: "parked"; reason: string }
  /** Cannot be mirrored as it is; the reason is shown. */
  | { kind: "blocked"; reason: string };

/** Who takes part in a handoff's session: from_agent, to_agent when set, and the bridge's pool. */
export function participantsFor(rec: HandoffRecord, pool: readonly string[]): string[] {
  return [...new Set([rec.from_agent, ...(rec.to_agent ? [rec.to_agent] : []), ...pool].map((p) => p.trim()).filter((p) => p !== ""))];
}

/** The steps that bring a fresh session to the file's state. */
function fromScratch(rec: HandoffRecord, participants: readonly string[]): BridgeStep[] | string {
  const a = rec.to_agent;
  const steps: BridgeStep[] = [
    { kind: "start", participants },
    // Beyond `offered` only to_agent may take it, so no MACP agent can slip in between.
    { kind: "request", requestedAssignee: a },
  ];
  switch (rec.status) {
    case "offered":
      return steps;
    case "accepted":
    case "completed":
    case "failed":
      if (!a) return `it is ${rec.status} but to_agent is empty, so MACP cannot be told who took it`;
      steps.push({ kind: "accept", as: a });
      if (rec.status === "completed") steps.push({ kind: "complete", as: a }, { kind: "commit", action: "task.completed" });
      if (rec.status === "failed") steps.push({ kind: "fail", as: a }, { kind: "commit", action: "task.failed" });
      return steps;
    case "rejected":
      if (a) steps.push({ kind: "reject", as: a });
      steps.push({ kind: "cancel", reason: `v0.1 handoff ${rec.task_id} was rejected${a ? ` by ${a}` : ""}` });
      return steps;
  }
}

/** Whether a session that has ended already shows the file's (final) state. */
function mirroredFinal(rec: HandoffRecord, view: SessionView): boolean {
  const t = view.task;
  switch (rec.status) {
    case "completed":
      return view.commitmentAction === "task.completed" && t?.terminal?.kind === "complete";
    case "failed":
      return view.commitmentAction === "task.failed" && t?.terminal?.kind === "fail";
    case "rejected":
      return (
        t !== undefined && t.activeAssignee === undefined && (rec.to_agent === "" || t.rejections.some((r) => r.assignee === rec.to_agent))
      );
    default:
      return false;
  }
}

function macpContext(entries: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(entries)) if (v !== undefined && v !== "") out[k] = v;
  return out;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });
/** An output as text for the file's context, when it is UTF-8 and at most 64 KiB. */
function outputText(bytes: Uint8Array): string | undefined {
  if (bytes.length === 0 || bytes.length > 64 * 1024) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * What to do next for a handoff whose file is `rec` and whose current
 * session is `view`, with `pool` the MACP agents that may take open offers.
 */
export function planFor(rec: HandoffRecord, view: SessionView, pool: readonly string[], sessionId = ""): Plan {
  const participants = participantsFor(rec, pool);
  if (participants.length < 2) {
    return {
      kind: "blocked",
      reason: "nobody on the MACP side may take it: it is offered to anyone and the bridge has no participants (--participants)",
    };
  }
  if (!view.exists) {
    const steps = fromScratch(rec, participants);
    return typeof steps === "string" ? { kind: "blocked", reason: steps } : { kind: "send", steps };
  }
  const open = view.state === "OPEN";
  if (view.initiator !== undefined && view.initiator !== rec.from_agent) {
    return { kind: "new-epoch", reason: `from_agent changed to ${rec.from_agent}`, cancelCurrent: open };
  }
  if (rec.to_agent && !view.participants.includes(rec.to_agent)) {
    return { kind: "new-epoch", reason: `${rec.to_agent} is not a participant of the current session`, cancelCurrent: open };
  }
  if (!open) {
    if (mirroredFinal(rec, view)) return { kind: "idle", done: true };
    if (view.state === "SUSPENDED") return { kind: "blocked", reason: "the session is suspended; resume it to continue mirroring" };
    if (view.state === "CANCELLED" && (rec.status === "offered" || rec.status === "accepted")) {
      return { kind: "parked", reason: "the session was cancelled on the MACP side; mirroring resumes when the file changes" };
    }
    return {
      kind: "new-epoch",
      reason:
        view.state === "EXPIRED" ? "the session expired" : `the session ended (${view.state ?? "unknown"}) but the file is ${rec.status}`,
      cancelCurrent: false,
    };
  }
  const t = view.task;
  if (!t) {
    const steps = fromScratch(rec, participants);
    return typeof steps === "string" ? { kind: "blocked", reason: steps } : { kind: "send", steps: steps.slice(1) };
  }
  const a = rec.to_agent;
  const contextId = sessionId ? { macp_session_id: sessionId } : {};
  // A report in the session that is older than the file's last status change belongs to an
  // earlier round (the file was failed and re-offered while the bridge was not looking).
  const fileMs = isoToMs(rec.updated_at);
  if ((rec.status === "offered" || rec.status === "accepted") && t.terminal && fileMs !== undefined && fileMs > t.terminal.atMs) {
    return {
      kind: "new-epoch",
      reason: `the file is ${rec.status} again after the session's ${t.terminal.kind === "complete" ? "completion" : "failure"}`,
      cancelCurrent: true,
    };
  }
  switch (rec.status) {
    case "offered": {
      if (t.requestedAssignee !== a) return { kind: "new-epoch", reason: `the offer now goes to ${a || "anyone"}`, cancelCurrent: true };
      if (t.activeAssignee)
        return { kind: "file", action: { kind: "accept", agent: t.activeAssignee }, why: `${t.activeAssignee} accepted over MACP` };
      const rejection = t.rejections[0];
      if (rejection) {
        return {
          kind: "file",
          action: { kind: "reject", agent: rejection.assignee, context: macpContext({ ...contextId, macp_reason: rejection.reason }) },
          why: `${rejection.assignee} rejected over MACP`,
        };
      }
      return { kind: "idle", done: false };
    }
    case "accepted": {
      if (!a) return { kind: "blocked", reason: "it is accepted but to_agent is empty, so MACP cannot be told who took it" };
      if (!t.activeAssignee) {
        if (t.rejections.length)
          return { kind: "new-epoch", reason: `accepted by ${a} in the file after a rejection over MACP`, cancelCurrent: true };
        return { kind: "send", steps: [{ kind: "accept", as: a }] };
      }
      if (t.activeAssignee !== a)
        return {
          kind: "new-epoch",
          reason: `accepted by ${a} in the file and by ${t.activeAssignee} over MACP; the file wins`,
          cancelCurrent: true,
        };
      const r = t.terminal;
      if (r?.kind === "complete") {
        return {
          kind: "file",
          action: {
            kind: "complete",
            agent: a,
            context: macpContext({ ...contextId, macp_summary: r.summary, macp_output: outputText(r.output) }),
          },
          why: `${a} completed it over MACP`,
        };
      }
      if (r?.kind === "fail") {
        return {
          kind: "file",
          action: { kind: "fail", agent: a, context: macpContext({ ...contextId, macp_error_code: r.errorCode, macp_reason: r.reason }) },
          why: `${a} reported failure over MACP`,
        };
      }
      return { kind: "idle", done: false };
    }
    case "completed":
    case "failed": {
      if (!a) return { kind: "blocked", reason: `it is ${rec.status} but to_agent is empty, so MACP cannot be told who took it` };
      const steps: BridgeStep[] = [];
      if (!t.activeAssignee) {
        if (t.rejections.length)
          return { kind: "new-epoch", reason: `${rec.status} in the file after a rejection over MACP`, cancelCurrent: true };
        steps.push({ kind: "accept", as: a });
      } else if (t.activeAssignee !== a) {
        return {
          kind: "new-epoch",
          reason: `${rec.status} by ${a} in the file but accepted by ${t.activeAssignee} over MACP; the file wins`,
          cancelCurrent: true,
        };
      }
      const want = rec.status === "completed" ? "complete" : "fail";
      if (!t.terminal) steps.push({ kind: want, as: a });
      else if (t.terminal.kind !== want) {
        return {
          kind: "new-epoch",
          reason: `${rec.status} in the file but ${t.terminal.kind === "complete" ? "completed" : "failed"} over MACP; the file wins`,
          cancelCurrent: true,
        };
      }
      if (view.commitmentAction === undefined)
        steps.push({ kind: "commit", action: rec.status === "completed" ? "task.completed" : "task.failed" });
      return steps.length ? { kind: "send", steps } : { kind: "idle", done: true };
    }
    case "rejected": {
      if (t.activeAssignee)
        return {
          kind: "new-epoch",
          reason: `rejected in the file but accepted by ${t.activeAssignee} over MACP; the file wins`,
          cancelCurrent: true,
        };
      const steps: BridgeStep[] = [];
      if (a && !t.rejections.some((r) => r.assignee === a)) steps.push({ kind: "reject", as: a });
      steps.push({ kind: "cancel", reason: `v0.1 handoff ${rec.task_id} was rejected${a ? ` by ${a}` : ""}` });
      return { kind: "send", steps };
    }
  }
}
