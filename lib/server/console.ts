// Start the whole console: the runtime (embedded in-process unless
// MACP_RUNTIME_URL points elsewhere), the gateway, Next.js and the HTTP server.
// Used by lib/server/main.ts and by integration tests.
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import type pino from "pino";
import { createGateway, type Gateway } from "@/lib/gateway/gateway";
import { consoleRoutes } from "@/lib/gateway/routes";
import { createRuntimeClient, type RuntimeReader } from "@/lib/gateway/runtime-client";
import type { RunningRuntime } from "@/lib/runtime";
import { ConsoleConfigError, type ConsoleConfig } from "./config";
import { startEmbeddedRuntime } from "./embedded";
import { createConsoleServer, listen, type Fallback } from "./http";

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
  server: http.Server;
  close(): Promise<void>;
}

export interface StartConsoleOptions {
  config: ConsoleConfig;
  /** Environment for the embedded runtime (defaults to process.env). */
  env?: Env;
  logger: pino.Logger;
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
    throw new ConsoleConfigError("no production build in .next/: run `npm run build` first (`npm start` builds when needed), or use `npm run dev`");
  }

  // 1. The runtime.
  let embedded: RunningRuntime | null = null;
  let client: RuntimeReader;
  let authNote: string;
  let storage: string;
  if (config.runtime.kind === "external") {
    client = createRuntimeClient({
      kind: "external",
      baseUrl: config.runtime.url,
      token: config.runtime.token,
      caPath: config.runtime.caPath,
    });
    authNote = "console reads with the bearer token in MACP_RUNTIME_TOKEN (must be an observer identity)";
    storage = "managed by the external runtime";
  } else {
    const started = await startEmbeddedRuntime(env, config.dir, options.logger.child({ component: "runtime" }));
    embedded = started.runtime;
    // A TLS runtime usually has a self-signed certificate: trust it directly.
    const tlsCa = embedded.url.startsWith("https:") ? env.MACP_TLS_CERT_PATH : undefined;
    client = createRuntimeClient({ kind: "embedded", baseUrl: embedded.url, token: started.plan.token, caPath: tlsCa });
    authNote =
      started.plan.authMode === "dev"
        ? "dev (insecure): `authorization: Bearer <id>` or `x-macp-agent-id: <id>` names the caller; the console reads as observer baton:console"
        : "static bearer tokens; the console reads as observer baton:console with a token generated for this process";
    storage = embedded.dataDir ?? "memory only (MACP_MEMORY_ONLY=1): nothing survives a restart";
  }

  // 2. The gateway and the HTTP server.
  const gateway = createGateway({
    runtime: client,
    logger: options.logger.child({ component: "gateway" }),
    graceMs: config.graceMs,
    heartbeatMs: config.heartbeatMs,
    runtimeAddress: embedded ? embedded.address : config.runtime.kind === "external" ? config.runtime.url : client.address,
  });
  const shutdown = new AbortController();
  let nextHandler: ((req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>) | null = null;
  const fallback: Fallback | undefined = ui
    ? (req, res) => {
        if (nextHandler) return nextHandler(req, res);
        res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "retry-after": "1" });
        res.end("Baton is starting\n");
      }
    : undefined;
  const server = createConsoleServer({ routes: consoleRoutes(gateway), fallback, shutdownSignal: shutdown.signal });

  // 3. Next.js.
  let app: NextApp | null = null;
  const cleanup = async () => {
    shutdown.abort();
    gateway.close();
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
    const runtimeAddress = embedded ? embedded.address : config.runtime.kind === "external" ? config.runtime.url : "";
    logger.info(
      {
        console: url,
        mode: config.dev ? "development" : "production",
        ui,
        runtime: runtimeAddress,
        runtimeKind: client.kind,
        storage,
        auth: authNote,
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
      server,
      close() {
        closing ??= (async () => {
          shutdown.abort(); // ends every browser stream
          gateway.close();
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
          await app?.close().catch((err: unknown) => logger.warn({ err }, "Next.js did not close cleanly"));
          await embedded?.close();
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
