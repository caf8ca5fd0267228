// Console server configuration from the environment and command line.
// Invalid values fail fast with a message naming the variable.
//
//   PORT                   console HTTP port (default 3000; 0 picks a free port)
//   HOST                   console bind address (default 127.0.0.1)
//   MACP_RUNTIME_URL       use this external runtime (http:// h2c or https://)
//                          instead of starting the embedded one
//   MACP_RUNTIME_TOKEN     bearer token of an observer identity on that runtime
//   MACP_RUNTIME_CA_PATH   PEM CA bundle to trust for an https:// runtime
//   BATON_STREAM_GRACE_MS  keep upstream streams this long after the last
//                          browser leaves (default 2000)
//   BATON_HEARTBEAT_MS     heartbeat interval on browser streams (default 15000)
//   LOG_LEVEL              pino level (default: MACP_LOG_LEVEL or info)
//   BATON_REQUIRE_SIGN_IN  1 (default): reading sessions needs a signed-in
//                          account too, and signed-out page visits go to /login;
//                          0: reads are open to anyone who can reach the console
//                          (demos); actions always need sign-in
//   MACP_MAX_PAYLOAD_BYTES with an external runtime: its payload limit, so the
//                          console refuses larger uploads itself (default 1048576;
//                          the embedded runtime reports its own)
//   BATON_TRUST_PROXY      1: behind reverse proxies (X-Forwarded-Proto/-For believed)
//   BATON_TRUSTED_PROXY_HOPS how many proxies (default 1): the client address is
//                          that many X-Forwarded-For entries from the right
//   BATON_HEADERS_TIMEOUT_MS / BATON_REQUEST_TIMEOUT_MS / BATON_IDLE_TIMEOUT_MS
//                          slow or silent browser connections are closed
//                          (defaults 15 s, 60 s, max(40 s, 2 × heartbeat + 10 s))
//   BATON_MAX_CONNECTIONS_PER_ADDRESS  open connections per client address
//                          (default 64; 0 = no bound, the default behind a proxy)
//   BATON_DATA_DIR         the data folder (default ./data): runtime store,
//                          console catalog, users file, sign-ins, secret
//   BATON_CATALOG_PATH     the console catalog (default $BATON_DATA_DIR/console.sqlite;
//                          "memory" keeps it in memory, the default with MACP_MEMORY_ONLY=1)
//   BATON_MAX_STREAMS_PER_PERSON  live browser streams one signed-in person may
//                          hold (default 32; 0 = unlimited)
//   BATON_STREAM_BUFFER_BYTES / BATON_STREAM_STALL_MS  a session stream reads at
//                          most this far ahead of the browser (default 1 MiB), and a
//                          browser reading nothing this long is cut off (default 60 s)
//   BATON_CATALOG_CONCURRENCY  session histories the catalog reads at once (default 8)
//   BATON_IDLE_GC=0        no full collection after large browser streams end
//                          (lib/server/stream-gc.ts; needs node --expose-gc, as npm start runs it)
//   BATON_NO_UI=1 / --no-ui  serve only the Connect API (no Next.js)
//   --dev                  Next.js development mode (npm run dev)
// The embedded runtime reads its own MACP_* variables (see README).
import path from "node:path";
import { ProxyConfigError, trustedProxyHops } from "@/lib/accounts/client-address";
import { parseRuntimeUrl } from "@/lib/gateway/runtime-client";
import { batonDataDir } from "@/lib/data-dir";
import { parseStuckAfter } from "@/lib/macp/projections/status";

type Env = Record<string, string | undefined>;

export type RuntimeTarget = { kind: "embedded" } | { kind: "external"; url: string; token: string; caPath?: string };

