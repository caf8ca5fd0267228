// How an agent reaches a MACP runtime: the address normalised to a base URL
// (host:port, h2c or TLS), the CA to trust, the credentials sent with every
// call, and one HTTP/2 session (with keepalive pings) that all calls share.
import fs from "node:fs";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, type Http2SessionManager } from "@connectrpc/connect-node";
import { MACPRuntimeService } from "@/lib/gen/macp/v1/core_pb";
import { authHeaders, type AuthConfig } from "./auth";
import { MacpUsageError } from "./errors";
import { createSessionManager } from "./http2-session";

export const DEFAULT_RUNTIME_ADDRESS = "127.0.0.1:50051";

export interface TlsOptions {
  /** PEM file with the CA (or self-signed certificate) to trust. */
  caPath?: string;
  /** PEM text or bytes of the CA to trust. */
  ca?: string | Uint8Array;
  /** TLS server name, when it differs from the host in the address. */
  serverName?: string;
}

/** Where the runtime is and how to reach it. */
export interface ConnectionOptions {
  /** `host:port`, `http://host:port` (h2c) or `https://host:port` (TLS). Default 127.0.0.1:50051. */
  address?: string;
  auth?: AuthConfig;
  /** Use TLS: `true`, or options with a CA to trust. Implied by an https:// address or `caPath`. */
  tls?: boolean | TlsOptions;
  /** Shorthand for `tls: { caPath }`. */
  caPath?: string;
}

/** An open connection: the runtime's RPCs over one HTTP/2 session. */
export interface RuntimeConnection {
  baseUrl: string;
  /** TLS (https). */
  secure: boolean;
  rpc: Client<typeof MACPRuntimeService>;
  /** The HTTP/2 session; aborting it ends every call. */
  sessionManager: Http2SessionManager;
}

/** Normalise `host:port` or a URL into the base URL connect-node expects. */
export function runtimeBaseUrl(address: string, tls = false): string {
  const raw = address.trim();
  if (raw === "") throw new MacpUsageError("runtime address is empty");
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw)?.[1]?.toLowerCase();
  let url: URL;
  if (scheme === undefined) {
    url = new URL(`${tls ? "https" : "http"}://${raw}`);
  } else {
    const mapped = scheme === "grpc" ? "http" : scheme === "grpcs" ? "https" : scheme;
    if (mapped !== "http" && mapped !== "https") {
      throw new MacpUsageError(`unsupported runtime address scheme "${scheme}://" (use host:port, http:// or https://)`);
    }
    url = new URL(`${tls && mapped === "http" ? "https" : mapped}://${raw.slice(scheme.length + 3)}`);
  }
  if (url.pathname !== "/" && url.pathname !== "") {
    throw new MacpUsageError(`runtime address must not have a path: ${address}`);
  }
  // A bare host gets the MACP default port; a URL keeps its scheme's default.
  if (scheme === undefined && !/:\d+$/.test(raw)) url.port = "50051";
  return `${url.protocol}//${url.host}`;
}

/** Connect to the runtime at `options.address`; a CA file that cannot be read throws MacpUsageError. */
export function connectRuntime(options: ConnectionOptions): RuntimeConnection {
  const tlsOpts: TlsOptions | undefined = typeof options.tls === "object" ? options.tls : options.tls || options.caPath ? {} : undefined;
  const caPath = tlsOpts?.caPath ?? options.caPath;
  const baseUrl = runtimeBaseUrl(options.address ?? DEFAULT_RUNTIME_ADDRESS, tlsOpts !== undefined);
  const secure = baseUrl.startsWith("https:");
  let ca: string | Uint8Array | undefined = tlsOpts?.ca;
  if (caPath !== undefined) {
    try {
      ca = fs.readFileSync(caPath);
    } catch (e) {
      throw new MacpUsageError(`cannot read CA file ${caPath}: ${(e as Error).message}`);
    }
  }
  const nodeOptions = secure
    ? {
        ...(ca !== undefined ? { ca: typeof ca === "string" ? ca : Buffer.from(ca) } : {}),
        ...(tlsOpts?.serverName ? { servername: tlsOpts.serverName } : {}),
      }
    : {};
  const sessionManager = createSessionManager(baseUrl, { pingIntervalMs: 30_000 }, nodeOptions);
  const interceptors: Interceptor[] = [];
  if (options.auth) {
    const headers = authHeaders(options.auth);
    interceptors.push((next) => (req) => {
      for (const [k, v] of Object.entries(headers)) req.header.set(k, v);
      return next(req);
    });
  }
  const transport = createGrpcTransport({ baseUrl, sessionManager, interceptors });
  return { baseUrl, secure, rpc: createClient(MACPRuntimeService, transport), sessionManager };
}
