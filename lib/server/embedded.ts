// Starting the embedded MACP runtime in-process for the console, with the
// console's own read-only observer identity added to whatever auth the user
// configured:
// - dev auth (no tokens): `baton:console` is appended to MACP_DEV_OBSERVERS
//   and the console calls with `authorization: Bearer baton:console`;
// - static tokens: a random per-process token for `baton:console` with
//   is_observer=true (and no right to start sessions) is appended to
//   MACP_AUTH_TOKENS_JSON, which the runtime merges with MACP_AUTH_TOKENS_FILE.
// With nothing configured, a loopback bind defaults to dev auth over
// plaintext (MACP_ALLOW_INSECURE=1) and data goes to ./data/runtime. In dev
// auth the participant ids of the console's people are reserved: only the
// console acts for them (console-people.ts).
import { batonDataDir } from "@/lib/data-dir";
import { randomBytes } from "node:crypto";
import path from "node:path";
import type pino from "pino";
import { CONSOLE_OBSERVER_IDENTITY } from "@/lib/gateway/runtime-client";
import { startRuntime, type RunningRuntime } from "@/lib/runtime";
import type { ReservedIdentities } from "@/lib/runtime/auth";
import { isLoopback, parseBindAddr } from "@/lib/runtime/config";

type Env = Record<string, string | undefined>;

export interface EmbeddedPlan {
  env: Env;
  /** Bearer token the console sends to the runtime. */
  token: string;
  authMode: "dev" | "tokens";
}

function appendObserverToken(raw: string | undefined, token: string): string {
  const entry = { token, sender: CONSOLE_OBSERVER_IDENTITY, is_observer: true, can_start_sessions: false };
  if (!raw || raw.trim() === "") return JSON.stringify([entry]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return raw; // the runtime reports the invalid JSON with its own message
  }
  if (Array.isArray(parsed)) return JSON.stringify([...parsed, entry]);
  if (parsed && typeof parsed === "object" && Array.isArray((parsed as { tokens?: unknown }).tokens)) {
    const obj = parsed as { tokens: unknown[] };
    return JSON.stringify({ ...obj, tokens: [...obj.tokens, entry] });
  }
  return raw;
}

/** The environment for the embedded runtime and the console's credentials for it. */
export function planEmbeddedRuntime(userEnv: Env, dir: string): EmbeddedPlan {
  const env: Env = { ...userEnv };
  const tokensConfigured = Boolean(env.MACP_AUTH_TOKENS_JSON || env.MACP_AUTH_TOKENS_FILE);
  if (!tokensConfigured && !env.MACP_TLS_CERT_PATH && env.MACP_ALLOW_INSECURE === undefined) {
    let loopback = false;
    try {
      loopback = isLoopback(parseBindAddr(env.MACP_BIND_ADDR ?? "127.0.0.1:50051").host);
    } catch {
      // an invalid MACP_BIND_ADDR is reported by the runtime
    }
    if (loopback) env.MACP_ALLOW_INSECURE = "1";
  }
  if (!env.MACP_DATA_DIR) env.MACP_DATA_DIR = path.join(batonDataDir(env, dir), "runtime");

  if (tokensConfigured) {
    const token = `baton-console-${randomBytes(24).toString("hex")}`;
    env.MACP_AUTH_TOKENS_JSON = appendObserverToken(env.MACP_AUTH_TOKENS_JSON, token);
    return { env, token, authMode: "tokens" };
  }
  const observers = (env.MACP_DEV_OBSERVERS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (!observers.includes(CONSOLE_OBSERVER_IDENTITY)) observers.push(CONSOLE_OBSERVER_IDENTITY);
  env.MACP_DEV_OBSERVERS = observers.join(",");
  return { env, token: CONSOLE_OBSERVER_IDENTITY, authMode: "dev" };
}

export async function startEmbeddedRuntime(
  userEnv: Env,
  dir: string,
  logger: pino.Logger,
  /** The console's people (dev auth: their ids are reserved for the console). */
  people?: ReservedIdentities,
): Promise<{ runtime: RunningRuntime; plan: EmbeddedPlan }> {
  const plan = planEmbeddedRuntime(userEnv, dir);
  const runtime = await startRuntime({ env: plan.env, logger, ...(people ? { reservedIdentities: people } : {}) });
  return { runtime, plan };
}
