// People's actions in the console (only with accounts): the ActionGateway,
// the saved "Hand off…" templates and the escalation chains (both SQLite
// files next to the catalog), and the demo player.
import path from "node:path";
import type pino from "pino";
import type { Accounts } from "@/lib/accounts/accounts";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { ActionGateway } from "@/lib/gateway/actions";
import type { SqliteCatalog } from "@/lib/gateway/catalog/sqlite";
import { Escalations, EscalationStore } from "@/lib/gateway/escalations";
import type { Gateway } from "@/lib/gateway/gateway";
import { HandoffTemplateStore } from "@/lib/gateway/handoff-templates";
import type { RuntimeActions } from "@/lib/gateway/runtime-actions";
import type { Notifier } from "@/lib/notify/notifier";
import type { ConsoleRuntime } from "./console-runtime";
import { cancelAsInitiator } from "./console-runtime";
import { ConsoleConfigError, type ConsoleConfig } from "./config";
import { createDemoService, type DemoService } from "./demo";

type Env = Record<string, string | undefined>;

export interface ConsoleActions {
  actions: ActionGateway;
  templates: HandoffTemplateStore;
  escalationStore: EscalationStore;
  escalations: Escalations;
  demo: DemoService;
}

export interface ConsoleActionsOptions {
  config: ConsoleConfig;
  env: Env;
  runtime: ConsoleRuntime;
  writer: RuntimeActions;
  accounts: Accounts;
  gateway: Gateway;
  catalog: SqliteCatalog;
  /** Display names of agents (the agents directory). */
  agentNames: Map<string, string>;
  /** The outbound notifier, once it runs. */
  notifier: () => Notifier | null;
  logger: pino.Logger;
}

/**
 * Set up people's actions. Throws ConsoleConfigError when a store cannot be
 * opened, having closed what it opened itself.
 */
export function startConsoleActions(options: ConsoleActionsOptions): ConsoleActions {
  const { config, env, accounts, catalog, logger } = options;
  const { embedded, client, people, userAuthMode } = options.runtime;
  const kernel = embedded?.kernel;
  const actions = new ActionGateway({
    runtime: client,
    actions: options.writer,
    users: accounts.directory,
    authMode: userAuthMode,
    ...(people && userAuthMode === "dev" ? { devCredential: (id: string) => people.credentialFor(id) } : {}),
    maxPayloadBytes: embedded ? embedded.config.maxPayloadBytes : config.maxPayloadBytes,
    participantsSeen: (limit) => catalog.actors(limit),
    agentNames: options.agentNames,
    logger: logger.child({ component: "actions" }),
    ...(kernel ? { cancelAsInitiator: (sessionId: string, reason: string) => cancelAsInitiator(kernel, sessionId, reason) } : {}),
  });
  // Saved "Hand off…" templates: next to the catalog, in the data folder (in memory with an in-memory catalog).
  const templatesPath =
    config.catalogPath === ":memory:" ? ":memory:" : path.join(path.dirname(config.catalogPath), "handoff-templates.sqlite");
  let templates: HandoffTemplateStore;
  try {
    templates = new HandoffTemplateStore(templatesPath);
  } catch (e) {
    throw new ConsoleConfigError(`cannot open the hand-off templates ${templatesPath}: ${(e as Error).message}`);
  }
  // Escalation chains: next to the catalog too; run for their owners by the scheduler (lib/gateway/escalations/).
  const escalationsPath =
    config.catalogPath === ":memory:" ? ":memory:" : path.join(path.dirname(config.catalogPath), "escalations.sqlite");
  let escalationStore: EscalationStore;
  try {
    escalationStore = new EscalationStore(escalationsPath);
  } catch (e) {
    templates.close();
    throw new ConsoleConfigError(`cannot open the escalations ${escalationsPath}: ${(e as Error).message}`);
  }
  const escalations = new Escalations({
    store: escalationStore,
    actions,
    users: accounts.directory,
    minuteMs: config.escalationMinuteMs,
    notify: options.notifier,
    logger: logger.child({ component: "escalations" }),
  });
  options.gateway.feeder.onWrite(() =>
    escalations.catalogChanged((id) => {
      const row = catalog.get(id);
      if (!row?.summary.metadata) return undefined;
      return { open: row.summary.metadata.state === SessionState.OPEN, phase: row.summary.phase };
    }),
  );
  const demo = createDemoService({
    address: embedded ? embedded.address : "",
    tls: embedded ? embedded.url.startsWith("https:") : false,
    ...(embedded?.url.startsWith("https:") && env.MACP_TLS_CERT_PATH ? { caPath: env.MACP_TLS_CERT_PATH } : {}),
    unavailable: !embedded
      ? "Demos play only against the embedded runtime; with an external runtime use `npm run demo -- --runtime <address> --tokens <file>`."
      : userAuthMode !== "dev"
        ? "Demos need the embedded runtime's dev auth (the demo's agents have no tokens here); run `npm run demo -- --tokens <file>` instead."
        : null,
    logger: logger.child({ component: "demo" }),
  });
  return { actions, templates, escalationStore, escalations, demo };
}
