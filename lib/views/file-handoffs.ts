// v0.1 file handoffs in the browser, as pure data: the status pill's
// vocabulary, how a timeline step reads, deep links, the list filter in the
// URL, and what an action's answer means (a lost race is its own outcome:
// "someone else changed it: reload", never a silent overwrite).

import { Code, ConnectError } from "@connectrpc/connect";
import { outcomeOfError, type ActionOutcome } from "@/lib/views/action-attempt";

export {
  FILE_STATUSES,
  FILE_STATUS_INFO,
  INVALID_INFO,
  REMOVED_INFO,
  V01_MODE_LABEL,
  fileBadge,
  fileHref,
  isFileStatus,
  type FileStatus,
} from "@/lib/views/file-pill";
import { isFileStatus, type FileStatus } from "@/lib/views/file-pill";

/** How one timeline entry moved the status, in words. */
export function stepSentence(e: {
  kind: string;
  valid: boolean;
  status: string;
  previousStatus: string;
  step: string;
  problem: string;
}): string {
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

export const STEP_LABEL: Readonly<Record<string, string>> = Object.freeze({
  first: "first",
  same: "same status",
  legal: "legal",
  gap: "gap",
  illegal: "illegal",
});

function cap(s: string): string {
  return s ? s.charAt(0).toUpperCase() + s.slice(1) : "Unknown";
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
  Exclude<ActionOutcome, { kind: "ok" }> | { kind: "ok"; duplicate: boolean } | { kind: "conflict"; message: string; foreign: boolean };

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
