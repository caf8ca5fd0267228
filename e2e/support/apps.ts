// The apps an e2e run starts (playwright.config.ts): "a" and "b" (APP_NAMES,
// e2e/support/ports.ts), each the whole console with its own
// embedded runtime, started with `npm start` on ports of its own, with its own
// data folder, users file, sign-ins and v0.1 handoff directory. The specs are
// split between them, and each app's specs run one after the other in a worker
// of their own, so the apps' shares run at the same time and never see each
// other's sessions (several specs count a person's inbox exactly).
//
// Everything here derives from the run id and the ports, which the config
// publishes in the environment (BATON_E2E_RUN, BATON_E2E_PORTS) for the
// workers and web servers, so any process of the run computes the same paths.
// Inside a worker, the app of its project is "current" (set by the worker
// fixture in e2e/support/fixtures.ts from the project's `e2eApp` option):
// scripted agents, signed-in browser states and the handoff directory are
// that app's.

import path from "node:path";
import { e2ePorts, type AppName } from "./ports";

export { APP_NAMES, type AppName } from "./ports";

export interface E2eApp {
  name: AppName;
  /** The console's origin, e.g. http://127.0.0.1:41234 (the baseURL of the app's projects). */
  origin: string;
  consolePort: number;
  /** host:port of the app's embedded runtime (gRPC), for the scripted agents. */
  runtimeAddr: string;
  /** The app's data folder (MACP_DATA_DIR and BATON_DATA_DIR), relative to the project. */
  dataDir: string;
  /** The v0.1 handoff directory the app's console watches (absolute). */
  handoffDir: string;
  usersFile: string;
  loginsFile: string;
}

/** Every run's data lives under here (git-ignored); global setup removes earlier runs'. */
export const E2E_DATA_ROOT = path.join(".baton", "e2e-data");

/** The run id playwright.config.ts fixed in the main process (inherited by workers and web servers). */
export function e2eRunId(): string {
  const run = process.env.BATON_E2E_RUN;
  if (!run) throw new Error("BATON_E2E_RUN is not set: playwright.config.ts sets it when the run starts");
  return run;
}

export function e2eApp(name: AppName): E2eApp {
  const ports = e2ePorts()[name];
  const dataDir = path.join(E2E_DATA_ROOT, e2eRunId(), name);
  return {
    name,
    origin: `http://127.0.0.1:${ports.console}`,
    consolePort: ports.console,
    runtimeAddr: `127.0.0.1:${ports.runtime}`,
    dataDir,
    handoffDir: path.resolve(dataDir, "handoffs"),
    usersFile: path.join(dataDir, "accounts", "users.json"),
    loginsFile: path.join(dataDir, "accounts", "console-sessions.json"),
  };
}

let current: AppName | undefined;

/** Called once per worker by e2e/support/fixtures.ts: the app of the worker's project. */
export function enterApp(name: AppName): void {
  current = name;
}

/** The app of the running test's project. */
export function currentApp(): E2eApp {
  if (!current) throw new Error("no e2e app chosen yet: call this inside a test or hook that uses e2e/support/fixtures.ts");
  return e2eApp(current);
}