export interface ConsoleConfig {
  host: string;
  port: number;
  /** Next.js development mode (npm run dev). */
  dev: boolean;
  /** Serve the Next.js UI; false serves only the Connect API. */
  ui: boolean;
  /** Project root (Next.js dir, ./data). */
  dir: string;
  runtime: RuntimeTarget;
  /** Keep upstream streams this long after the last browser leaves. */
  graceMs: number;
  /** Session pages with at most this many events are rendered on the server first (0: never). */
  previewMaxEvents: number;
  /** How long a page waits for that first view before rendering without it. */
  previewTimeoutMs: number;
  heartbeatMs: number;
  logLevel: string;
  /** ConsoleService reads (and pages) need a signed-in viewer. Default true; BATON_REQUIRE_SIGN_IN=0 opens reads. */
  requireSignIn: boolean;
  /** Payload limit of an external runtime (the embedded one reports its own). */
  maxPayloadBytes: number;
  /** Limits on browser connections (slow or silent clients). */
  connections: ConnectionLimits;
  /** The console catalog's file, or ":memory:". */
  catalogPath: string;
  /** Histories the catalog feeder reads at once. */
  catalogConcurrency: number;
  /** Live browser streams per signed-in person (0 = unlimited). */
  maxStreamsPerPerson: number;
  /** SubscribeSession: bytes read ahead of a browser. */
  streamBufferBytes: number;
  /** SubscribeSession: a browser reading nothing this long (buffer full) is cut off. */
  streamStallMs: number;
  /** The list's stuck threshold: an offer unanswered or an approval pending this long (BATON_STUCK_AFTER_MINUTES, default 15). */
  stuckAfterMs: number;
  /** How long one "minute" of an escalation chain is (BATON_ESCALATION_MINUTE_MS, default 60 000; tests use seconds). */
  escalationMinuteMs: number;
  /** After large browser streams end, ask for one full collection when the process has --expose-gc (BATON_IDLE_GC, default on). */
  idleGc: boolean;
}

/** How long a browser connection may take, and how many one address may hold. */
export interface ConnectionLimits {
  /** From the first byte of a request to the end of its headers. */
  headersTimeoutMs: number;
  /** From the first byte of a request to the end of its body (not the response: streams may run for hours). */
  requestTimeoutMs: number;
  /** A connection with no bytes either way for this long is closed. Always longer than the heartbeat interval. */
  idleTimeoutMs: number;
  /** Open connections per client address; 0 = no bound. */
  maxPerAddress: number;
}

export class ConsoleConfigError extends Error {
  override name = "ConsoleConfigError";
}

