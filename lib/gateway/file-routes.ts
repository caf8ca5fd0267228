// FileHandoffService (proto/baton/v1/files.proto) as a plain
// `(router) => void`: v0.1 file-based handoffs in the console. Reads follow
// the same sign-in rule as the session reads; actions are those of signed-in
// people, checked like the MACP actions (action-routes.ts): sign-in and CSRF
// → input validated at the edge (file-input.ts) → the file read now →
// decide() (roles and authority, lib/authz) and the library's state machine
// (refusalFor) → a compare-and-swap write under the shared lock, only if the
// file is still the snapshot the person saw (expect_hash). A lost race is
// ABORTED ("someone else changed it: reload"), never an overwrite; a writer
// that ignores the lock is reported. The person's participant id is what
// goes into from_agent / to_agent. The watch stream ends with the sign-in
// that opened it (sign-in-streams.ts, on the whole router).
import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { decide, shortParticipantName, type FileAction } from "@/lib/authz/decide";
import {
  FileActionResultSchema,
  FileHandoffEventSchema,
  FileHandoffService,
  GetFileHandoffResponseSchema,
  GetFileHandoffSettingsResponseSchema,
  ListFileHandoffsResponseSchema,
  type FileActionResult,
  type FileHandoffEvent,
} from "@/lib/gen/baton/v1/files_pb";
import {
  HandoffError,
  refusalFor,
  type HandoffAction,
  type HandoffRecord,
  type HandoffStatus,
  type HandoffSummary,
  type HistoryEntry,
  type Snapshot,
  type ValidSnapshot,
} from "@/lib/handoff-files";
import type { Accounts } from "@/lib/accounts/accounts";
import type { SignedInUser } from "./identity";
import { fileInboxPage } from "./file-inbox";
import type { FileHandoffs, WatchedDirectory } from "./file-handoffs";
import { parseFileAct, parseFileOffer, parseGet, parseList, type FileActInput } from "./file-input";
import { silentLogger, type GatewayLogger } from "./logger";
import { requireSignedIn, signedInUser, type RequestAuthOptions } from "./request-auth";

export interface FileRoutesOptions {
  files: FileHandoffs | null;
  /** Sign-in for actions; without accounts only reads are served (and need no sign-in). */
  auth: (RequestAuthOptions & { accounts: Accounts }) | null;
  /** Reads need a signed-in viewer (BATON_REQUIRE_SIGN_IN). */
  requireSignIn: boolean;
  /** The console mirrors the directories to MACP (BATON_HANDOFF_BRIDGE). */
  bridge: boolean;
  /** Streams of the console's other services count the same way. */
  track?: <T>(stream: AsyncIterable<T>, signal: AbortSignal) => AsyncIterable<T>;
  isClosed?: () => boolean;
  logger?: GatewayLogger;
}

/** Largest context JSON a page gets (the rest is cut and flagged). */
export const CONTEXT_JSON_LIMIT = 64 * 1024;
/** Largest description a page gets. */
export const DESCRIPTION_LIMIT = 20_000;

const FILE_ACTION: Readonly<Record<FileActInput["kind"], FileAction>> = Object.freeze({
  accept: "fileAccept",
  reject: "fileReject",
  complete: "fileComplete",
  fail: "fileFail",
  reoffer: "fileReoffer",
});

/** The Connect error for a library refusal (lib/handoff-files/errors.ts). */
export function fileError(e: unknown): ConnectError {
  if (e instanceof ConnectError) return e;
  if (!(e instanceof HandoffError)) return ConnectError.from(e);
  switch (e.kind) {
    case "bad-input":
    case "ambiguous":
      return new ConnectError(e.message, Code.InvalidArgument);
    case "not-found":
      return new ConnectError(e.message, Code.NotFound);
    case "conflict":
      return new ConnectError(
        `Someone else changed this handoff since you loaded it (${e.message}). Reload to see it as it is now.`,
        Code.Aborted,
        {
          "x-baton-file": "conflict",
        },
      );
    case "foreign-writer":
    case "lock-lost":
      return new ConnectError(
        `Another program wrote this handoff while Baton was writing it, without taking the lock: ${e.message}. Nothing was overwritten; reload.`,
        Code.Aborted,
        {
          "x-baton-file": "foreign-writer",
        },
      );
    case "lock-busy":
      return new ConnectError(`${e.message}. Try again in a moment.`, Code.Unavailable);
    default:
      // illegal-transition, not-allowed, invalid, read-only, too-large, exists
      return new ConnectError(e.message, Code.FailedPrecondition, { "x-baton-file": e.kind });
  }
}

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

