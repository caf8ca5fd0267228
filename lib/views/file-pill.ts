// The v0.1 file handoff's pill, mode label and link as pure data, with no
// Connect or protobuf-es imports: the session list's first-load code
// (components/sessions) shows file rows with them, and the /files pages
// (lib/views/file-handoffs.ts re-exports them) use the same.

import type { BadgeInfo } from "@/lib/views/labels";

export const FILE_STATUSES = ["offered", "accepted", "completed", "failed", "rejected"] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

export function isFileStatus(value: unknown): value is FileStatus {
  return typeof value === "string" && (FILE_STATUSES as readonly string[]).includes(value);
}

export const FILE_STATUS_INFO: Readonly<Record<FileStatus, BadgeInfo>> = Object.freeze({
  offered: { label: "Offered", tone: "info", icon: "send", hint: "Waiting for someone to accept it (v0.1 status offered)" },
  accepted: { label: "Accepted", tone: "progress", icon: "play", hint: "Someone accepted it and is working on it (v0.1 status accepted)" },
  completed: { label: "Completed", tone: "success", icon: "check-circle", hint: "Done (v0.1 status completed; final)" },
  failed: {
    label: "Failed",
    tone: "danger",
    icon: "alert",
    hint: "Whoever took it could not finish it; it can be offered again (v0.1 status failed)",
  },
  rejected: { label: "Rejected", tone: "warning", icon: "x", hint: "Turned down (v0.1 status rejected; final)" },
});

export const INVALID_INFO: BadgeInfo = {
  label: "Invalid",
  tone: "danger",
  icon: "ban",
  hint: "Not a valid v0.1 handoff: Baton shows it and leaves it alone",
};
export const REMOVED_INFO: BadgeInfo = {
  label: "Removed",
  tone: "muted",
  icon: "circle-dashed",
  hint: "The file was removed from the directory",
};

/** The pill for a row: invalid and removed files first, else the v0.1 status. */
export function fileBadge(h: { present: boolean; valid: boolean; status: string }): BadgeInfo {
  if (!h.present) return REMOVED_INFO;
  if (!h.valid) return INVALID_INFO;
  return isFileStatus(h.status) ? FILE_STATUS_INFO[h.status] : INVALID_INFO;
}

/** The mode label shown beside MACP's "Handoff" / "Task". */
export const V01_MODE_LABEL = "v0.1 file";

/** The page of one handoff. */
export function fileHref(dirKey: string, taskId: string): string {
  return `/files/${encodeURIComponent(dirKey)}/${encodeURIComponent(taskId)}`;
}

/** A file row of the session list: its pill, whose hint says why an invalid file is invalid. */
export function fileRowPill(f: { present: boolean; valid: boolean; status: string; problem: string }): BadgeInfo {
  const info = fileBadge(f);
  return info === INVALID_INFO && f.problem !== "" ? { ...info, hint: `Not a valid v0.1 handoff: ${f.problem}` } : info;
}

/** A file row's page (by file name: an invalid file's name need not match a task_id). */
export function fileRowHref(f: { dirKey: string; name: string }): string {
  return fileHref(f.dirKey, f.name.endsWith(".json") ? f.name.slice(0, -5) : f.name);
}

/** A file row's from_agent as shown: the person's name, else the agent id. */
export function fileFromLabel(f: { fromAgent: string; fromName: string }): string {
  return f.fromName || f.fromAgent;
}

/** A file row's to_agent as shown: the person's name, else the agent id; "anyone" when a valid offer leaves it empty. */
export function fileToLabel(f: { toAgent: string; toName: string; valid: boolean; status: string }): string {
  return f.toName || f.toAgent || (f.valid && f.status !== "" ? "anyone" : "");
}
