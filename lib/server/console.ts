// Start the whole console: the runtime (embedded in-process unless
// MACP_RUNTIME_URL points elsewhere), the gateway, Next.js and the HTTP server.
// Used by lib/server/main.ts and by integration tests.
import { exposedGc, heapAndBuffers, IdleCollector } from "./idle-gc";
import { loadAgentNames } from "@/lib/accounts/agents-file";
import { setMaxListeners } from "node:events";
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import type pino from "pino";
import type { Accounts } from "@/lib/accounts/accounts";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { SessionListQuerySchema } from "@/lib/gen/baton/v1/console_pb";
import type { Ack } from "@/lib/gen/macp/v1/envelope_pb";
import { actionRoutes } from "@/lib/gateway/action-routes";
import type { FileHandoffs } from "@/lib/gateway/file-handoffs";
import { fileRoutes } from "@/lib/gateway/file-routes";
import { ActionGateway } from "@/lib/gateway/actions";
import { parseListQuery as parseCatalogQuery } from "@/lib/gateway/catalog/query";
import { removeFileRows } from "@/lib/gateway/catalog/file-rows";
import { SqliteCatalog } from "@/lib/gateway/catalog/sqlite";
import { createGateway, type Gateway } from "@/lib/gateway/gateway";
import type { UserAuthMode } from "@/lib/gateway/identity";
import { accessInterceptor } from "@/lib/gateway/request-auth";
import { consoleRoutes } from "@/lib/gateway/routes";
import { RuntimeHealth } from "@/lib/gateway/runtime-health";
import { SignInStreams } from "@/lib/gateway/sign-in-streams";
import { createRuntimeActions, type RuntimeActions } from "@/lib/gateway/runtime-actions";
import { createRuntimeClient, type RuntimeReader } from "@/lib/gateway/runtime-client";
import { OidcConfigError, OidcLogin, oidcSettingsFromEnv } from "@/lib/oidc";
import type { RunningRuntime } from "@/lib/runtime";
import { ControlError } from "@/lib/runtime/kernel";
import { SessionPreviews } from "@/lib/gateway/session-preview";
import { createAuthRoutes } from "./auth-routes";
import { ConsolePeople } from "./console-people";
import { ConsoleConfigError, type ConsoleConfig } from "./config";
import { createDemoService, type DemoService } from "./demo";
import { planFileHandoffs, startFileHandoffs, type RunningFileHandoffs } from "./file-handoffs-setup";
import { startEmbeddedRuntime } from "./embedded";
import { planWebhooks, startWebhooks } from "./webhooks-setup";
import { HandoffTemplateStore } from "@/lib/gateway/handoff-templates";
import { Escalations, EscalationStore } from "@/lib/gateway/escalations";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import type { Notifier } from "@/lib/notify/notifier";
import { createConsoleServer, listen, type Fallback } from "./http";
import { registerPageData } from "./page-data";
import { signInRedirect } from "./page-guard";
import { createStaticAssets } from "./static-assets";
import { createStatusRoutes, firstRoutes } from "./status-routes";

type Env = Record<string, string | undefined>;

export interface RunningConsole {
  /** Base URL of the console, e.g. http://127.0.0.1:3000 */
  url: string;
  runtimeKind: "embedded" | "external";
  /** Runtime address agents use (embedded) or the external URL. */
  runtimeAddress: string;
  /** The embedded runtime, when there is one. */
  runtime: RunningRuntime | null;
  gateway: Gateway;
  /** People's actions (present when the console has accounts). */
  actions: ActionGateway | null;
  /** v0.1 file-based handoffs (present when BATON_HANDOFF_DIRS is set). */
  files: FileHandoffs | null;
  /** Outbound notifications (present when the webhooks file names hooks). */
  notifier: Notifier | null;
  server: http.Server;
  close(): Promise<void>;
}

