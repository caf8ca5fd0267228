// People's actions on v0.1 handoff files (FileHandoffService's Offer and
// ActOn, after the sign-in and CSRF check in file-routes.ts): decide() (roles
// and authority, lib/authz) and the library's state machine (refusalFor),
// then a compare-and-swap write under the shared lock, only if the file is
// still the snapshot the person saw (expect_hash). A retry of an action that
// went through is answered as a duplicate; a lost race is a conflict. The
// person's participant id is what goes into from_agent / to_agent.
import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { decide, type FileAction } from "@/lib/authz/decide";
import { FileActionResultSchema, type FileActionResult } from "@/lib/gen/baton/v1/files_pb";
import {
  HandoffError,
  refusalFor,
  type HandoffAction,
  type HandoffRecord,
  type HandoffSummary,
  type Snapshot,
  type ValidSnapshot,
} from "@/lib/handoff-files";
import type { SignedInUser } from "./identity";
import { fileError } from "./file-errors";
import type { FileHandoffs, WatchedDirectory } from "./file-handoffs";
import type { FileActInput, FileOfferInput } from "./file-input";

/** What an action needs of the request beyond its input. */
export interface FileActContext {
  files: FileHandoffs;
  d: WatchedDirectory;
  user: SignedInUser;
  /** Display names for decide()'s reasons (read from the users file when needed). */
  namesOf: () => Promise<(id: string) => string>;
  /** One audit log line per attempt. */
  audit: (user: SignedInUser, action: string, dir: string, taskId: string, outcome: string) => void;
}

const FILE_ACTION: Readonly<Record<FileActInput["kind"], FileAction>> = Object.freeze({
  accept: "fileAccept",
  reject: "fileReject",
  complete: "fileComplete",
  fail: "fileFail",
  reoffer: "fileReoffer",
});

