// FileHandoffService (proto/baton/v1/files.proto) as a plain
// `(router) => void`: v0.1 file-based handoffs in the console. This module
// checks who calls and routes each method to the reads (file-reads.ts) or to
// people's actions (file-acts.ts; their errors in file-errors.ts). Reads
// follow the same sign-in rule as the session reads; actions are those of
// signed-in people, checked like the MACP actions (action-routes.ts): sign-in
// and CSRF → input validated at the edge (file-input.ts) → the file read now
// → decide() (roles and authority, lib/authz) and the library's state machine
// (refusalFor) → a compare-and-swap write under the shared lock, only if the
// file is still the snapshot the person saw (expect_hash). A lost race is
// ABORTED ("someone else changed it: reload"), never an overwrite; a writer
// that ignores the lock is reported. The person's participant id is what
// goes into from_agent / to_agent. The watch stream ends with the sign-in
// that opened it (sign-in-streams.ts, on the whole router).
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { shortParticipantName } from "@/lib/authz/decide";
import { FileHandoffService, GetFileHandoffSettingsResponseSchema } from "@/lib/gen/baton/v1/files_pb";
import type { Accounts } from "@/lib/accounts/accounts";
import type { SignedInUser } from "./identity";
import { actOnFile, offerFile } from "./file-acts";
import type { FileHandoffs, WatchedDirectory } from "./file-handoffs";
import { parseFileAct, parseFileOffer, parseGet, parseList } from "./file-input";
import { handoffPage, listPage } from "./file-reads";
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
        return listPage(files, user, input, dirs);
      },

      async getFileHandoff(req, ctx) {
        const files = ensureOpen();
        await read(ctx);
        const input = parseGet(req);
        return handoffPage(files, dirOf(files, input.dirKey), input);
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
        return offerFile({ files, d: dirOf(files, input.dirKey), user, namesOf, audit }, input);
      },

      async actOnFileHandoff(req, ctx) {
        const files = ensureOpen();
        const user = await act(ctx);
        const input = parseFileAct(req);
        return actOnFile({ files, d: dirOf(files, input.dirKey), user, namesOf, audit }, input, ctx.signal);
      },
    });
  };
}
