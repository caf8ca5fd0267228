// Validation of FileHandoffService requests at the edge (proto/baton/v1/
// files.proto), before any file is read or written. Pure: each function takes
// the request and returns clean values or throws INVALID_ARGUMENT naming the
// field (with a FieldViolation detail, like action-input.ts).
import {
  FileHandoffAction,
  type ActOnFileHandoffRequest,
  type GetFileHandoffRequest,
  type ListFileHandoffsRequest,
  type OfferFileHandoffRequest,
} from "@/lib/gen/baton/v1/files_pb";
import type { ActionKind, HandoffStatus } from "@/lib/handoff-files";
import { isHandoffStatus } from "@/lib/handoff-files/record";
import { invalidField, messageIdOf, participantOf, textOf } from "./action-input";

export const FILE_LIMITS = Object.freeze({
  description: 10_000,
  contextEntries: 32,
  contextKey: 64,
  contextValue: 2_000,
  taskId: 200,
  listDefault: 50,
  listMax: 200,
  timelineDefault: 200,
  timelineMax: 1_000,
});

const DIR_KEY = /^[0-9a-f]{12}$/;
const HASH = /^[0-9a-f]{64}$/;
const CURSOR = /^\d{1,16}\.\d{1,16}$/;
const CONTEXT_KEY = /^[A-Za-z0-9_][A-Za-z0-9_.:-]*$/;
// Control characters other than tab, newline and carriage return.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

export function dirKeyOf(raw: string, required = true): string {
  const key = raw.trim();
  if (key === "") {
    if (required) throw invalidField("dir_key", "is required");
    return "";
  }
  if (!DIR_KEY.test(key)) throw invalidField("dir_key", "must be a directory key like 3f2a9c01b4de (12 hex characters)");
  return key;
}

/** The file name's stem (the task_id of a valid file): what a v0.1 file can be called, without path tricks. */
export function taskIdOf(raw: string): string {
  const id = raw.trim();
  if (id === "") throw invalidField("task_id", "is required");
  if (id.length > FILE_LIMITS.taskId) throw invalidField("task_id", `is longer than ${FILE_LIMITS.taskId} characters`);
  if (id.startsWith(".") || /[/\\\u0000-\u001f\u007f]/.test(id)) {
    throw invalidField("task_id", "must be a handoff's task id (no slashes, no control characters, not starting with a dot)");
  }
  return id;
}

export function statusOf(raw: string): HandoffStatus | "" {
  const s = raw.trim();
  if (s === "") return "";
  if (!isHandoffStatus(s))
    throw invalidField("status", `must be one of offered, accepted, completed, failed, rejected; got "${s.slice(0, 40)}"`);
  return s;
}

export function contextOf(raw: Readonly<Record<string, string>>): Record<string, string> {
  const entries = Object.entries(raw);
  if (entries.length > FILE_LIMITS.contextEntries)
    throw invalidField("context", `has ${entries.length} entries; at most ${FILE_LIMITS.contextEntries} are allowed`);
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [k, v] of entries) {
    const key = k.trim();
    if (key === "") throw invalidField("context", "has an empty key");
    if (key.length > FILE_LIMITS.contextKey || !CONTEXT_KEY.test(key)) {
      throw invalidField(
        "context",
        `key "${key.slice(0, 40)}" must be 1–${FILE_LIMITS.contextKey} letters, digits, _ . : - (starting with a letter, digit or _)`,
      );
    }
    if (key === "__proto__") throw invalidField("context", `key "${key}" is not allowed`);
    if (v.length > FILE_LIMITS.contextValue)
      throw invalidField("context", `value of "${key}" is ${v.length} characters; at most ${FILE_LIMITS.contextValue} are allowed`);
    if (CONTROL.test(v)) throw invalidField("context", `value of "${key}" contains control characters`);
    out[key] = v;
  }
  return out;
}

export interface ListInput {
  status: HandoffStatus | "";
  dirKey: string;
  toAgent: string;
  waitingOnMe: boolean;
  limit: number;
  cursor: string;
}

export function parseList(req: ListFileHandoffsRequest): ListInput {
  const limit = req.limit === 0 ? FILE_LIMITS.listDefault : req.limit;
  if (limit > FILE_LIMITS.listMax) throw invalidField("limit", `must be at most ${FILE_LIMITS.listMax}`);
  const cursor = req.cursor.trim();
  if (cursor !== "" && !CURSOR.test(cursor))
    throw invalidField("cursor", "is not a cursor this console gave out; start from the first page");
  return {
    status: statusOf(req.status),
    dirKey: dirKeyOf(req.dirKey, false),
    toAgent: participantOf("to_agent", req.toAgent, false),
    waitingOnMe: req.waitingOnMe,
    limit,
    cursor,
  };
}

export interface GetInput {
  dirKey: string;
  taskId: string;
  afterSeq: number;
  limit: number;
}

export function parseGet(req: GetFileHandoffRequest): GetInput {
  const limit = req.limit === 0 ? FILE_LIMITS.timelineDefault : req.limit;
  if (limit > FILE_LIMITS.timelineMax) throw invalidField("limit", `must be at most ${FILE_LIMITS.timelineMax}`);
  return { dirKey: dirKeyOf(req.dirKey), taskId: taskIdOf(req.taskId), afterSeq: req.afterSeq, limit };
}

export interface FileOfferInput {
  dirKey: string;
  description: string;
  toAgent: string;
  context: Record<string, string>;
  messageId: string;
}

export function parseFileOffer(req: OfferFileHandoffRequest): FileOfferInput {
  return {
    dirKey: dirKeyOf(req.dirKey),
    description: textOf("description", req.description, { required: true, max: FILE_LIMITS.description, multiline: true }),
    toAgent: participantOf("to_agent", req.toAgent, false),
    context: contextOf(req.context),
    messageId: messageIdOf(req.messageId),
  };
}

const ACTION_KINDS: Readonly<Partial<Record<FileHandoffAction, ActionKind>>> = Object.freeze({
  [FileHandoffAction.ACCEPT]: "accept",
  [FileHandoffAction.REJECT]: "reject",
  [FileHandoffAction.COMPLETE]: "complete",
  [FileHandoffAction.FAIL]: "fail",
  [FileHandoffAction.REOFFER]: "reoffer",
});

export interface FileActInput {
  dirKey: string;
  taskId: string;
  kind: ActionKind;
  expectHash: string;
  context: Record<string, string>;
  toAgent: string;
}

export function parseFileAct(req: ActOnFileHandoffRequest): FileActInput {
  const kind = ACTION_KINDS[req.action];
  if (kind === undefined) throw invalidField("action", "must be accept, reject, complete, fail or reoffer");
  const hash = req.expectHash.trim().toLowerCase();
  if (hash === "")
    throw invalidField("expect_hash", "is required: the hash of the snapshot you saw, so nothing you did not see is overwritten");
  if (!HASH.test(hash)) throw invalidField("expect_hash", "must be the 64-hex-character hash the console gave with the handoff");
  const context = contextOf(req.context);
  if (kind === "accept" && Object.keys(context).length > 0) throw invalidField("context", "an accept carries no context");
  const toAgent = participantOf("to_agent", req.toAgent, false);
  if (kind !== "reoffer" && toAgent !== "") throw invalidField("to_agent", "is only used when offering a handoff again");
  return { dirKey: dirKeyOf(req.dirKey), taskId: taskIdOf(req.taskId), kind, expectHash: hash, context, toAgent };
}
