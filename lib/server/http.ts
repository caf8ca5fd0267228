// The console's single HTTP/1.1 server: plain HTTP routes (sign-in, /auth/*)
// first, then Connect routes (ConsoleService, ActionService), everything else
// to Next.js (or a plain 404 when the UI is not served).
// Compression (README "Compression"): Connect streams must reach the
// browser message by message, so streaming methods have their own adapter
// that never compresses, and proxies are told not to buffer them. Unary
// Connect replies of 1 KiB or more are gzipped when the browser accepts it
// (Accept-Encoding, q-values respected). /_next/static files are served
// pre-compressed (static-assets.ts); pages are compressed by Next.js itself
// (next.config.ts `compress`), which only ever sees page requests. Every
// response carries the security headers of security-headers.ts.
import http from "node:http";
import type { DescService } from "@bufbuild/protobuf";
import { createContextValues, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { compressionGzip, connectNodeAdapter } from "@connectrpc/connect-node";
import { ActionService } from "@/lib/gen/baton/v1/actions_pb";
import { ConsoleService } from "@/lib/gen/baton/v1/console_pb";
import { FileHandoffService } from "@/lib/gen/baton/v1/files_pb";
import { kCutOffConnection } from "@/lib/gateway/stream-caps";
import { acceptedCodings } from "./accept-encoding";
import { applySecurityHeaders, type SecurityHeaderOptions } from "./security-headers";

export type Fallback = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>;

/** Handles a request and returns true, or returns false to pass it on. */
export type HttpRoutes = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

export interface ConsoleServerOptions {
  routes: (router: ConnectRouter) => void;
  /** Plain HTTP routes tried before Connect (e.g. /auth/*). */
  httpRoutes?: HttpRoutes;
  /** Largest Connect request body accepted (uploads). Default: connect-node's. */
  readMaxBytes?: number;
  /** Non-Connect requests (Next.js). Default: 404. */
  fallback?: Fallback;
  /** Aborting it aborts every handler's signal, ending all browser streams. */
  shutdownSignal?: AbortSignal;
  /** Around every Connect call of every service (e.g. SignInStreams: streams follow their sign-in). */
  interceptors?: Interceptor[];
  /** Security headers on every response, and a per-request CSP nonce for pages (security-headers.ts). */
  security?: SecurityHeaderOptions;
  /** Static files tried after httpRoutes (the pre-compressed /_next/static, static-assets.ts). */
  staticAssets?: HttpRoutes;
}

/** Path prefix of Baton's Connect service. */
export const CONSOLE_SERVICE_PREFIX = `/${ConsoleService.typeName}/`;
/** Path prefix of the actions service. */
export const ACTION_SERVICE_PREFIX = `/${ActionService.typeName}/`;
/** Path prefix of the v0.1 file handoffs service. */
export const FILE_SERVICE_PREFIX = `/${FileHandoffService.typeName}/`;

function notFound(_req: http.IncomingMessage, res: http.ServerResponse): void {
  res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
  res.end("Not found. (The Baton UI is not served by this process; the Connect API is.)\n");
}

/** Unary replies smaller than this go out as they are (compression would not pay). */
export const COMPRESS_MIN_BYTES = 1024;

/** URL paths of the streaming methods of the given services ("/pkg.Service/Method"). */
export function streamingPaths(services: readonly DescService[]): Set<string> {
  const out = new Set<string>();
  for (const s of services) for (const m of s.methods) if (m.methodKind !== "unary") out.add(`/${s.typeName}/${m.name}`);
  return out;
}

export function createConsoleHandler(options: ConsoleServerOptions): http.RequestListener {
  const fallback = options.fallback ?? notFound;
  const security = options.security;
  const common = {
    routes: options.routes,
    shutdownSignal: options.shutdownSignal,
    // A stream parked on a browser that never reads can only end by closing its connection.
    contextValues: (req: unknown) => createContextValues().set(kCutOffConnection, () => (req as http.IncomingMessage).socket.destroy()),
    ...(options.interceptors ? { interceptors: options.interceptors } : {}),
    ...(options.readMaxBytes !== undefined ? { readMaxBytes: options.readMaxBytes } : {}),
    // Browsers speak Connect (or gRPC-web); plain gRPC needs HTTP/2.
    connect: true,
    grpcWeb: true,
    grpc: false,
  } as const;
  // Streams: no compression at all (a compressed request is refused with
  // Unimplemented, as before), so every message is written and flushed as it comes.
  const streams = connectNodeAdapter({ ...common, acceptCompression: [] });
  const streamPaths = streamingPaths([ConsoleService, ActionService, FileHandoffService]);
  const unary = connectNodeAdapter({
    ...common,
    // gzip only: connect-node's brotli runs at quality 11, far too slow per request.
    acceptCompression: [compressionGzip],
    compressMinBytes: COMPRESS_MIN_BYTES,
    fallback: (req, res) => {
      // Only HTTP/1.1 reaches this server, so the request/response are the http module's.
      // Pages: a CSP with this request's nonce instead of the default one.
      if (security) applySecurityHeaders(req as http.IncomingMessage, res as http.ServerResponse, security, true);
      const r = fallback(req as http.IncomingMessage, res as http.ServerResponse);
      if (r instanceof Promise) {
        r.catch((err: unknown) => {
          if (!res.headersSent) {
            res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
            res.end("Internal error\n");
          } else res.destroy(err instanceof Error ? err : undefined);
        });
      }
    },
  });
  const httpRoutes = options.httpRoutes;
  const staticAssets = options.staticAssets;
  return (req, res) => {
    if (security) applySecurityHeaders(req, res, security, false);
    if (httpRoutes?.(req, res)) return;
    if (staticAssets?.(req, res)) return;
    if (
      req.url?.startsWith(CONSOLE_SERVICE_PREFIX) ||
      req.url?.startsWith(ACTION_SERVICE_PREFIX) ||
      req.url?.startsWith(FILE_SERVICE_PREFIX)
    ) {
      res.setHeader("x-accel-buffering", "no");
      res.setHeader("cache-control", "no-store, no-transform");
      // connect-node waits for 'drain' after a write that returned false, but
      // a response whose client went away emits only 'close', so that wait
      // (and the handler's generator) would hang forever. Wake it up: its next
      // write then fails and the handler is unwound normally.
      res.once("close", () => {
        if (!res.writableFinished) res.emit("drain");
      });
      const q = req.url.indexOf("?");
      if (streamPaths.has(q < 0 ? req.url : req.url.slice(0, q))) {
        streams(req, res);
        return;
      }
      // connect-node takes Accept-Encoding names in order and ignores
      // q-values: hand it only what the browser accepts, best first. gRPC-web's
      // own header is not honoured (browsers never send it).
      const codings = acceptedCodings(req.headers["accept-encoding"], ["gzip"]);
      if (codings.length > 0) req.headers["accept-encoding"] = codings.join(", ");
      else delete req.headers["accept-encoding"];
      delete req.headers["grpc-accept-encoding"];
    }
    unary(req, res);
  };
}

/** Connection limits (ConsoleConfig.connections). */
export interface ServerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  idleTimeoutMs: number;
  /** 0 = no bound. */
  maxPerAddress: number;
}