/** The task_id of an offer, the same for every retry of one attempt (UUID v4 layout). */
export function taskIdForOffer(participantId: string, messageId: string): string {
  const h = createHash("sha256").update("baton file offer\u0000").update(participantId).update("\u0000").update(messageId).digest();
  h[6] = ((h[6] as number) & 0x0f) | 0x40;
  h[8] = ((h[8] as number) & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The library action for a person's request: their participant id is the acting agent. */
export function libraryAction(input: Pick<FileActInput, "kind" | "context" | "toAgent">, me: string): HandoffAction {
  const context = Object.keys(input.context).length > 0 ? { context: input.context } : {};
  switch (input.kind) {
    case "accept":
      return { kind: "accept", agent: me };
    case "reject":
      return { kind: "reject", agent: me, ...context };
    case "complete":
      return { kind: "complete", agent: me, ...context };
    case "fail":
      return { kind: "fail", agent: me, ...context };
    case "reoffer":
      return { kind: "reoffer", agent: me, to: input.toAgent, ...context };
  }
}

/** A new handoff file offered by the signed-in person. */
export async function offerFile(c: FileActContext, input: FileOfferInput): Promise<FileActionResult> {
  const { files, d, user, audit } = c;
  const nameOf = await c.namesOf();
  const decision = decide(user, undefined, "fileOffer", { fileOffer: { toAgent: input.toAgent }, nameOf });
  if (!decision.allowed) throw new ConnectError(decision.reason, Code.PermissionDenied, { "x-baton-deny": decision.code });
  const taskId = taskIdForOffer(user.participantId, input.messageId);
  try {
    const w = await d.directory.offer({
      description: input.description,
      from: user.participantId,
      to: input.toAgent,
      context: input.context,
      taskId,
    });
    files.recordSnapshot(d.path, w.snapshot);
    audit(user, "fileOffer", d.path, taskId, "ok");
    return resultFor(files, d, w.snapshot, false, undefined);
  } catch (e) {
    if (e instanceof HandoffError && e.kind === "exists") {
      // A retry of the same attempt: the file this attempt made is there already.
      const there = await d.directory.read(`${taskId}.json`);
      if (there?.valid && there.record.from_agent === user.participantId) {
        audit(user, "fileOffer", d.path, taskId, "duplicate");
        return resultFor(files, d, there, true, undefined);
      }
    }
    audit(user, "fileOffer", d.path, taskId, e instanceof HandoffError ? e.kind : "error");
    throw fileError(e);
  }
}

/** Accept, reject, complete, fail or re-offer a handoff the person saw as `input.expectHash`. */
export async function actOnFile(c: FileActContext, input: FileActInput, signal: AbortSignal): Promise<FileActionResult> {
  const { files, d, user, audit } = c;
  const name = `${input.taskId}.json`;
  const me = user.participantId;
  const action = FILE_ACTION[input.kind];
  let current: Snapshot | undefined;
  try {
    current = await d.directory.read(name);
  } catch (e) {
    throw fileError(e);
  }
  if (!current) throw new ConnectError(`There is no handoff ${input.taskId} in ${d.path} (the file was removed).`, Code.NotFound);
  if (current.hash !== input.expectHash) {
    // A retry of a request that went through: the file went straight from
    // what the person saw to what this action makes.
    if (
      current.valid &&
      looksLikeMine(current.record, input.kind, me, input.toAgent) &&
      wentStraightFrom(files, d.path, current, input.expectHash)
    ) {
      audit(user, action, d.path, input.taskId, "duplicate");
      return resultFor(files, d, current, true, undefined);
    }
    files.recordSnapshot(d.path, current);
    audit(user, action, d.path, input.taskId, "conflict");
    throw fileError(new HandoffError("conflict", `${input.taskId}: ${describeNow(current)}`));
  }
  if (!current.valid)
    throw fileError(new HandoffError("invalid", `${name} is not a valid v0.1 handoff, so Baton leaves it alone: ${current.reason}`));
  const recorded = d.directory.recordedProblem(current);
  if (recorded !== undefined)
    throw fileError(new HandoffError("invalid", `${name} is not a valid v0.1 handoff, so Baton leaves it alone: ${recorded}`));
  const nameOf = await c.namesOf();
  const decision = decide(user, undefined, action, {
    file: {
      present: true,
      valid: true,
      status: current.record.status,
      fromAgent: current.record.from_agent,
      toAgent: current.record.to_agent,
    },
    nameOf,
  });
  if (!decision.allowed) {
    audit(user, action, d.path, input.taskId, `denied:${decision.code}`);
    throw new ConnectError(decision.reason, Code.PermissionDenied, { "x-baton-deny": decision.code });
  }
  const lib = libraryAction(input, me);
  const refusal = refusalFor(current.record, lib);
  if (refusal !== undefined) throw new ConnectError(refusal, Code.FailedPrecondition, { "x-baton-file": "illegal-transition" });
  try {
    const w = await d.directory.act(current, lib, { expectHash: input.expectHash, signal });
    files.recordSnapshot(d.path, w.snapshot);
    let foreign: string | undefined;
    if (w.replacedBy !== undefined) {
      foreign =
        w.replacedBy === null
          ? "The file was removed right after Baton wrote it."
          : `Another program replaced Baton's write right after it: ${describeNow(w.replacedBy)}.`;
      if (w.replacedBy) files.recordSnapshot(d.path, w.replacedBy);
    }
    audit(user, action, d.path, input.taskId, foreign ? "replaced-by-foreign-writer" : "ok");
    return resultFor(files, d, w.snapshot, false, foreign);
  } catch (e) {
    if (e instanceof HandoffError && (e.kind === "conflict" || e.kind === "foreign-writer")) {
      const again = await d.directory.read(name).catch(() => undefined);
      if (again) files.recordSnapshot(d.path, again);
    }
    audit(user, action, d.path, input.taskId, e instanceof HandoffError ? e.kind : "error");
    throw fileError(e);
  }
}

/** Would `record` be the result of `kind` by `me` on a snapshot (status and who)? */
function looksLikeMine(record: HandoffRecord, kind: FileActInput["kind"], me: string, toAgent: string): boolean {
  switch (kind) {
    case "accept":
      return record.status === "accepted" && record.to_agent === me;
    case "reject":
      return record.status === "rejected" && record.to_agent === me;
    case "complete":
      return record.status === "completed" && record.to_agent === me;
    case "fail":
      return record.status === "failed" && record.to_agent === me;
    case "reoffer":
      return record.status === "offered" && record.from_agent === me && record.to_agent === toAgent;
  }
}

function describeNow(s: Snapshot): string {
  if (!s.valid) return `it is no longer a valid handoff (${s.reason})`;
  const r = s.record;
  return `it is ${r.status}${r.to_agent ? ` (${r.to_agent})` : ""} now`;
}

/** The history shows the file went from `fromHash` directly to `current` (one recorded step). */
function wentStraightFrom(files: FileHandoffs, dir: string, current: ValidSnapshot, fromHash: string): boolean {
  const s = files.history.find(dir, current.name);
  if (!s || s.hash !== current.hash || s.snapshots < 2) return false;
  const last2 = files.history.history(s.id, { cursor: String(s.snapshots - 2), limit: 2 }).items;
  return last2.length === 2 && last2[0]?.hash === fromHash && last2[1]?.hash === current.hash;
}

function resultFor(
  files: FileHandoffs,
  d: WatchedDirectory,
  snap: ValidSnapshot,
  duplicate: boolean,
  foreign: string | undefined,
): FileActionResult {
  const s: HandoffSummary | undefined = files.history.find(d.path, snap.name);
  return create(FileActionResultSchema, {
    ...(s ? { handoff: files.toProto(s) } : {}),
    duplicate,
    foreignWriter: foreign ?? "",
  });
}
