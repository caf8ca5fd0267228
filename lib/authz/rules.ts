// The rules table: every action people can take, and the lowest console
// role that may attempt each one (roles.ts). What the protocol allows on top
// of that is decided in session-rules.ts and file-rules.ts; decide.ts is the
// one entry point.
import type { Role } from "@/lib/authz/roles";

export const ACTIONS = [
  "view",
  "startSession",
  "offer",
  "attachContext",
  "accept",
  "decline",
  "commit",
  "cancel",
  "taskRequest",
  "taskAccept",
  "taskReject",
  "taskUpdate",
  "taskComplete",
  "taskFail",
  "runDemo",
  "manageUsers",
  "managePolicies",
  "manageHandoffTemplates",
  "escalate",
  "cancelEscalation",
] as const;

/**
 * Actions on v0.1 file-based handoffs (lib/handoff-files): the same roles as
 * the MACP task actions, decided on the file's last valid snapshot
 * (`DecideContext.file`) instead of a session view. Kept out of ACTIONS, which
 * is the session toolbar's list (decideAll).
 */
export const FILE_ACTIONS = ["fileOffer", "fileAccept", "fileReject", "fileComplete", "fileFail", "fileReoffer"] as const;
export type FileAction = (typeof FILE_ACTIONS)[number];
export type Action = (typeof ACTIONS)[number] | FileAction;

export function isAction(value: unknown): value is Action {
  return typeof value === "string" && ((ACTIONS as readonly string[]).includes(value) || isFileAction(value));
}

export function isFileAction(value: unknown): value is FileAction {
  return typeof value === "string" && (FILE_ACTIONS as readonly string[]).includes(value);
}

/** Lowest role that may attempt each action at all. */
export const MINIMUM_ROLE: Readonly<Record<Action, Role>> = Object.freeze({
  view: "viewer",
  startSession: "operator",
  offer: "operator",
  attachContext: "operator",
  accept: "operator",
  decline: "operator",
  commit: "operator",
  cancel: "operator",
  taskRequest: "operator",
  taskAccept: "operator",
  taskReject: "operator",
  taskUpdate: "operator",
  taskComplete: "operator",
  taskFail: "operator",
  runDemo: "admin",
  manageUsers: "admin",
  managePolicies: "admin",
  /** One's own saved "Hand off…" templates: whoever may start a handoff. */
  manageHandoffTemplates: "operator",
  /** Escalate one's own pending offer (the console then acts for the owner while it is unanswered). */
  escalate: "operator",
  /** Stop an escalation: its owner, or an admin (DecideContext.escalation). */
  cancelEscalation: "operator",
  fileOffer: "operator",
  fileAccept: "operator",
  fileReject: "operator",
  fileComplete: "operator",
  fileFail: "operator",
  fileReoffer: "operator",
});

/** Action families, for the mode check. */
export const HANDOFF_ACTIONS: ReadonlySet<Action> = new Set<Action>(["offer", "attachContext", "accept", "decline", "escalate"]);
export const TASK_ACTIONS: ReadonlySet<Action> = new Set<Action>([
  "taskRequest",
  "taskAccept",
  "taskReject",
  "taskUpdate",
  "taskComplete",
  "taskFail",
]);
export const GLOBAL_ACTIONS: ReadonlySet<Action> = new Set<Action>([
  "view",
  "startSession",
  "runDemo",
  "manageUsers",
  "managePolicies",
  "manageHandoffTemplates",
  "cancelEscalation",
]);