/**
 * A connection that trickles its request (one byte, or a body a byte at a
 * time) or sends nothing at all would otherwise hold a socket forever:
 * - headers must arrive within headersTimeoutMs and the whole request within
 *   requestTimeoutMs (Node answers 408 and closes; a response may then run
 *   for as long as it likes, which is what server streams do);
 * - a socket with no traffic either way for idleTimeoutMs is destroyed (open
 *   streams send heartbeats well within it);
 * - one address may hold at most maxPerAddress connections; more are closed
 *   at once (and logged once per burst by the caller's onRefused).
 */
export function applyServerLimits(server: http.Server, limits: ServerLimits, onRefused?: (address: string, open: number) => void): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.setTimeout(limits.idleTimeoutMs);
  if (limits.maxPerAddress <= 0) return;
  const open = new Map<string, number>();
  server.on("connection", (socket) => {
    const address = socket.remoteAddress ?? "unknown";
    const count = (open.get(address) ?? 0) + 1;
    if (count > limits.maxPerAddress) {
      onRefused?.(address, count - 1);
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

export function createConsoleServer(
  options: ConsoleServerOptions & { limits?: ServerLimits; onConnectionRefused?: (address: string, open: number) => void },
): http.Server {
  const limits = options.limits;
  const server = http.createServer(
    {
      noDelay: true,
      keepAlive: true,
      // Node checks the header and request deadlines on this interval (default 30 s).
      ...(limits
        ? {
            connectionsCheckingInterval: Math.max(
              50,
              Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)),
            ),
          }
        : {}),
    },
    createConsoleHandler(options),
  );
  if (limits) applyServerLimits(server, limits, options.onConnectionRefused);
  return server;
}

/** Listen and resolve with the bound address (port 0 picks a free port). */
export function listen(server: http.Server, port: number, host: string): Promise<{ host: string; port: number }> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      const addr = server.address();
      if (addr === null || typeof addr === "string") return reject(new Error("server has no TCP address"));
      resolve({ host: addr.address, port: addr.port });
    });
  });
}
