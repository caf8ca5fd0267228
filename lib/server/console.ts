// Start the whole console: the runtime (embedded in-process unless
// MACP_RUNTIME_URL points elsewhere; console-runtime.ts), the catalog, the v0.1
// handoff directories, the gateway, people's actions (console-actions.ts), the
// pages' data (console-page-data.ts), the HTTP server (console-server.ts) and
// Next.js, in that order; and stop them in reverse. Used by lib/server/main.ts
// and by integration tests.
import { setMaxListeners } from "node:events";
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import type pino from "pino";
import type { Accounts } from "@/lib/accounts/accounts";
import { loadAgentNames } from "@/lib/accounts/agents-file";
import type { ActionGateway } from "@/lib/gateway/actions";
import { removeFileRows } from "@/lib/gateway/catalog/file-rows";
import { SqliteCatalog } from "@/lib/gateway/catalog/sqlite";
import type { FileHandoffs } from "@/lib/gateway/file-handoffs";
import { createGateway, type Gateway } from "@/lib/gateway/gateway";
import { RuntimeHealth } from "@/lib/gateway/runtime-health";
import { SignInStreams } from "@/lib/gateway/sign-in-streams";
import type { Notifier } from "@/lib/notify/notifier";
import { OidcConfigError, OidcLogin, oidcSettingsFromEnv } from "@/lib/oidc";
import type { RunningRuntime } from "@/lib/runtime";
import { startConsoleActions, type ConsoleActions } from "./console-actions";
import { registerConsolePageData } from "./console-page-data";
import { bridgeRuntime, connectRuntime } from "./console-runtime";
import { buildConsoleServer } from "./console-server";
import { ConsoleConfigError, type ConsoleConfig } from "./config";
import { planFileHandoffs, startFileHandoffs, type RunningFileHandoffs } from "./file-handoffs-setup";
import { listen } from "./http";
import { exposedGc, heapAndBuffers, StreamCollector } from "./stream-gc";
import { planWebhooks, startWebhooks } from "./webhooks-setup";

type Env = Record<string, string | undefined>;

/** What the /inbox page's first view reads, as WatchInbox and ListDirectory do. */
function inboxReads(acting: ConsoleActions) {
  const { actions, escalations } = acting;
  return { policies: actions.policies, escalations, directory: (signal?: AbortSignal) => actions.directory(signal) };
}

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
  const runtime = await connectRuntime(config, env, auth?.accounts ?? null, options.logger);
  const { embedded, people, client, writer, userAuthMode, authNote, storage } = runtime;

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
    fileHandoffs = await startFileHandoffs(
      env,
      filesPlan,
      bridgeRuntime(runtime, config, env),
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

  // The garbage large browser streams leave is collected while they send and once they end (stream-gc.ts).
  const gc = config.idleGc ? exposedGc() : null;
  const collector = gc
    ? new StreamCollector({
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
  let acting: ConsoleActions | null = null;
  let oidc: OidcLogin | null = null;
  if (auth && writer) {
    try {
      acting = startConsoleActions({
        config,
        env,
        runtime,
        writer,
        accounts: auth.accounts,
        gateway,
        catalog,
        agentNames: agents.names,
        notifier: () => notifier,
        logger: options.logger,
      });
    } catch (e) {
      catalog.close();
      client.close();
      people?.close();
      await fileHandoffs.close();
      await embedded?.close().catch(() => undefined);
      throw e;
    }
  }
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
  const withdrawPageData = registerConsolePageData({
    config,
    gateway,
    catalog,
    accounts: auth?.accounts ?? null,
    agentNames: agents.names,
    fileHandoffsEnabled: () => fileHandoffs.files !== null,
    inbox: auth && acting ? inboxReads(acting) : null,
    signal: shutdown.signal,
  });
  let nextHandler: ((req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>) | null = null;
  // The outage banner's source: is the runtime reachable (GET /status/runtime)?
  const health = new RuntimeHealth({
    runtime: client,
    address: embedded ? embedded.address : client.address,
    logger: options.logger.child({ component: "runtime-health" }),
  });
  health.start();
  const server = buildConsoleServer({
    config,
    env,
    ui,
    gateway,
    auth,
    acting,
    files: fileHandoffs,
    notifier: () => notifier,
    oidc: () => oidc,
    health,
    signInStreams,
    shutdownSignal: shutdown.signal,
    maxPayloadBytes: acting?.actions.maxPayloadBytes ?? config.maxPayloadBytes,
    serve: (req, res) => {
      if (nextHandler) return nextHandler(req, res);
      res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "retry-after": "1" });
      res.end("Baton is starting\n");
    },
    logger: options.logger,
  });

  // 3. Next.js.
  let app: NextApp | null = null;
  const cleanup = async () => {
    health.close();
    await acting?.escalations.close();
    acting?.escalationStore.close();
    await notifier?.close().catch(() => undefined);
    withdrawPageData();
    people?.close();
    signInStreams?.close();
    shutdown.abort();
    acting?.demo.close();
    gateway.close();
    collector?.close();
    acting?.templates.close();
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
      policies: acting?.actions.policies ?? null,
      logger: options.logger.child({ component: "webhooks" }),
    });
    acting?.escalations.start();
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
      actions: acting?.actions ?? null,
      files: fileHandoffs.files,
      notifier,
      server,
      close() {
        closing ??= (async () => {
          // A step in flight finishes first; the next start runs what falls due meanwhile.
          await acting?.escalations.close();
          // Requests in flight are cut; their deliveries are sent again at the next start.
          await notifier?.close();
          withdrawPageData();
          signInStreams?.close();
          shutdown.abort(); // ends every browser stream
          acting?.demo.close();
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
          acting?.templates.close();
          acting?.escalationStore.close();
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
