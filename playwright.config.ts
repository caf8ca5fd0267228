import path from "node:path";
import { defineConfig } from "@playwright/test";

// The app runs exactly as the README says (`npm start`), on its own ports and
// with a fresh data directory per run under .baton/e2e-data (git-ignored).
// Playwright starts the web server before global setup, so each run gets a
// new directory; global setup removes the ones left by earlier runs.
// The run id is fixed in the main process and inherited by the workers.
process.env.BATON_E2E_RUN ??= `run-${Date.now()}-${process.pid}`;

const PORT = 3100;
const RUNTIME_ADDR = "127.0.0.1:50151";
export const E2E_DATA_ROOT = path.join(".baton", "e2e-data");
const dataDir = path.join(E2E_DATA_ROOT, process.env.BATON_E2E_RUN);

// The scripted agents in e2e/support/agent.ts talk gRPC to this address.
process.env.BATON_E2E_RUNTIME_ADDR = RUNTIME_ADDR;

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
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    browserName: "chromium",
    viewport: { width: 1440, height: 900 },
    launchOptions: {
      executablePath: "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
  webServer: {
    command: "npm start",
    url: `http://127.0.0.1:${PORT}/`,
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
    },
  },
});
