// `npm start` / `npm run dev`: the Baton console server.
//   tsx lib/server/main.ts           production (needs `next build`; npm start does it)
//   tsx lib/server/main.ts --dev     Next.js development mode
//   tsx lib/server/main.ts --no-ui   Connect API + runtime only
// Starts the embedded MACP runtime in-process unless MACP_RUNTIME_URL is set.
// SIGINT/SIGTERM: end browser streams, close the runtime, then the server.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createLogger } from "@/lib/logging/create-logger";
import { bootstrapNotice, setupAccounts, type AccountsSetup } from "./accounts-setup";
import { ConsoleConfigError, loadConsoleConfig } from "./config";
import { startConsole, type RunningConsole } from "./console";

const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

function fail(message: string): never {
  process.stderr.write(`baton: ${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConsoleConfig(process.env, process.argv.slice(2), dir);
  } catch (e) {
    fail((e as Error).message);
  }
  // Next.js reads NODE_ENV when it loads; set it before anything imports it.
  if (!process.env.NODE_ENV) Reflect.set(process.env, "NODE_ENV", config.dev ? "development" : "production");
  let logger;
  try {
    logger = createLogger({ level: config.logLevel, base: undefined });
  } catch (e) {
    fail((e as Error).message);
  }

  let running: RunningConsole;
  let accounts: AccountsSetup;
  try {
    // Users file (with a bootstrap admin on first start) and session secret.
    accounts = await setupAccounts(process.env, logger.child({ component: "accounts" }));
  } catch (e) {
    fail(`console accounts: ${(e as Error).message}`);
  }
  if (accounts.permissionWarning) logger.warn({ component: "accounts" }, accounts.permissionWarning);
  try {
    running = await startConsole({ config, logger, auth: { accounts: accounts.accounts, secret: accounts.secret } });
  } catch (e) {
    if (e instanceof ConsoleConfigError || (e instanceof Error && e.name === "ConfigError")) fail(e.message);
    // The embedded runtime found committed transactions behind a damaged WAL: the message says what to run.
    if (e instanceof Error && e.name === "WalDamageError") fail(e.message);
    if (e instanceof Error && "code" in e && e.code === "EADDRINUSE") {
      fail(`${e.message}: another process is using that port (set PORT, or MACP_BIND_ADDR for the runtime)`);
    }
    logger.error({ err: e, component: "console" }, "Baton console failed to start");
    process.exit(1);
  }

  // Printed once, to the terminal only (never to the structured log).
  const notice = bootstrapNotice(accounts, process.env.BATON_PUBLIC_ORIGIN?.split(",")[0]?.trim() || running.url);
  if (notice) process.stdout.write(`\n${notice}\n\n`);

  const log = logger.child({ component: "console" });
  let stoppingSince = 0;
  const stop = (signal: NodeJS.Signals) => {
    if (stoppingSince > 0) {
      // The same Ctrl-C can arrive twice (terminal + scripts/start.mjs).
      if (Date.now() - stoppingSince < 1_000) return;
      log.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stoppingSince = Date.now();
    log.info({ signal }, "shutting down");
    const force = setTimeout(() => {
      log.error({}, "shutdown took too long; exiting");
      process.exit(1);
    }, 10_000);
    force.unref();
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

void main();
