// What the console's server-rendered pages read (lib/server/page-data.ts):
// the people and agent names, the session page's first view and the session
// list's first page, each through the same sign-in rule as the Connect read API.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Accounts } from "@/lib/accounts/accounts";
import { SessionListQuerySchema } from "@/lib/gen/baton/v1/console_pb";
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
  /** Ends the previews' reads at shutdown. */
  signal: AbortSignal;
}

/** Register the page data; returns the function that withdraws it. */
export function registerConsolePageData(options: ConsolePageDataOptions): () => void {
  const { config, gateway, catalog, accounts, agentNames: names } = options;
  const previews = new SessionPreviews(gateway.streamDeps, {
    maxEvents: config.previewMaxEvents,
    timeoutMs: config.previewTimeoutMs,
    signal: options.signal,
  });
  return registerPageData({
    fileHandoffsEnabled: options.fileHandoffsEnabled,
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
