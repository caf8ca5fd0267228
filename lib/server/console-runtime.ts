// The console's first step: its MACP runtime. Either the embedded runtime,
// started in this process (with the console's people reserved on it), or an
// external one at MACP_RUNTIME_URL; the clients the console reads and acts
// through, and how the v0.1 handoff bridge reaches it. Also the admin's
// cancel as a session's initiator, which only the embedded runtime allows.
import type pino from "pino";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Accounts } from "@/lib/accounts/accounts";
import type { Ack } from "@/lib/gen/macp/v1/envelope_pb";
import type { UserAuthMode } from "@/lib/gateway/identity";
import { createRuntimeActions, type RuntimeActions } from "@/lib/gateway/runtime-actions";
import { createRuntimeClient, type RuntimeReader } from "@/lib/gateway/runtime-client";
import type { RunningRuntime } from "@/lib/runtime";
import { ControlError } from "@/lib/runtime/kernel";
import { ConsolePeople } from "./console-people";
import type { ConsoleConfig } from "./config";
import { startEmbeddedRuntime } from "./embedded";
import type { BridgeRuntime } from "./file-handoffs-setup";

type Env = Record<string, string | undefined>;

export interface ConsoleRuntime {
  /** The embedded runtime, when there is one. */
  embedded: RunningRuntime | null;
  /** The console's people on the embedded runtime (with accounts). */
  people: ConsolePeople | null;
  /** How the console reads (as an observer). */
  client: RuntimeReader;
  /** How people's actions are sent (with accounts). */
  writer: RuntimeActions | null;
  /** How people are authenticated on the runtime. */
  userAuthMode: UserAuthMode;
  /** For the start-up log line: how the console reads, and where the runtime keeps its data. */
  authNote: string;
  storage: string;
}

/** Start the embedded runtime or connect to the external one. */
export async function connectRuntime(
  config: ConsoleConfig,
  env: Env,
  accounts: Accounts | null,
  logger: pino.Logger,
): Promise<ConsoleRuntime> {
  if (config.runtime.kind === "external") {
    const client = createRuntimeClient({
      kind: "external",
      baseUrl: config.runtime.url,
      token: config.runtime.token,
      caPath: config.runtime.caPath,
    });
    const writer = accounts
      ? createRuntimeActions({ baseUrl: config.runtime.url, readToken: config.runtime.token, caPath: config.runtime.caPath })
      : null;
    return {
      embedded: null,
      people: null,
      client,
      writer,
      userAuthMode: "tokens",
      authNote: "console reads with the bearer token in MACP_RUNTIME_TOKEN (must be an observer identity)",
      storage: "managed by the external runtime",
    };
  }
  let people: ConsolePeople | null = null;
  if (accounts) {
    people = new ConsolePeople(accounts, logger.child({ component: "runtime" }));
    await people.start();
  }
  let started: Awaited<ReturnType<typeof startEmbeddedRuntime>>;
  try {
    started = await startEmbeddedRuntime(env, config.dir, logger.child({ component: "runtime" }), people ?? undefined);
  } catch (e) {
    people?.close();
    throw e;
  }
  const embedded = started.runtime;
  // A TLS runtime usually has a self-signed certificate: trust it directly.
  const tlsCa = embedded.url.startsWith("https:") ? env.MACP_TLS_CERT_PATH : undefined;
  const client = createRuntimeClient({ kind: "embedded", baseUrl: embedded.url, token: started.plan.token, caPath: tlsCa });
  const writer = accounts ? createRuntimeActions({ baseUrl: embedded.url, readToken: started.plan.token, caPath: tlsCa }) : null;
  return {
    embedded,
    people,
    client,
    writer,
    userAuthMode: started.plan.authMode,
    authNote:
      started.plan.authMode === "dev"
        ? "dev (insecure): `authorization: Bearer <id>` or `x-macp-agent-id: <id>` names an agent; people's ids are reserved for the console; the console reads as observer baton:console"
        : "static bearer tokens; the console reads as observer baton:console with a token generated for this process",
    storage: embedded.dataDir ?? "memory only (MACP_MEMORY_ONLY=1): nothing survives a restart",
  };
}

/** How the v0.1 handoff bridge reaches this runtime (file-handoffs-setup.ts). */
export function bridgeRuntime(runtime: ConsoleRuntime, config: ConsoleConfig, env: Env): BridgeRuntime {
  const { embedded, people, userAuthMode } = runtime;
  const tls = embedded ? embedded.url.startsWith("https:") : config.runtime.kind === "external" && config.runtime.url.startsWith("https:");
  const caPath = embedded
    ? tls
      ? env.MACP_TLS_CERT_PATH
      : undefined
    : config.runtime.kind === "external"
      ? config.runtime.caPath
      : undefined;
  return {
    address: embedded ? embedded.address : config.runtime.kind === "external" ? config.runtime.url : "",
    tls,
    ...(caPath ? { caPath } : {}),
    authMode: embedded ? userAuthMode : "tokens",
    ...(people && userAuthMode === "dev"
      ? { personCredential: (id: string) => (people.isReserved(id) ? people.credentialFor(id) : undefined) }
      : {}),
  };
}

/**
 * An admin's cancel of a session they have no authority in: the embedded
 * runtime runs in this process, so the console cancels as the session's
 * initiator directly (the runtime only lets the initiator or a commitment
 * authority cancel). The reason names the admin.
 */
export async function cancelAsInitiator(kernel: RunningRuntime["kernel"], sessionId: string, reason: string): Promise<Ack> {
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