function int(env: Env, key: string, dflt: number, min: number, max: number): number {
  const raw = env[key];
  if (raw === undefined || raw.trim() === "") return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConsoleConfigError(`${key} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return n;
}

function flag(env: Env, key: string, dflt = false): boolean {
  const raw = env[key]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return dflt;
  if (raw === "0" || raw === "false") return false;
  if (raw === "1" || raw === "true") return true;
  throw new ConsoleConfigError(`${key} must be 1 or 0, got "${env[key]}"`);
}

/** `argv` flags: --dev (Next dev mode), --no-ui (Connect API only). */
export function loadConsoleConfig(env: Env, argv: readonly string[], dir: string): ConsoleConfig {
  const dev = argv.includes("--dev");
  const ui = !argv.includes("--no-ui") && env.BATON_NO_UI !== "1";
  const url = env.MACP_RUNTIME_URL?.trim();
  let runtime: RuntimeTarget = { kind: "embedded" };
  if (url) {
    try {
      parseRuntimeUrl(url);
    } catch (e) {
      throw new ConsoleConfigError((e as Error).message);
    }
    const token = env.MACP_RUNTIME_TOKEN?.trim();
    if (!token) {
      throw new ConsoleConfigError(
        "MACP_RUNTIME_URL is set but MACP_RUNTIME_TOKEN is not: the console needs the bearer token of an observer identity on that runtime",
      );
    }
    const caPath = env.MACP_RUNTIME_CA_PATH?.trim() || undefined;
    runtime = { kind: "external", url, token, caPath: caPath ? path.resolve(caPath) : undefined };
  } else if (env.MACP_RUNTIME_TOKEN || env.MACP_RUNTIME_CA_PATH) {
    throw new ConsoleConfigError("MACP_RUNTIME_TOKEN / MACP_RUNTIME_CA_PATH only apply with MACP_RUNTIME_URL (an external runtime)");
  }
  try {
    trustedProxyHops(env);
  } catch (e) {
    if (e instanceof ProxyConfigError) throw new ConsoleConfigError(e.message);
    throw e;
  }
  const heartbeatMs = int(env, "BATON_HEARTBEAT_MS", 15_000, 100, 600_000);
  return {
    host: env.HOST?.trim() || "127.0.0.1",
    port: int(env, "PORT", 3000, 0, 65_535),
    dev,
    ui,
    dir,
    runtime,
    graceMs: int(env, "BATON_STREAM_GRACE_MS", 2_000, 0, 600_000),
    previewMaxEvents: int(env, "BATON_PREVIEW_MAX_EVENTS", 25_000, 0, 100_000),
    previewTimeoutMs: int(env, "BATON_PREVIEW_TIMEOUT_MS", 400, 10, 10_000),
    heartbeatMs,
    logLevel: env.LOG_LEVEL || env.MACP_LOG_LEVEL || "info",
    requireSignIn: flag(env, "BATON_REQUIRE_SIGN_IN", true),
    maxPayloadBytes: int(env, "MACP_MAX_PAYLOAD_BYTES", 1_048_576, 1, 256 * 1_048_576),
    connections: connectionLimits(env, heartbeatMs),
    catalogPath: catalogPath(env, dir, runtime),
    catalogConcurrency: int(env, "BATON_CATALOG_CONCURRENCY", 8, 1, 256),
    maxStreamsPerPerson: int(env, "BATON_MAX_STREAMS_PER_PERSON", 32, 0, 100_000),
    streamBufferBytes: int(env, "BATON_STREAM_BUFFER_BYTES", 1_048_576, 65_536, 1024 * 1_048_576),
    streamStallMs: int(env, "BATON_STREAM_STALL_MS", 60_000, 100, 3_600_000),
    stuckAfterMs: stuckAfter(env),
    escalationMinuteMs: int(env, "BATON_ESCALATION_MINUTE_MS", 60_000, 100, 60_000),
    idleGc: flag(env, "BATON_IDLE_GC", true),
  };
}

function stuckAfter(env: Env): number {
  try {
    return parseStuckAfter(env.BATON_STUCK_AFTER_MINUTES);
  } catch (e) {
    throw new ConsoleConfigError((e as Error).message);
  }
}

/** BATON_CATALOG_PATH, else console.sqlite in the data folder (in memory when the embedded runtime is). */
function catalogPath(env: Env, dir: string, runtime: RuntimeTarget): string {
  const raw = env.BATON_CATALOG_PATH?.trim();
  if (raw === "memory" || raw === ":memory:") return ":memory:";
  if (raw) return path.resolve(dir, raw);
  // A catalog of a runtime that forgets everything at exit would describe sessions that no longer exist.
  if (runtime.kind === "embedded" && env.MACP_MEMORY_ONLY === "1") return ":memory:";
  return path.join(batonDataDir(env, dir), "console.sqlite");
}

function connectionLimits(env: Env, heartbeatMs: number): ConnectionLimits {
  const headersTimeoutMs = int(env, "BATON_HEADERS_TIMEOUT_MS", 15_000, 100, 600_000);
  const requestTimeoutMs = int(env, "BATON_REQUEST_TIMEOUT_MS", 60_000, 100, 3_600_000);
  if (requestTimeoutMs < headersTimeoutMs) {
    throw new ConsoleConfigError(
      `BATON_REQUEST_TIMEOUT_MS (${requestTimeoutMs}) must be at least BATON_HEADERS_TIMEOUT_MS (${headersTimeoutMs})`,
    );
  }
  // Open streams send a heartbeat every BATON_HEARTBEAT_MS; an idle timeout
  // shorter than that would cut healthy streams.
  const idleTimeoutMs = int(env, "BATON_IDLE_TIMEOUT_MS", Math.max(40_000, heartbeatMs * 2 + 10_000), 100, 3_600_000);
  if (idleTimeoutMs < heartbeatMs * 2) {
    throw new ConsoleConfigError(
      `BATON_IDLE_TIMEOUT_MS (${idleTimeoutMs}) must be at least twice BATON_HEARTBEAT_MS (${heartbeatMs}), or healthy streams would be cut`,
    );
  }
  // Behind a proxy every connection comes from the proxy's address: no bound unless asked for.
  const maxPerAddress = int(env, "BATON_MAX_CONNECTIONS_PER_ADDRESS", env.BATON_TRUST_PROXY === "1" ? 0 : 64, 0, 100_000);
  return { headersTimeoutMs, requestTimeoutMs, idleTimeoutMs, maxPerAddress };
}
