// The FileHandoffService's reads beyond the sign-in check (file-routes.ts):
// a page of the list (or of what waits on the signed-in person), and one
// handoff as it is now with a page of its timeline. The file is read when
// asked for and recorded first if the watcher has not got to it yet.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  FileHandoffEventSchema,
  GetFileHandoffResponseSchema,
  ListFileHandoffsResponseSchema,
  type FileHandoffEvent,
  type GetFileHandoffResponse,
  type ListFileHandoffsResponse,
} from "@/lib/gen/baton/v1/files_pb";
import { HandoffError, type HandoffStatus, type HistoryEntry, type Snapshot } from "@/lib/handoff-files";
import type { SignedInUser } from "./identity";
import { fileError } from "./file-errors";
import { fileInboxPage } from "./file-inbox";
import type { FileHandoffs, WatchedDirectory } from "./file-handoffs";
import type { GetInput, ListInput } from "./file-input";

/** Largest context JSON a page gets (the rest is cut and flagged). */
export const CONTEXT_JSON_LIMIT = 64 * 1024;
/** Largest description a page gets. */
export const DESCRIPTION_LIMIT = 20_000;

/** The timeline entries with the status each moved from. */
export function timelineOf(entries: readonly HistoryEntry[], before: HandoffStatus | undefined): FileHandoffEvent[] {
  let last = before;
  return entries.map((e) => {
    const ev = create(FileHandoffEventSchema, {
      seq: e.seq,
      observedAtUnixMs: BigInt(e.observedAtMs),
      source: e.source,
      kind: e.kind,
      valid: e.valid,
      status: e.status ?? "",
      previousStatus: e.step === "first" ? "" : (last ?? ""),
      toAgent: e.toAgent ?? "",
      step: e.step ?? "",
      problem: e.problem ?? "",
      hash: e.hash ?? "",
      size: e.size ?? 0,
    });
    if (e.kind === "removed") last = undefined;
    else if (e.valid && e.status) last = e.status;
    return ev;
  });
}

/** A page of handoffs (in `dirs`, or all watched directories). */
export function listPage(
  files: FileHandoffs,
  user: SignedInUser | null,
  input: ListInput,
  dirs: string[] | undefined,
): ListFileHandoffsResponse {
  if (input.waitingOnMe) {
    if (!user) throw new ConnectError("Sign in to see what waits on you.", Code.Unauthenticated);
    const page = fileInboxPage(files.history, user, {
      limit: input.limit,
      ...(input.cursor ? { cursor: input.cursor } : {}),
      ...(dirs ? { dirs } : {}),
    });
    return create(ListFileHandoffsResponseSchema, { handoffs: page.items.map((s) => files.toProto(s)), nextCursor: page.next });
  }
  let page;
  try {
    page = files.history.list({
      ...(dirs ? { dirs } : {}),
      ...(input.status ? { statuses: [input.status] } : {}),
      ...(input.toAgent ? { toAgentIn: [input.toAgent] } : {}),
      limit: input.limit,
      ...(input.cursor ? { cursor: input.cursor } : {}),
    });
  } catch (e) {
    if (e instanceof RangeError) throw new ConnectError(`cursor: ${e.message}`, Code.InvalidArgument);
    throw e;
  }
  return create(ListFileHandoffsResponseSchema, { handoffs: page.items.map((s) => files.toProto(s)), nextCursor: page.next ?? "" });
}

/** One handoff as it is now, with a page of its timeline after `input.afterSeq`. */
export async function handoffPage(files: FileHandoffs, d: WatchedDirectory, input: GetInput): Promise<GetFileHandoffResponse> {
  const name = `${input.taskId}.json`;
  // The file as it is now; recorded first if the watcher has not got to it yet.
  let now: Snapshot | undefined;
  try {
    now = await d.directory.read(name);
  } catch (e) {
    if (!(e instanceof HandoffError && e.kind === "not-found")) throw fileError(e);
  }
  const stored = files.history.find(d.path, name);
  if (now && (!stored || !stored.present || stored.hash !== now.hash)) files.recordSnapshot(d.path, now);
  const summary = files.history.find(d.path, name);
  if (!summary) throw new ConnectError(`There is no handoff ${input.taskId} in ${d.path}.`, Code.NotFound);

  const page = files.history.history(summary.id, { cursor: String(input.afterSeq), limit: input.limit });
  let before: HandoffStatus | undefined;
  if (input.afterSeq > 0) {
    const seedFrom = Math.max(0, input.afterSeq - 20);
    for (const e of files.history.history(summary.id, { cursor: String(seedFrom), limit: input.afterSeq - seedFrom }).items) {
      if (e.kind === "removed") before = undefined;
      else if (e.valid && e.status) before = e.status;
    }
  }
  const out = create(GetFileHandoffResponseSchema, {
    handoff: files.toProto(summary, true),
    timeline: timelineOf(page.items, before),
    nextAfterSeq: page.next ? Number(page.next) : 0,
  });
  if (now?.valid && now.hash === summary.hash) {
    const json = JSON.stringify(now.record.context, null, 2);
    out.contextTruncated = json.length > CONTEXT_JSON_LIMIT;
    out.contextJson = out.contextTruncated ? json.slice(0, CONTEXT_JSON_LIMIT) : json;
    const desc = now.record.description;
    out.description = desc.length > DESCRIPTION_LIMIT ? desc.slice(0, DESCRIPTION_LIMIT) : desc;
  } else {
    out.description = (summary.description ?? "").slice(0, DESCRIPTION_LIMIT);
    if (now && !now.valid) out.excerpt = now.excerpt ?? "";
  }
  return out;
}
