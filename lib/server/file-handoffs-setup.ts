// v0.1 file-based handoffs in the console server, from the environment:
//
//   BATON_HANDOFF_DIRS     directories to watch (unset: nothing happens)
//   BATON_HANDOFF_BRIDGE   1: mirror every watched directory into MACP Task
//                          sessions on the console's runtime (embedded or
//                          external) with HandoffBridge; or a comma-separated
//                          list of some of those directories; 0/unset: off
//   BATON_HANDOFF_BRIDGE_PARTICIPANTS  MACP agents added to every bridged
//                          session (who may take offers made to anyone)
//   BATON_HANDOFF_BRIDGE_TOKENS  tokens file ({token, sender} list, the
//                          runtime's MACP_AUTH_TOKENS_FILE format): how the
//                          bridge acts as each agent on a runtime with token
//                          auth (external runtimes always). On the embedded
//                          dev-mode runtime it names agents with dev headers
//                          and acts for the console's people with their
//                          delegate credential.
// plus the library's BATON_HANDOFF_* settings and BATON_DATA_DIR (the
// history store and the bridge's state, handoff-files.sqlite).
import path from "node:path";
import { Auth, type AuthConfig } from "@/lib/agent";
import type { GatewayLogger } from "@/lib/gateway/logger";
import { FileHandoffs } from "@/lib/gateway/file-handoffs";
import { HandoffError, handoffDirsFromEnv, handoffSettingsFromEnv, historyFileFromEnv, type Env } from "@/lib/handoff-files";
import { ConsoleConfigError } from "./config";

export interface FileHandoffsPlan {
  dirs: string[];
  /** Directories to bridge (a subset of dirs). */
  bridgeDirs: string[];
  participants: string[];
  tokensFile?: string;
}

