// What the console's server-rendered pages read (lib/server/page-data.ts):
// the people and agent names, the session page's first view and the session
// list's first page, each through the same sign-in rule as the Connect read API.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Accounts } from "@/lib/accounts/accounts";
import type { ListDirectoryResponse } from "@/lib/gen/baton/v1/actions_pb";
import { SessionListQuerySchema } from "@/lib/gen/baton/v1/console_pb";
import { shortParticipantName } from "@/lib/authz/participants";
import { firstInboxUpdate, type EscalationNotices } from "@/lib/gateway/inbox-stream";
import type { PolicyCache } from "@/lib/gateway/policies";
import { FIRST_VIEW_ITEMS, newestFirst } from "@/lib/views/inbox-first-view";
import { directoryFrom, nameIn } from "@/lib/views/directory";
import { parseListQuery as parseCatalogQuery } from "@/lib/gateway/catalog/query";
import type { SqliteCatalog } from "@/lib/gateway/catalog/sqlite";
import type { Gateway } from "@/lib/gateway/gateway";
import { SessionPreviews } from "@/lib/gateway/session-preview";
import type { ConsoleConfig } from "./config";
import { registerPageData } from "./page-data";

export interface ConsolePageDataOptions {
  config: ConsoleConfig;
  gateway: Gateway;
  catalog: SqliteCatalog;
  accounts: Accounts | null;
  /** Display names of agents (the agents directory). */
  agentNames: Map<string, string>;
  fileHandoffsEnabled: () => boolean;
  /** People's actions, when the console runs them: what the inbox's first view reads as WatchInbox and ListDirectory do. */
  inbox?: {
    policies: PolicyCache;
    escalations?: EscalationNotices;
    directory(signal?: AbortSignal): Promise<ListDirectoryResponse>;
  } | null;
  /** Ends the previews' reads at shutdown. */
  signal: AbortSignal;
}

/** Longest wait for the inbox's first update (the session index loading) before the page renders without it. */
const INBOX_FIRST_VIEW_WAIT_MS = 150;

/** Register the page data; returns the function that withdraws it. */
export function registerConsolePageData(options: ConsolePageDataOptions): () => void {
  const { config, gateway, catalog, accounts, agentNames: names } = options;
  const previews = new SessionPreviews(gateway.streamDeps, {
    maxEvents: config.previewMaxEvents,
    timeoutMs: config.previewTimeoutMs,
    signal: options.signal,
  });
  const inbox = options.inbox ?? null;
  return registerPageData({
    fileHandoffsEnabled: options.fileHandoffsEnabled,
    async signedIn(headers) {
      if (!accounts) return false;
      const who = await accounts.authenticate(headers);
      return who !== null && !who.mustChangePassword;
    },
    async inboxFirstView(headers) {
      if (!accounts || !inbox) return { kind: "unavailable", detail: "this console runs no actions" };
      const who = await accounts.authenticate(headers);
      if (!who || who.mustChangePassword) return { kind: "signed-out" };
      if (gateway.isClosed) return { kind: "unavailable", detail: "the console is shutting down" };
      try {
        // As WatchInbox (lib/gateway/action-routes.ts) reads it for this person, and ListDirectory names the senders.
        const users = await accounts.directory.users();
        const display = new Map(users.map((u) => [u.participantId, u.displayName]));
        const update = await firstInboxUpdate(
          {
            feeder: gateway.feeder,
            policies: inbox.policies,
            logger: gateway.logger,
            ...(inbox.escalations ? { escalations: inbox.escalations } : {}),
          },
          { role: who.user.role, participantId: who.user.participantId },
          (id) => display.get(id) ?? shortParticipantName(id),
          INBOX_FIRST_VIEW_WAIT_MS,
          options.signal,
        );
        if (!update) return { kind: "unavailable", detail: "the session index has not loaded yet" };
        const items = [...update.items].sort(newestFirst).slice(0, FIRST_VIEW_ITEMS);
        const ahead = [...update.ahead].sort(newestFirst).slice(0, FIRST_VIEW_ITEMS);
        const directory = directoryFrom(await inbox.directory(options.signal));
        const names: Record<string, string> = {};
        for (const it of [...items, ...ahead]) names[it.fromParticipant] = nameIn(directory, it.fromParticipant);
        return { kind: "ready", count: update.items.length, items, ahead, names };
      } catch (e) {
        return { kind: "unavailable", detail: e instanceof Error ? e.message : String(e) };
      }
    },
    stuckAfterMs: () => config.stuckAfterMs,
    async people(headers) {
      if (!accounts) return null;
      const who = await accounts.authenticate(headers);
      if (!who || who.mustChangePassword) return null;
      const people = (await accounts.directory.users()).map((u) => ({
        participantId: u.participantId,
        displayName: u.displayName || u.username,
        role: u.role,
      }));
      // Names of the agents the list can show: those seen most recently (bounded), as the directory file names them.
      const agentNames: Record<string, string> = {};
      if (names.size > 0) {
        for (const a of catalog.actors(1_000)) {
          const name = names.get(a.participantId);
          if (name !== undefined) agentNames[a.participantId] = name;
        }
      }
      return { people, agentNames };
    },
    async sessionPreview(headers, sessionId) {
      if (config.requireSignIn && accounts) {
        const who = await accounts.authenticate(headers);
        if (!who || who.mustChangePassword) return { kind: "signed-out" };
      }
      if (gateway.isClosed) return { kind: "skipped", reason: "unavailable", detail: "the console is shutting down" };
      return previews.load(sessionId);
    },
    async sessionListFirstView(headers, query, limit) {
      if (config.requireSignIn && accounts) {
        const who = await accounts.authenticate(headers);
        if (!who || who.mustChangePassword) return { kind: "signed-out" };
      }
      if (gateway.isClosed) return { kind: "unavailable", detail: "the console is shutting down" };
      try {
        // The same validation and read as ListSessionPage (lib/gateway/routes.ts).
        const read = (fields: MessageInitShape<typeof SessionListQuerySchema>, rows: number) =>
          gateway.list.page(parseCatalogQuery(create(SessionListQuerySchema, fields)), 0, rows);
        const page = await gateway.list.pageNamed(parseCatalogQuery(create(SessionListQuerySchema, query)), 0, limit);
        return { kind: "ready", page, allCount: read({}, 1).total, openCount: read({ state: "open" }, 1).total };
      } catch (e) {
        return { kind: "unavailable", detail: e instanceof Error ? e.message : String(e) };
      }
    },
  });
}