export interface StartConsoleOptions {
  config: ConsoleConfig;
  /** Environment for the embedded runtime (defaults to process.env). */
  env?: Env;
  logger: pino.Logger;
  /**
   * Console accounts: enable sign-in (/auth/*) and the ActionService. The
   * secret is the session secret the accounts were made with (it also seals
   * the OIDC sign-in state). Without accounts neither is served.
   */
  auth?: { accounts: Accounts; secret: Buffer };
}

interface NextApp {
  prepare(): Promise<void>;
  getRequestHandler(): (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;
  close(): Promise<void>;
}

/** An App Router root layout or a pages/ folder: something Next.js can serve. */
function hasUiSources(dir: string): boolean {
  const layouts = ["app", path.join("src", "app")].some((d) =>
    ["tsx", "ts", "jsx", "js"].some((x) => fs.existsSync(path.join(dir, d, `layout.${x}`))),
  );
  return layouts || ["pages", path.join("src", "pages")].some((d) => fs.existsSync(path.join(dir, d)));
}

function displayUrl(host: string, port: number): string {
  const h = host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  return `http://${h}:${port}`;
}

export async function startConsole(options: StartConsoleOptions): Promise<RunningConsole> {
  const { config } = options;
  const logger = options.logger.child({ component: "console" });
  const env = options.env ?? process.env;
  let ui = config.ui;
  if (ui && !hasUiSources(config.dir)) {
    logger.warn({ dir: config.dir }, "no app/layout or pages/ yet: serving the Connect API only");
    ui = false;
  }
  if (ui && !config.dev && !fs.existsSync(path.join(config.dir, ".next", "BUILD_ID"))) {
    throw new ConsoleConfigError(
      "no production build in .next/: run `npm run build` first (`npm start` builds when needed), or use `npm run dev`",
    );
  }

  const auth = options.auth ?? null;
  if (config.requireSignIn && !auth) {
    throw new ConsoleConfigError(
      "reading sessions requires sign-in (BATON_REQUIRE_SIGN_IN, on by default), but this console was started without accounts; set BATON_REQUIRE_SIGN_IN=0 to open reads",
    );
  }

  // v0.1 handoff directories: settings are checked before anything starts.
  const filesPlan = planFileHandoffs(env);
  // The agents directory (display names for agent ids): checked before anything starts.
  let agents: { file: string; names: Map<string, string> };
  try {
    agents = loadAgentNames(env, config.dir);
  } catch (e) {
    throw new ConsoleConfigError((e as Error).message);
  }
  // Outbound notifications: the webhooks file is checked before anything starts.
  const webhooksPlan = planWebhooks(env, config.dir);
  let notifier: Notifier | null = null;

  // 1. The runtime.
  let embedded: RunningRuntime | null = null;
  let people: ConsolePeople | null = null;
  let client: RuntimeReader;
  let writer: RuntimeActions | null = null;
  let userAuthMode: UserAuthMode = "tokens";
  let authNote: string;
  let storage: string;
  if (config.runtime.kind === "external") {
    client = createRuntimeClient({
      kind: "external",
      baseUrl: config.runtime.url,
      token: config.runtime.token,
      caPath: config.runtime.caPath,
    });
    if (auth)
      writer = createRuntimeActions({ baseUrl: config.runtime.url, readToken: config.runtime.token, caPath: config.runtime.caPath });
    authNote = "console reads with the bearer token in MACP_RUNTIME_TOKEN (must be an observer identity)";
    storage = "managed by the external runtime";
  } else {
    if (auth) {
      people = new ConsolePeople(auth.accounts, options.logger.child({ component: "runtime" }));
      await people.start();
    }
    let started: Awaited<ReturnType<typeof startEmbeddedRuntime>>;
    try {
      started = await startEmbeddedRuntime(env, config.dir, options.logger.child({ component: "runtime" }), people ?? undefined);
    } catch (e) {
      people?.close();
      throw e;
    }
    embedded = started.runtime;
    // A TLS runtime usually has a self-signed certificate: trust it directly.
    const tlsCa = embedded.url.startsWith("https:") ? env.MACP_TLS_CERT_PATH : undefined;
    client = createRuntimeClient({ kind: "embedded", baseUrl: embedded.url, token: started.plan.token, caPath: tlsCa });
    if (auth) writer = createRuntimeActions({ baseUrl: embedded.url, readToken: started.plan.token, caPath: tlsCa });
    userAuthMode = started.plan.authMode;
    authNote =
      started.plan.authMode === "dev"
        ? "dev (insecure): `authorization: Bearer <id>` or `x-macp-agent-id: <id>` names an agent; people's ids are reserved for the console; the console reads as observer baton:console"
        : "static bearer tokens; the console reads as observer baton:console with a token generated for this process";
    storage = embedded.dataDir ?? "memory only (MACP_MEMORY_ONLY=1): nothing survives a restart";
  }

  // 2. The catalog, the v0.1 handoff directories, the gateway and the HTTP server.
  let catalog: SqliteCatalog;
  const catalogSource = embedded
    ? `embedded:${embedded.dataDir ?? "memory"}`
    : config.runtime.kind === "external"
      ? config.runtime.url
      : client.address;
  try {
    catalog = new SqliteCatalog({ path: config.catalogPath, source: catalogSource });
  } catch (e) {
    client.close();
    people?.close();
    await embedded?.close().catch(() => undefined);
    throw new ConsoleConfigError(`cannot open the console catalog ${config.catalogPath}: ${(e as Error).message}`);
  }
  if (catalog.replacedSource !== null) {
    logger.warn(
      { catalog: config.catalogPath, was: catalog.replacedSource, now: catalogSource },
      "the console catalog described another runtime; it is filled again from this one",
    );
  }
  // v0.1 handoff directories (and their bridge to this runtime), when configured.
  let fileHandoffs: RunningFileHandoffs;
  try {
    const tls = embedded
      ? embedded.url.startsWith("https:")
      : config.runtime.kind === "external" && config.runtime.url.startsWith("https:");
    const caPath = embedded
      ? tls
        ? env.MACP_TLS_CERT_PATH
        : undefined
      : config.runtime.kind === "external"
        ? config.runtime.caPath
        : undefined;
    const peopleNow = people;
    fileHandoffs = await startFileHandoffs(
      env,
      filesPlan,
      {
        address: embedded ? embedded.address : config.runtime.kind === "external" ? config.runtime.url : "",
        tls,
        ...(caPath ? { caPath } : {}),
        authMode: embedded ? userAuthMode : "tokens",
        ...(peopleNow && userAuthMode === "dev"
          ? { personCredential: (id: string) => (peopleNow.isReserved(id) ? peopleNow.credentialFor(id) : undefined) }
          : {}),
      },
      config.heartbeatMs,
      options.logger.child({ component: "files" }),
    );
  } catch (e) {
    catalog.close();
    client.close();
    people?.close();
    await embedded?.close().catch(() => undefined);
    throw e;
  }

  // The garbage large browser streams leave is collected while they send and once they end (idle-gc.ts).
  const gc = config.idleGc ? exposedGc() : null;
  const collector = gc
    ? new IdleCollector({
        gc,
        memory: heapAndBuffers,
        collected: (r) =>
          logger[r.busy ? "debug" : "info"](
            { freedMiB: Math.round((r.beforeBytes - r.afterBytes) / 1_048_576), ms: Math.round(r.ms) },
            r.busy ? "collection while browser streams send large payloads" : "idle collection after browser streams ended",
          ),
      })
    : null;
  const gateway = createGateway({
    runtime: client,
    ...(collector ? { browserStreamEnded: () => collector.streamEnded(), browserStreamSent: (n: number) => collector.sent(n) } : {}),
    catalog,
    logger: options.logger.child({ component: "gateway" }),
    graceMs: config.graceMs,
    heartbeatMs: config.heartbeatMs,
    concurrency: config.catalogConcurrency,
    maxStreamsPerPerson: config.maxStreamsPerPerson,
    streamBufferBytes: config.streamBufferBytes,
    streamStallMs: config.streamStallMs,
    stuckAfterMs: config.stuckAfterMs,
    runtimeAddress: embedded ? embedded.address : config.runtime.kind === "external" ? config.runtime.url : client.address,
    ...(auth
      ? {
          people: async () => {
            const names = new Map((await auth.accounts.directory.users()).map((u) => [u.participantId, u.displayName]));
            return (id: string) => names.get(id);
          },
        }
      : {}),
  });
  // v0.1 file handoffs are rows of the session list too (written as the watcher records changes).
  if (fileHandoffs.files) gateway.followFileHandoffs(fileHandoffs.files.rowSource());
  else if (catalog.fileCount() > 0) {
    logger.info({ rows: catalog.fileCount() }, "no v0.1 handoff directories are watched any more: their rows leave the session list");
    removeFileRows(catalog);
  }
  let actions: ActionGateway | null = null;
  let templates: HandoffTemplateStore | null = null;
  let escalationStore: EscalationStore | null = null;
  let escalations: Escalations | null = null;
  let demo: DemoService | null = null;
  let oidc: OidcLogin | null = null;
  if (auth && writer) {
    const kernel = embedded?.kernel;
    actions = new ActionGateway({
      runtime: client,
      actions: writer,
      users: auth.accounts.directory,
      authMode: userAuthMode,
      ...(people && userAuthMode === "dev" ? { devCredential: (id: string) => (people as ConsolePeople).credentialFor(id) } : {}),
      maxPayloadBytes: embedded ? embedded.config.maxPayloadBytes : config.maxPayloadBytes,
      participantsSeen: (limit) => catalog.actors(limit),
      agentNames: agents.names,
      logger: options.logger.child({ component: "actions" }),
      ...(kernel ? { cancelAsInitiator: (sessionId: string, reason: string) => cancelAsInitiator(kernel, sessionId, reason) } : {}),
    });
    // Saved "Hand off…" templates: next to the catalog, in the data folder (in memory with an in-memory catalog).
    const templatesPath =
      config.catalogPath === ":memory:" ? ":memory:" : path.join(path.dirname(config.catalogPath), "handoff-templates.sqlite");
    try {
      templates = new HandoffTemplateStore(templatesPath);
    } catch (e) {
      catalog.close();
      client.close();
      people?.close();
      await fileHandoffs.close();
      await embedded?.close().catch(() => undefined);
      throw new ConsoleConfigError(`cannot open the hand-off templates ${templatesPath}: ${(e as Error).message}`);
    }
    // Escalation chains: next to the catalog too; run for their owners by the scheduler (lib/gateway/escalations/).
    const escalationsPath =
      config.catalogPath === ":memory:" ? ":memory:" : path.join(path.dirname(config.catalogPath), "escalations.sqlite");
    try {
      escalationStore = new EscalationStore(escalationsPath);
    } catch (e) {
      templates.close();
      catalog.close();
      client.close();
      people?.close();
      await fileHandoffs.close();
      await embedded?.close().catch(() => undefined);
      throw new ConsoleConfigError(`cannot open the escalations ${escalationsPath}: ${(e as Error).message}`);
    }
    escalations = new Escalations({
      store: escalationStore,
      actions,
      users: auth.accounts.directory,
      minuteMs: config.escalationMinuteMs,
      notify: () => notifier,
      logger: options.logger.child({ component: "escalations" }),
    });
    const running = escalations;
    gateway.feeder.onWrite(() =>
      running.catalogChanged((id) => {
        const row = catalog.get(id);
        if (!row?.summary.metadata) return undefined;
        return { open: row.summary.metadata.state === SessionState.OPEN, phase: row.summary.phase };
      }),
    );
    demo = createDemoService({
      address: embedded ? embedded.address : "",
      tls: embedded ? embedded.url.startsWith("https:") : false,
      ...(embedded?.url.startsWith("https:") && env.MACP_TLS_CERT_PATH ? { caPath: env.MACP_TLS_CERT_PATH } : {}),
      unavailable: !embedded
        ? "Demos play only against the embedded runtime; with an external runtime use `npm run demo -- --runtime <address> --tokens <file>`."
        : userAuthMode !== "dev"
          ? "Demos need the embedded runtime's dev auth (the demo's agents have no tokens here); run `npm run demo -- --tokens <file>` instead."
          : null,
      logger: options.logger.child({ component: "demo" }),
    });
  }
  const routes = (router: ConnectRouter) => {
    consoleRoutes(gateway)(router);
    if (auth && actions) {
      actionRoutes({
        gateway,
        actions,
        accounts: auth.accounts,
        env,
        heartbeatMs: config.heartbeatMs,
        ...(demo ? { demo } : {}),
        webhooks: () => notifier,
        ...(templates ? { templates } : {}),
        ...(escalations ? { escalations } : {}),
      })(router);
    }
    fileRoutes({
      files: fileHandoffs.files,
      auth: auth ? { accounts: auth.accounts, env } : null,
      requireSignIn: config.requireSignIn,
      bridge: fileHandoffs.bridges > 0,
      track: (stream, signal) => gateway.trackBrowserStream(stream, signal),
      isClosed: () => gateway.isClosed,
      logger: options.logger.child({ component: "files" }),
    })(router);
  };
  // Every browser stream opened by a signed-in person ends when that sign-in
  // ends, and starts again under a changed role (lib/gateway/sign-in-streams.ts).
  const signInStreams = auth
    ? new SignInStreams({ accounts: auth.accounts, logger: options.logger.child({ component: "gateway" }) })
    : null;
  const shutdown = new AbortController();
  // Every open browser stream listens for shutdown: many tabs are normal.
  setMaxListeners(0, shutdown.signal);
  // Server-rendered pages (the session page's first view) read through the
  // same sign-in rule as the Connect read API.
  const previews = new SessionPreviews(gateway.streamDeps, {
    maxEvents: config.previewMaxEvents,
    timeoutMs: config.previewTimeoutMs,
    signal: shutdown.signal,
  });
  const withdrawPageData = registerPageData({
    fileHandoffsEnabled: () => fileHandoffs.files !== null,
    stuckAfterMs: () => config.stuckAfterMs,
    async people(headers) {
      if (!auth) return null;
      const who = await auth.accounts.authenticate(headers);
      if (!who || who.mustChangePassword) return null;
      const people = (await auth.accounts.directory.users()).map((u) => ({
        participantId: u.participantId,
        displayName: u.displayName || u.username,
        role: u.role,
      }));
      // Names of the agents the list can show: those seen most recently (bounded), as the directory file names them.
      const agentNames: Record<string, string> = {};
      if (agents.names.size > 0) {
        for (const a of catalog.actors(1_000)) {
          const name = agents.names.get(a.participantId);
          if (name !== undefined) agentNames[a.participantId] = name;
        }
      }
      return { people, agentNames };
    },
    async sessionPreview(headers, sessionId) {
      if (config.requireSignIn && auth) {
        const who = await auth.accounts.authenticate(headers);
        if (!who || who.mustChangePassword) return { kind: "signed-out" };
      }
      if (gateway.isClosed) return { kind: "skipped", reason: "unavailable", detail: "the console is shutting down" };
      return previews.load(sessionId);
    },
    async sessionListFirstView(headers, query, limit) {
      if (config.requireSignIn && auth) {
        const who = await auth.accounts.authenticate(headers);
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
  const maxPayload = actions?.maxPayloadBytes ?? config.maxPayloadBytes;
  let nextHandler: ((req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>) | null = null;
  const serve = (req: http.IncomingMessage, res: http.ServerResponse): void | Promise<void> => {
    if (nextHandler) return nextHandler(req, res);
    res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "retry-after": "1" });
    res.end("Baton is starting\n");
  };
  // Signed-out page visits go to /login first when reads need sign-in.
  const guardPages = config.requireSignIn && auth ? auth.accounts : null;
  const fallback: Fallback | undefined = ui
    ? async (req, res) => {
        const location = guardPages ? signInRedirect(req.method ?? "GET", req.url ?? "/", req.headers) : null;
        if (location !== null && guardPages && !(await guardPages.authenticate(req.headers))) {
          res.writeHead(302, { location, "cache-control": "no-store" });
          res.end();
          return;
        }
        return serve(req, res);
      }
    : undefined;
  // The outage banner's source: is the runtime reachable (GET /status/runtime)?
  const health = new RuntimeHealth({
    runtime: client,
    address: embedded ? embedded.address : client.address,
    logger: options.logger.child({ component: "runtime-health" }),
  });
  health.start();
  const statusRoutes = createStatusRoutes({
    health,
    ...(config.requireSignIn && auth ? { authenticate: (headers: http.IncomingHttpHeaders) => auth.accounts.authenticate(headers) } : {}),
  });
  let refusedLogged = 0;
  const server = createConsoleServer({
    routes,
    fallback,
    shutdownSignal: shutdown.signal,
    limits: config.connections,
    security: { env, dev: config.dev },
    // The production build's browser files, pre-compressed by `npm run build`
    // (development mode serves them from memory through Next.js).
    ...(ui && !config.dev ? { staticAssets: createStaticAssets({ dir: path.join(config.dir, ".next", "static") }) } : {}),
    // Who may call each method, checked once per call (lib/gateway/request-auth.ts,
    // rules in access-rules.ts); then streams follow the sign-in it checked.
    interceptors: [
      accessInterceptor({
        auth: auth ? { accounts: auth.accounts, env } : null,
        requireSignInToRead: config.requireSignIn,
        isClosed: () => gateway.isClosed,
      }),
      ...(signInStreams ? [signInStreams.interceptor()] : []),
    ],
    onConnectionRefused: (address, open) => {
      // At most one line a second however hard someone pushes.
      const now = Date.now();
      if (now - refusedLogged < 1_000) return;
      refusedLogged = now;
      logger.warn(
        { address, open, limit: config.connections.maxPerAddress },
        "connection refused: too many open connections from one address (BATON_MAX_CONNECTIONS_PER_ADDRESS)",
      );
    },
    // Room for an upload of the runtime's full payload size, even base64 in JSON.
    readMaxBytes: Math.ceil((maxPayload * 4) / 3) + 256 * 1024,
    httpRoutes: firstRoutes(
      statusRoutes,
      auth
        ? createAuthRoutes({
            accounts: auth.accounts,
            oidc: () => oidc,
            signInRequired: config.requireSignIn,
            env,
            logger: options.logger.child({ component: "auth" }),
          })
        : undefined,
    ),
  });

  // 3. Next.js.
  let app: NextApp | null = null;
  const cleanup = async () => {
    health.close();
    await escalations?.close();
    escalationStore?.close();
    await notifier?.close().catch(() => undefined);
    withdrawPageData();
    people?.close();
    signInStreams?.close();
    shutdown.abort();
    demo?.close();
    gateway.close();
    collector?.close();
    templates?.close();
    writer?.close();
    await fileHandoffs.close();
    await app?.close().catch(() => undefined);
    await embedded?.close().catch(() => undefined);
  };
  try {
    if (ui) {
      const { default: next } = await import("next");
      app = next({ dev: config.dev, dir: config.dir, hostname: config.host, port: config.port, httpServer: server });
      await app.prepare();
      nextHandler = app.getRequestHandler();
    }
    const bound = await listen(server, config.port, config.host);
    const url = displayUrl(bound.host, bound.port);
    if (auth) {
      // The default OIDC redirect URL needs the console's public origin.
      const origin = env.BATON_PUBLIC_ORIGIN?.split(",")[0]?.trim() || url;
      try {
        const settings = oidcSettingsFromEnv(env, origin);
        if (settings) oidc = new OidcLogin({ settings, secret: auth.secret, users: auth.accounts.directory });
      } catch (e) {
        if (e instanceof OidcConfigError) throw new ConsoleConfigError(e.message);
        throw e;
      }
    }
    notifier = startWebhooks(webhooksPlan, {
      gateway,
      catalogPath: config.catalogPath,
      catalogSource,
      dir: config.dir,
      consoleUrl: url,
      env,
      accounts: auth?.accounts ?? null,
      policies: actions?.policies ?? null,
      logger: options.logger.child({ component: "webhooks" }),
    });
    escalations?.start();
    const runtimeAddress = embedded ? embedded.address : config.runtime.kind === "external" ? config.runtime.url : "";
    logger.info(
      {
        console: url,
        mode: config.dev ? "development" : "production",
        ui,
        runtime: runtimeAddress,
        runtimeKind: client.kind,
        storage,
        catalog: config.catalogPath,
        auth: authNote,
        signIn: auth ? { oidc: oidc !== null, requiredForReads: config.requireSignIn, people: userAuthMode } : "off (no accounts)",
      },
      `Baton console on ${url} (${ui ? "UI + " : ""}Connect API); MACP runtime ${client.kind} at ${runtimeAddress}`,
    );

    let closing: Promise<void> | null = null;
    return {
      url,
      runtimeKind: client.kind,
      runtimeAddress,
      runtime: embedded,
      gateway,
      actions,
      files: fileHandoffs.files,
      notifier,
      server,
      close() {
        closing ??= (async () => {
          // A step in flight finishes first; the next start runs what falls due meanwhile.
          await escalations?.close();
          // Requests in flight are cut; their deliveries are sent again at the next start.
          await notifier?.close();
          withdrawPageData();
          signInStreams?.close();
          shutdown.abort(); // ends every browser stream
          demo?.close();
          gateway.close();
          collector?.close();
          writer?.close();
          await new Promise<void>((resolve) => {
            // Streams end as their handlers see the abort; close each
            // connection as soon as it is idle, and any straggler after 1 s.
            const idle = setInterval(() => server.closeIdleConnections(), 20);
            const all = setTimeout(() => server.closeAllConnections(), 1_000);
            server.close(() => {
              clearInterval(idle);
              clearTimeout(all);
              resolve();
            });
            server.closeIdleConnections();
          });
          await fileHandoffs.close();
          templates?.close();
          escalationStore?.close();
          // No request can change a sign-in any more: save them for the next start.
          await auth?.accounts.flushLogins();
          await app?.close().catch((err: unknown) => logger.warn({ err }, "Next.js did not close cleanly"));
          await embedded?.close();
          people?.close();
          logger.info({}, "Baton console stopped");
        })();
        return closing;
      },
    };
  } catch (e) {
    server.close();
    await cleanup();
    throw e;
  }
}

/**
 * An admin's cancel of a session they have no authority in: the embedded
 * runtime runs in this process, so the console cancels as the session's
 * initiator directly (the runtime only lets the initiator or a commitment
 * authority cancel). The reason names the admin.
 */
async function cancelAsInitiator(kernel: RunningRuntime["kernel"], sessionId: string, reason: string): Promise<Ack> {
  const found = kernel.getSession(sessionId);
  if (!found) throw new ConnectError(`session ${sessionId} does not exist`, Code.NotFound);
  try {
    return await kernel.control(
      { sender: found.initiator, canStartSessions: false, allowedModes: [], canManageRegistry: false, isObserver: false },
      "cancel",
      sessionId,
      reason,
    );
  } catch (e) {
    if (e instanceof ControlError) throw new ConnectError(e.message, e.kind === "not_found" ? Code.NotFound : Code.PermissionDenied);
    throw e;
  }
}
