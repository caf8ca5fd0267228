// Runtime configuration from the environment. Every variable is documented in
// the README; invalid values fail fast with a message naming the variable.
import { batonDataDir } from "@/lib/data-dir";
import path from "node:path";

export interface RuntimeConfig {
  bindHost: string;
  bindPort: number;
  tlsCertPath?: string;
  tlsKeyPath?: string;
  allowInsecure: boolean;
  memoryOnly: boolean;
  dataDir: string;
  maxPayloadBytes: number;
  sessionStartsPerMinute: number;
  messagesPerMinute: number;
  authTokensJson?: string;
  authTokensFile?: string;
  devObservers: string[];
  /** Interval of the TTL sweep that expires idle sessions. */
  expirySweepMs: number;
  /** Envelopes a slow stream subscriber may lag behind before it is ended. */
  subscriberBuffer: number;
  /** Bytes of envelopes a slow stream subscriber may lag behind before it is ended. */
  subscriberBufferBytes: number;
  /** Concurrent streaming subscriptions per identity (0: unlimited). */
  maxSubscriptions: number;
  /** The same for observer identities (0: unlimited), unless their token sets max_subscriptions. */
  observerMaxSubscriptions: number;
  /** Recently closed sessions kept in memory (count and approximate bytes). */
  closedSessionCache: number;
  closedSessionCacheBytes: number;
  /** When the store runs PRAGMA quick_check at open. */
  storeIntegrityCheck: "auto" | "always";
  /** Cumulative suspension cap. */
  maxSuspendMs: number;
  logLevel: string;
  /** Serve baton.v1.RuntimeCatalogService (the list-row feed); off: it answers UNIMPLEMENTED (rows are still kept). */
  listRows: boolean;
  /** Which gRPC server hosts the agent-facing port. */
  grpcServer: "grpc-js" | "connect";
  runtimeName: string;
  runtimeVersion: string;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Record<string, string | undefined>;

function int(env: Env, key: string, dflt: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[key];
  if (raw === undefined || raw.trim() === "") return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${key} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return n;
}

function flag(env: Env, key: string): boolean {
  const raw = (env[key] ?? "").trim().toLowerCase();
  if (raw === "" || raw === "0" || raw === "false" || raw === "no") return false;
  if (raw === "1" || raw === "true" || raw === "yes") return true;
  throw new ConfigError(`${key} must be 1 or 0, got "${env[key]}"`);
}

export function parseBindAddr(raw: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(raw.trim());
  if (!m) throw new ConfigError(`MACP_BIND_ADDR must look like host:port, got "${raw}"`);
  const port = Number(m[2]);
  if (port < 0 || port > 65535) throw new ConfigError(`MACP_BIND_ADDR port out of range: ${port}`);
  const host = m[1]!.replace(/^\[|\]$/g, "");
  return { host, port };
}

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

function grpcServer(raw: string | undefined): RuntimeConfig["grpcServer"] {
  const v = (raw ?? "").trim();
  if (v === "" || v === "grpc-js") return "grpc-js";
  if (v === "connect") return "connect";
  throw new ConfigError(`MACP_GRPC_SERVER must be "grpc-js" or "connect", got "${raw}"`);
}

function onOff(env: Env, key: string, dflt: boolean): boolean {
  const raw = (env[key] ?? "").trim().toLowerCase();
  if (raw === "") return dflt;
  if (raw === "on" || raw === "1" || raw === "true" || raw === "yes") return true;
  if (raw === "off" || raw === "0" || raw === "false" || raw === "no") return false;
  throw new ConfigError(`${key} must be "on" or "off", got "${env[key]}"`);
}

function integrityCheck(raw: string | undefined): RuntimeConfig["storeIntegrityCheck"] {
  const v = (raw ?? "").trim();
  if (v === "" || v === "auto") return "auto";
  if (v === "always") return "always";
  throw new ConfigError(`MACP_STORE_INTEGRITY_CHECK must be "auto" or "always", got "${raw}"`);
}

export function loadConfig(env: Env = process.env): RuntimeConfig {
  const { host, port } = parseBindAddr(env.MACP_BIND_ADDR ?? "127.0.0.1:50051");
  const tlsCertPath = env.MACP_TLS_CERT_PATH || undefined;
  const tlsKeyPath = env.MACP_TLS_KEY_PATH || undefined;
  if (Boolean(tlsCertPath) !== Boolean(tlsKeyPath)) {
    throw new ConfigError("MACP_TLS_CERT_PATH and MACP_TLS_KEY_PATH must be set together");
  }
  const allowInsecure = flag(env, "MACP_ALLOW_INSECURE");
  if (!tlsCertPath && !allowInsecure) {
    throw new ConfigError(
      "refusing to serve plaintext gRPC: set MACP_TLS_CERT_PATH/MACP_TLS_KEY_PATH, or MACP_ALLOW_INSECURE=1 for development",
    );
  }
  return {
    bindHost: host,
    bindPort: port,
    tlsCertPath,
    tlsKeyPath,
    allowInsecure,
    memoryOnly: flag(env, "MACP_MEMORY_ONLY"),
    dataDir: path.resolve(env.MACP_DATA_DIR || path.join(batonDataDir(env), "runtime")),
    maxPayloadBytes: int(env, "MACP_MAX_PAYLOAD_BYTES", 1_048_576, 1, 64 * 1_048_576),
    sessionStartsPerMinute: int(env, "MACP_SESSION_START_LIMIT_PER_MINUTE", 60, 0),
    messagesPerMinute: int(env, "MACP_MESSAGE_LIMIT_PER_MINUTE", 600, 0),
    authTokensJson: env.MACP_AUTH_TOKENS_JSON || undefined,
    authTokensFile: env.MACP_AUTH_TOKENS_FILE || undefined,
    devObservers: (env.MACP_DEV_OBSERVERS ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    expirySweepMs: int(env, "MACP_EXPIRY_SWEEP_MS", 250, 10, 60_000),
    subscriberBuffer: int(env, "MACP_SUBSCRIBER_BUFFER", 1024, 1, 1_000_000),
    subscriberBufferBytes: int(env, "MACP_SUBSCRIBER_BUFFER_BYTES", 16 * 1_048_576, 1, 1_073_741_824),
    maxSubscriptions: int(env, "MACP_MAX_SUBSCRIPTIONS", 64, 0),
    observerMaxSubscriptions: int(env, "MACP_OBSERVER_MAX_SUBSCRIPTIONS", 0, 0),
    closedSessionCache: int(env, "MACP_CLOSED_SESSION_CACHE", 1024, 0, 10_000_000),
    closedSessionCacheBytes: int(env, "MACP_CLOSED_SESSION_CACHE_BYTES", 16 * 1_048_576, 0),
    storeIntegrityCheck: integrityCheck(env.MACP_STORE_INTEGRITY_CHECK),
    maxSuspendMs: int(env, "MACP_MAX_SUSPEND_MS", 7 * 24 * 3600 * 1000, 1),
    logLevel: env.MACP_LOG_LEVEL || env.LOG_LEVEL || "info",
    listRows: onOff(env, "MACP_LIST_ROWS", true),
    grpcServer: grpcServer(env.MACP_GRPC_SERVER),
    runtimeName: "baton-runtime",
    runtimeVersion: "0.1.0",
  };
}
