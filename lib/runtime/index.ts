// Start the embedded MACP runtime: configuration, storage, kernel, auth and
// the gRPC server. Used by `npm run runtime`, by the console server (which
// embeds it unless MACP_RUNTIME_URL points elsewhere) and by tests.
import fs from "node:fs";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type pino from "pino";
import { createLogger } from "@/lib/logging/create-logger";
import { createAuthResolver, withReservedIdentities, type ReservedIdentities } from "./auth";
import { loadConfig, type RuntimeConfig } from "./config";
import { Kernel } from "./kernel";
import * as grpc from "@grpc/grpc-js";
import { MACPRuntimeService } from "@/lib/gen/macp/v1/core_pb";
import { RuntimeCatalogService } from "@/lib/gen/baton/v1/runtime_catalog_pb";
import type { ConnectRouter } from "@connectrpc/connect";
import { runtimeCatalogServiceImpl } from "./catalog-service";
import { addConnectService } from "./grpc-host";
import { runtimeServiceImpl } from "./server";
import { openStore } from "./store";
import { Subscriptions } from "./subscriptions";

export interface RunningRuntime {
  /** host:port actually bound (port 0 resolves to the real port). */
  address: string;
  /** Base URL for gRPC clients, e.g. http://127.0.0.1:50051 */
  url: string;
  /** Storage folder, or null when memory-only. */
  dataDir: string | null;
  authMode: "dev" | "tokens";
  kernel: Kernel;
  /** Streaming subscriptions per identity and what their buffers hold. */
  subscriptions: Subscriptions;
  config: RuntimeConfig;
  close(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string | undefined>;
  logger?: pino.Logger;
  /**
   * Dev auth only: identities that dev headers may not name, acted for
   * through delegate credentials (the embedding console's people).
   */
  reservedIdentities?: ReservedIdentities;
}

export async function startRuntime(options: StartOptions = {}): Promise<RunningRuntime> {
  const config = loadConfig(options.env ?? process.env);
  const logger =
    options.logger ?? createLogger({ level: config.logLevel, base: { component: "runtime" }, env: options.env ?? process.env });
  const baseAuth = createAuthResolver(config);
  const auth =
    options.reservedIdentities && baseAuth.mode === "dev" ? withReservedIdentities(baseAuth, options.reservedIdentities) : baseAuth;
  const store = openStore({
    memoryOnly: config.memoryOnly,
    dataDir: config.dataDir,
    logger,
    integrityCheck: config.storeIntegrityCheck,
  });
  let kernel: Kernel;
  try {
    kernel = await Kernel.open({ store, config, logger });
  } catch (e) {
    await store.close().catch(() => undefined);
    throw e;
  }

  const subscriptions = new Subscriptions(config);
  const deps = { kernel, auth, config, logger, subscriptions };
  let listening: Listening;
  try {
    listening = config.grpcServer === "connect" ? await listenConnect(config, deps) : await listenGrpcJs(config, deps);
  } catch (e) {
    await kernel.close();
    await store.close().catch(() => undefined);
    throw e;
  }
  const { address, url } = listening;
  logger.info(
    {
      address,
      storage: config.memoryOnly ? "memory-only (MACP_MEMORY_ONLY=1)" : store.description,
      auth: auth.describe(),
      tls: Boolean(config.tlsCertPath),
      server: config.grpcServer,
      resident: kernel.loadReport?.resident,
      maxSubscriptions: config.maxSubscriptions || "unlimited",
      listRows: config.listRows ? "served (baton.v1.RuntimeCatalogService)" : "off (MACP_LIST_ROWS=off)",
    },
    `MACP runtime listening on ${url}`,
  );

  let closing: Promise<void> | null = null;
  return {
    address,
    url,
    dataDir: config.memoryOnly ? null : config.dataDir,
    authMode: auth.mode,
    kernel,
    subscriptions,
    config,
    close() {
      closing ??= (async () => {
        await listening.close();
        await kernel.close();
        await store.close();
        logger.info({}, "MACP runtime stopped");
      })();
      return closing;
    },
  };
}

interface Listening {
  address: string;
  url: string;
  close(): Promise<void>;
}

type Deps = Parameters<typeof runtimeServiceImpl>[0] & { subscriptions: Subscriptions; config: RuntimeConfig };

/** Largest request accepted by the transport: room for an over-limit payload to get a PAYLOAD_TOO_LARGE Ack. */
const readMaxBytes = (config: RuntimeConfig) => Math.min(config.maxPayloadBytes * 4 + 65_536, 256 * 1_048_576);

function formatAddress(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Default: the service hosted on @grpc/grpc-js (h2c, or TLS when configured). */
async function listenGrpcJs(config: RuntimeConfig, deps: Deps): Promise<Listening> {
  const shutdown = new AbortController();
  const server = new grpc.Server({
    "grpc.max_receive_message_length": readMaxBytes(config),
    "grpc.max_send_message_length": -1,
    "grpc.max_concurrent_streams": 100_000,
  });
  addConnectService(server, MACPRuntimeService, runtimeServiceImpl({ ...deps, preEncodedResponses: true }), {
    shutdownSignal: shutdown.signal,
  });
  // Baton's extension: the list-row feed (off: the runtime answers UNIMPLEMENTED, like any plain MACP runtime).
  if (config.listRows)
    addConnectService(server, RuntimeCatalogService, runtimeCatalogServiceImpl(deps), { shutdownSignal: shutdown.signal });
  const creds = config.tlsCertPath
    ? grpc.ServerCredentials.createSsl(
        null,
        [{ cert_chain: fs.readFileSync(config.tlsCertPath), private_key: fs.readFileSync(config.tlsKeyPath as string) }],
        false,
      )
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(formatAddress(config.bindHost, config.bindPort), creds, (err, p) => (err ? reject(err) : resolve(p))),
  );
  const address = formatAddress(config.bindHost, port);
  return {
    address,
    url: `${config.tlsCertPath ? "https" : "http"}://${address}`,
    close: () =>
      new Promise<void>((resolve) => {
        shutdown.abort();
        const force = setTimeout(() => server.forceShutdown(), 2_000);
        force.unref();
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

/** Alternative (MACP_GRPC_SERVER=connect): connect-node, which also answers Connect and gRPC-web. */
async function listenConnect(config: RuntimeConfig, deps: Deps): Promise<Listening> {
  const routes = (router: ConnectRouter) => {
    router.service(MACPRuntimeService, runtimeServiceImpl(deps));
    if (config.listRows) router.service(RuntimeCatalogService, runtimeCatalogServiceImpl(deps));
  };
  const handler = connectNodeAdapter({ routes, readMaxBytes: readMaxBytes(config), grpc: true, grpcWeb: true, connect: true });
  const settings: http2.Settings = { maxConcurrentStreams: 100_000 };
  const server = config.tlsCertPath
    ? http2.createSecureServer(
        { cert: fs.readFileSync(config.tlsCertPath), key: fs.readFileSync(config.tlsKeyPath as string), settings },
        handler,
      )
    : http2.createServer({ settings }, handler);
  server.on("sessionError", (err) => deps.logger.warn({ err }, "HTTP/2 session error"));
  server.on("error", (err) => deps.logger.error({ err }, "gRPC server error"));
  await new Promise<void>((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once("error", onError);
    server.listen(config.bindPort, config.bindHost, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const address = formatAddress(addr.address, addr.port);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  return {
    address,
    url: `${config.tlsCertPath ? "https" : "http"}://${address}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sessions) s.close();
        setTimeout(() => {
          for (const s of sessions) s.destroy();
        }, 2_000).unref();
      }),
  };
}