/** Read and check the settings; throws ConsoleConfigError naming the variable. */
export function planFileHandoffs(env: Env, cwd = process.cwd()): FileHandoffsPlan {
  let dirs: string[];
  try {
    dirs = handoffDirsFromEnv(env, cwd);
    handoffSettingsFromEnv(env);
  } catch (e) {
    if (e instanceof HandoffError) throw new ConsoleConfigError(e.message);
    throw e;
  }
  const raw = env.BATON_HANDOFF_BRIDGE?.trim() ?? "";
  let bridgeDirs: string[] = [];
  if (raw === "1" || raw.toLowerCase() === "true") bridgeDirs = dirs;
  else if (raw !== "" && raw !== "0" && raw.toLowerCase() !== "false") {
    bridgeDirs = [
      ...new Set(
        raw
          .split(",")
          .map((p) => p.trim())
          .filter((p) => p !== "")
          .map((p) => path.resolve(cwd, p)),
      ),
    ];
    for (const d of bridgeDirs) {
      if (!dirs.includes(d)) throw new ConsoleConfigError(`BATON_HANDOFF_BRIDGE names ${d}, which is not in BATON_HANDOFF_DIRS`);
    }
  }
  if (raw !== "" && raw !== "0" && raw.toLowerCase() !== "false" && dirs.length === 0)
    throw new ConsoleConfigError("BATON_HANDOFF_BRIDGE is set but BATON_HANDOFF_DIRS is empty");
  const participants = (env.BATON_HANDOFF_BRIDGE_PARTICIPANTS ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  const tokens = env.BATON_HANDOFF_BRIDGE_TOKENS?.trim();
  return { dirs, bridgeDirs, participants, ...(tokens ? { tokensFile: path.resolve(cwd, tokens) } : {}) };
}

export interface BridgeRuntime {
  /** host:port or URL of the runtime. */
  address: string;
  tls: boolean;
  caPath?: string;
  /** "dev": agents are named by dev headers; people act through `personCredential`. */
  authMode: "dev" | "tokens";
  /** The embedded runtime's delegate credential for a console person (dev mode), when `id` is one. */
  personCredential?: (id: string) => string | undefined;
}

export interface RunningFileHandoffs {
  files: FileHandoffs | null;
  bridges: number;
  close(): Promise<void>;
}

/** Start watching (and bridging) as planned. Nothing is started when no directory is configured. */
export async function startFileHandoffs(
  env: Env,
  plan: FileHandoffsPlan,
  runtime: BridgeRuntime,
  heartbeatMs: number,
  logger: GatewayLogger,
  cwd = process.cwd(),
): Promise<RunningFileHandoffs> {
  if (plan.dirs.length === 0) return { files: null, bridges: 0, close: async () => undefined };
  const settings = handoffSettingsFromEnv(env);
  const historyFile = historyFileFromEnv(env, cwd);
  const files = new FileHandoffs({ dirs: plan.dirs, settings, historyFile, heartbeatMs, logger });
  logger.info(
    { dirs: plan.dirs, history: historyFile, watch: settings.watchMode },
    `watching ${plan.dirs.length} v0.1 handoff director${plan.dirs.length === 1 ? "y" : "ies"}`,
  );
  const stops: (() => Promise<void>)[] = [];
  if (plan.bridgeDirs.length > 0) {
    const { HandoffBridge, SqliteBridgeState, tokenCredentials } = await import("@/lib/handoff-files/bridge");
    let credentials: (id: string) => AuthConfig | undefined;
    if (runtime.authMode === "dev") {
      credentials = (id) => {
        const person = runtime.personCredential?.(id);
        return person !== undefined ? Auth.bearer(person, { expectedSender: id }) : Auth.devAgent(id);
      };
    } else {
      if (!plan.tokensFile) {
        files.close();
        throw new ConsoleConfigError(
          "BATON_HANDOFF_BRIDGE on a runtime with token auth needs BATON_HANDOFF_BRIDGE_TOKENS: a tokens file ({token, sender} list) for the agents and people named in the files",
        );
      }
      try {
        credentials = tokenCredentials(plan.tokensFile);
      } catch (e) {
        files.close();
        throw new ConsoleConfigError(`BATON_HANDOFF_BRIDGE_TOKENS: ${(e as Error).message}`);
      }
    }
    const state = new SqliteBridgeState(historyFile);
    for (const dir of plan.bridgeDirs) {
      const b = new HandoffBridge({
        dir,
        runtime: runtime.address,
        tls: runtime.tls,
        ...(runtime.caPath ? { caPath: runtime.caPath } : {}),
        credentials,
        participants: plan.participants,
        state,
        // The console's watcher records the history; the bridge's own watcher
        // must not share it, or a file the console recorded first would look
        // unchanged to the bridge's first scan and never be mirrored. Its
        // writes still refuse files the history marks invalid.
        directory: { maxBytes: settings.maxBytes, maxFiles: settings.maxFiles, lockStaleMs: settings.lockStaleMs, history: files.history },
        watch: { mode: settings.watchMode, pollMs: settings.pollMs, maxFiles: settings.maxFiles, maxBytes: settings.maxBytes },
        onEvent: (e) => {
          if (e.kind === "error") logger.warn({ dir, ...e }, "v0.1 bridge");
          else logger.debug({ dir, ...e }, "v0.1 bridge");
        },
      });
      // The first pass reads the whole directory: the console serves meanwhile.
      b.start().catch((e: unknown) => logger.error({ dir, err: e }, "v0.1 bridge failed to start"));
      stops.push(() => b.stop());
    }
    stops.push(async () => state.close());
    logger.info({ dirs: plan.bridgeDirs, runtime: runtime.address }, "bridging v0.1 handoff directories to MACP Task sessions");
  }
  let closing: Promise<void> | null = null;
  return {
    files,
    bridges: plan.bridgeDirs.length,
    close() {
      closing ??= (async () => {
        for (const stop of stops) await stop().catch(() => undefined);
        files.close();
      })();
      return closing;
    },
  };
}