export function fileRoutes(options: FileRoutesOptions): (router: ConnectRouter) => void {
  const log = options.logger ?? silentLogger;
  const track = options.track ?? (<T>(s: AsyncIterable<T>) => s);
  const ensureOpen = (): FileHandoffs => {
    if (options.isClosed?.()) throw new ConnectError("the console is shutting down", Code.Unavailable);
    if (!options.files) {
      throw new ConnectError(
        "This console watches no v0.1 handoff directories: set BATON_HANDOFF_DIRS and restart it.",
        Code.FailedPrecondition,
        {
          "x-baton-file": "disabled",
        },
      );
    }
    return options.files;
  };
  const read = async (ctx: HandlerContext): Promise<SignedInUser | null> => {
    const auth = options.auth;
    if (!auth) {
      if (options.requireSignIn) throw new ConnectError("This console has no accounts.", Code.Unauthenticated);
      return null;
    }
    if (!options.requireSignIn) {
      const who = await auth.accounts.authenticate(ctx.requestHeader);
      return who && !who.mustChangePassword ? signedInUser(who) : null;
    }
    return signedInUser(await requireSignedIn(ctx.requestHeader, auth, { csrf: false }));
  };
  const act = async (ctx: HandlerContext): Promise<SignedInUser> => {
    if (!options.auth) throw new ConnectError("This console has no accounts, so nobody can act from it.", Code.Unimplemented);
    return signedInUser(await requireSignedIn(ctx.requestHeader, options.auth, { csrf: true }));
  };
  const dirOf = (files: FileHandoffs, key: string): WatchedDirectory => {
    const d = files.dirByKey(key);
    if (!d) throw new ConnectError(`No watched directory has the key ${key} (the console's BATON_HANDOFF_DIRS changed?).`, Code.NotFound);
    return d;
  };
  const namesOf = async (): Promise<(id: string) => string> => {
    const users = options.auth ? await options.auth.accounts.directory.users() : [];
    const names = new Map(users.map((u) => [u.participantId, u.displayName]));
    return (id) => names.get(id) ?? shortParticipantName(id);
  };
  const audit = (user: SignedInUser, action: string, dir: string, taskId: string, outcome: string): void => {
    log.info({ user: user.username, participant: user.participantId, action, dir, taskId, outcome }, `console file action ${action}`);
  };

  return (router) => {
    router.service(FileHandoffService, {
      async getFileHandoffSettings(_req, ctx) {
        await read(ctx);
        const files = options.files;
        return create(GetFileHandoffSettingsResponseSchema, {
          enabled: files !== null,
          directories: files ? files.directoryStatus() : [],
          bridge: files !== null && options.bridge,
        });
      },

      async listFileHandoffs(req, ctx) {
        const files = ensureOpen();
        const user = await read(ctx);
        const input = parseList(req);
        const dirs = input.dirKey ? [dirOf(files, input.dirKey).path] : undefined;
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
      },

      async getFileHandoff(req, ctx) {
        const files = ensureOpen();
        await read(ctx);
        const input = parseGet(req);
        const d = dirOf(files, input.dirKey);
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
      },

      async *watchFileHandoffs(_req, ctx) {
        const files = ensureOpen();
        await read(ctx);
        yield* track(files.watch(ctx.signal), ctx.signal);
      },

      async offerFileHandoff(req, ctx) {
        const files = ensureOpen();
        const user = await act(ctx);
        const input = parseFileOffer(req);
        const d = dirOf(files, input.dirKey);
        const nameOf = await namesOf();
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
      },

      async actOnFileHandoff(req, ctx) {
        const files = ensureOpen();
        const user = await act(ctx);
        const input = parseFileAct(req);
        const d = dirOf(files, input.dirKey);
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
        const nameOf = await namesOf();
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
          const w = await d.directory.act(current, lib, { expectHash: input.expectHash, signal: ctx.signal });
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
      },
    });
  };
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
