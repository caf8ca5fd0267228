import path from "node:path";
import { defineConfig } from "@playwright/test";
import { OIDC, authFile } from "./e2e/support/people";
import { CHROMIUM_PATH, e2ePorts } from "./e2e/support/ports";

// The app runs exactly as the README says (`npm start`), on its own ports and
// with a fresh data directory per run under .baton/e2e-data (git-ignored).
// Sign-in is required for reads (the default): before the app starts, the
// webServer command writes the e2e users file (e2e/support/seed-users.ts, the
// users CLI's logic at the cheap test scrypt cost); global setup then signs
// each person in and saves their browser state (e2e/support/people.ts).
// A local OpenID Connect provider runs as a second web server for the SSO test.
// Playwright starts the web servers before global setup, so each run gets a
// new directory; global setup removes the ones left by earlier runs.
// The run id is fixed in the main process and inherited by the workers.
process.env.BATON_E2E_RUN ??= `run-${Date.now()}-${process.pid}`;

// Free ports picked at run time (e2e/support/ports.ts), so runs never collide.
const ports = e2ePorts();
const PORT = ports.console;
const ORIGIN = `http://127.0.0.1:${PORT}`;
const RUNTIME_ADDR = `127.0.0.1:${ports.runtime}`;
export const E2E_DATA_ROOT = path.join(".baton", "e2e-data");
const dataDir = path.join(E2E_DATA_ROOT, process.env.BATON_E2E_RUN);
const usersFile = path.join(dataDir, "accounts", "users.json");

// The scripted agents in e2e/support/agent.ts talk gRPC to this address.
process.env.BATON_E2E_RUNTIME_ADDR = RUNTIME_ADDR;
// The console watches one v0.1 handoff directory of the run (empty until a
// spec writes into it: e2e/19-file-handoffs.spec.ts); its history store
// lives in the run's directory too.
const handoffDir = path.resolve(dataDir, "handoffs");
process.env.BATON_E2E_HANDOFF_DIR = handoffDir;

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  globalSetup: "./e2e/global-setup.ts",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 120_000,
  expect: { timeout: 15_000 },
  reporter: [["list"]],
  // The list-scale spec seeds the shared runtime with thousands of sessions,
  // so it runs after every other spec whatever its number: its own project,
  // listed last (one worker runs the projects in this order).
  projects: [
    { name: "console", testIgnore: /20-list-scale\.spec\.ts$/ },
    { name: "list-scale", testMatch: /20-list-scale\.spec\.ts$/ },
  ],
  use: {
    baseURL: ORIGIN,
    browserName: "chromium",
    viewport: { width: 1440, height: 900 },
    // The older suites read agents' sessions as a signed-in viewer.
    storageState: authFile("wendy"),
    launchOptions: {
      executablePath: CHROMIUM_PATH,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
  webServer: [
    {
      command: "npx tsx e2e/support/oidc-server.ts",
      url: `http://127.0.0.1:${OIDC.port}/.well-known/openid-configuration`,
      reuseExistingServer: false,
      timeout: 60_000,
      stdout: "pipe",
      stderr: "pipe",
      env: { BATON_E2E_APP_ORIGIN: ORIGIN },
    },
    {
      command: "npx tsx e2e/support/seed-users.ts && npm start",
      url: `${ORIGIN}/auth/methods`,
      reuseExistingServer: false,
      // Includes `next build` when the UI changed since the last build.
      timeout: 600_000,
      stdout: "pipe",
      stderr: "pipe",
      env: {
        PORT: String(PORT),
        MACP_BIND_ADDR: RUNTIME_ADDR,
        MACP_DATA_DIR: dataDir,
        LOG_LEVEL: "warn",
        // Accounts live in the run's directory; the file exists before the
        // console starts, so no bootstrap admin (and no one-time password
        // notice) is created.
        BATON_USERS_FILE: usersFile,
        BATON_SESSION_SECRET: "baton-e2e-session-secret-that-is-long-enough-0123456789",
        // Sign-ins are kept next to the users file, not in ./data/.
        BATON_SESSIONS_FILE: path.join(dataDir, "accounts", "console-sessions.json"),
        BATON_OIDC_ISSUER: `http://127.0.0.1:${OIDC.port}`,
        BATON_OIDC_CLIENT_ID: OIDC.clientId,
        BATON_OIDC_CLIENT_SECRET: OIDC.clientSecret,
        BATON_HANDOFF_DIRS: handoffDir,
        BATON_DATA_DIR: dataDir,
        // An offer unanswered for 3 s is "stuck" (e2e/05-list.spec.ts); the default is 15 min.
        BATON_STUCK_AFTER_MINUTES: "0.05",
        // One minute of an escalation chain is 1 s (e2e/22-escalation.spec.ts); the default is 60 000 ms.
        BATON_ESCALATION_MINUTE_MS: "1000",
      },
    },
  ],
});
