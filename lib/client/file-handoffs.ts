// v0.1 file handoffs in the browser, as pure data: the status pill's
// vocabulary, how a timeline step reads, deep links, the list filter in the
// URL, and what an action's answer means (a lost race is its own outcome:
// "someone else changed it: reload", never a silent overwrite).

import { Code, ConnectError } from "@connectrpc/connect";
import type { BadgeInfo } from "@/lib/client/labels";
import { outcomeOfError, type ActionOutcome } from "@/lib/client/action-attempt";

export const FILE_STATUSES = ["offered", "accepted", "completed", "failed", "rejected"] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

export function isFileStatus(value: unknown): value is FileStatus {
  return typeof value === "string" && (FILE_STATUSES as readonly string[]).includes(value);
}

export const FILE_STATUS_INFO: Readonly<Record<FileStatus, BadgeInfo>> = Object.freeze({
  offered: { label: "Offered", tone: "info", icon: "send", hint: "Waiting for someone to accept it (v0.1 status offered)" },
  accepted: { label: "Accepted", tone: "progress", icon: "play", hint: "Someone accepted it and is working on it (v0.1 status accepted)" },
  completed: { label: "Completed", tone: "success", icon: "check-circle", hint: "Done (v0.1 status completed; final)" },
  failed: { label: "Failed", tone: "danger", icon: "alert", hint: "Whoever took it could not finish it; it can be offered again (v0.1 status failed)" },
  rejected: { label: "Rejected", tone: "warning", icon: "x", hint: "Turned down (v0.1 status rejected; final)" },
});

export const INVALID_INFO: BadgeInfo = { label: "Invalid", tone: "danger", icon: "ban", hint: "Not a valid v0.1 handoff: Baton shows it and leaves it alone" };
export const REMOVED_INFO: BadgeInfo = { label: "Removed", tone: "muted", icon: "circle-dashed", hint: "The file was removed from the directory" };

/** The pill for a row: invalid and removed files first, else the v0.1 status. */
export function fileBadge(h: { present: boolean; valid: boolean; status: string }): BadgeInfo {
  if (!h.present) return REMOVED_INFO;
  if (!h.valid) return INVALID_INFO;
  return isFileStatus(h.status) ? FILE_STATUS_INFO[h.status] : INVALID_INFO;
}

/** The mode label shown beside MACP's "Handoff" / "Task". */
export const V01_MODE_LABEL = "v0.1 file";

/** How one timeline entry moved the status, in words. */
export function stepSentence(e: { kind: string; valid: boolean; status: string; previousStatus: string; step: string; problem: string }): string {
  if (e.kind === "removed") return "The file was removed.";
  if (!e.valid && e.step !== "illegal") return `Not a valid v0.1 handoff: ${e.problem || "unreadable"}.`;
  switch (e.step) {
    case "first":
      return `First seen as ${e.status}.`;
    case "same":
      return `Changed, still ${e.status}.`;
    case "legal":
      return `${cap(e.previousStatus)} → ${e.status}.`;
    case "gap":
      return `${cap(e.previousStatus)} → ${e.status}, with the steps in between not observed.`;
    case "illegal":
      return `${cap(e.previousStatus)} → ${e.status}: not allowed by v0.1 (${e.problem || "illegal step"}).`;
    default:
      return e.status ? `Seen as ${e.status}.` : "Changed.";
  }
}

export const STEP_LABEL: Readonly<Record<string, string>> = Object.freeze({ first: "first", same: "same status", legal: "legal", gap: "gap", illegal: "illegal" });

function cap(s: string): string {
  return s ? s.charAt(0).toUpperCase() + s.slice(1) : "Unknown";
}

/** The page of one handoff. */
export function fileHref(dirKey: string, taskId: string): string {
  return `/files/${encodeURIComponent(dirKey)}/${encodeURIComponent(taskId)}`;
}

export interface FileListFilter {
  status: FileStatus | "";
  dir: string;
}

const DIR_KEY = /^[0-9a-f]{12}$/;

/** The list's filter from the URL (unknown values are ignored). */
export function parseFileFilter(params: URLSearchParams): FileListFilter {
  const status = params.get("status") ?? "";
  const dir = params.get("dir") ?? "";
  return { status: isFileStatus(status) ? status : "", dir: DIR_KEY.test(dir) ? dir : "" };
}

export function serializeFileFilter(f: FileListFilter): string {
  const p = new URLSearchParams();
  if (f.status) p.set("status", f.status);
  if (f.dir) p.set("dir", f.dir);
  const s = p.toString();
  return s ? `?${s}` : "";
}

/** A route segment back to a task id / directory key (undefined when it cannot be one). */
export function parseFileParams(dir: string | undefined, task: string | undefined): { dirKey: string; taskId: string } | undefined {
  if (!dir || !task) return undefined;
  let dirKey: string;
  let taskId: string;
  try {
    dirKey = decodeURIComponent(dir);
    taskId = decodeURIComponent(task);
  } catch {
    return undefined;
  }
  if (!DIR_KEY.test(dirKey)) return undefined;
  if (taskId === "" || taskId.length > 200 || taskId.startsWith(".") || /[/\\\u0000-\u001f\u007f]/.test(taskId)) return undefined;
  return { dirKey, taskId };
}

/** An action's outcome on a file: a lost race or a foreign writer is `conflict` (reload), the rest as for MACP actions. */
export type FileOutcome =
  | Exclude<ActionOutcome, { kind: "ok" }>
  | { kind: "ok"; duplicate: boolean }
  | { kind: "conflict"; message: string; foreign: boolean };

export function fileOutcomeOfError(e: unknown): Exclude<FileOutcome, { kind: "ok" }> {
  const err = ConnectError.from(e);
  if (err.code === Code.Aborted && err.metadata.get("x-baton-file") !== null) {
    return { kind: "conflict", message: err.rawMessage, foreign: err.metadata.get("x-baton-file") === "foreign-writer" };
  }
  return outcomeOfError(e) as Exclude<ActionOutcome, { kind: "ok" }>;
}

/** Whether the answer is definitive (a new submit is a new attempt). */
export function isFileOutcomeDefinitive(o: FileOutcome): boolean {
  return o.kind !== "retryable";
}
