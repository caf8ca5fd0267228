// Start the embedded MACP runtime: configuration, storage, kernel, auth and
// the gRPC server. Used by `npm run runtime`, by the console server (which
// embeds it unless MACP_RUNTIME_URL points elsewhere) and by tests.
import fs from "node:fs";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import pino from "pino";
import { createAuthResolver } from "./auth";
import { loadConfig, type RuntimeConfig } from "./config";
import { Kernel } from "./kernel";
import { runtimeRoutes } from "./server";
import { openStore } from "./store";

export interface RunningRuntime {
  /** host:port actually bound (port 0 resolves to the real port). */
  address: string;
  /** Base URL for gRPC clients, e.g. http://127.0.0.1:50051 */
  url: string;
  /** Storage folder, or null when memory-only. */
  dataDir: string | null;
  authMode: "dev" | "tokens";
  kernel: Kernel;
  config: RuntimeConfig;
  close(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string | undefined>;
  logger?: pino.Logger;
}

export async function startRuntime(options: StartOptions = {}): Promise<RunningRuntime> {
  const config = loadConfig(options.env ?? process.env);
  const logger = options.logger ?? pino({ level: config.logLevel, base: { component: "runtime" } });
  const auth = createAuthResolver(config);
  const store = await openStore({ memoryOnly: config.memoryOnly, dataDir: config.dataDir, logger });
  let kernel: Kernel;
  try {
    kernel = Kernel.open({ store, config, logger });
  } catch (e) {
    await store.close().catch(() => undefined);
    throw e;
  }

  const handler = connectNodeAdapter({
    routes: runtimeRoutes({ kernel, auth, config, logger }),
    // Room for an over-limit payload to get a PAYLOAD_TOO_LARGE Ack rather
    // than a transport error; anything larger is refused by the transport.
    readMaxBytes: Math.min(config.maxPayloadBytes * 4 + 65_536, 256 * 1_048_576),
    grpc: true,
    grpcWeb: true,
    connect: true,
  });
  const settings: http2.Settings = { maxConcurrentStreams: 100_000 };
  const server = config.tlsCertPath
    ? http2.createSecureServer(
        { cert: fs.readFileSync(config.tlsCertPath), key: fs.readFileSync(config.tlsKeyPath as string), settings },
        handler,
      )
    : http2.createServer({ settings }, handler);
  server.on("sessionError", (err) => logger.warn({ err }, "HTTP/2 session error"));
  server.on("error", (err) => logger.error({ err }, "gRPC server error"));

  await new Promise<void>((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once("error", onError);
    server.listen(config.bindPort, config.bindHost, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  const address = `${host}:${addr.port}`;
  const url = `${config.tlsCertPath ? "https" : "http"}://${address}`;
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  logger.info(
    {
      address,
      storage: config.memoryOnly ? "memory-only (MACP_MEMORY_ONLY=1)" : store.description,
      auth: auth.describe(),
      tls: Boolean(config.tlsCertPath),
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
    config,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          for (const s of sessions) s.close();
          setTimeout(() => {
            for (const s of sessions) s.destroy();
          }, 2_000).unref();
        });
        await kernel.close();
        await store.close();
        logger.info({}, "MACP runtime stopped");
      })();
      return closing;
    },
  };
}
