import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "@playwright/test";
import { APP_NAMES, e2eApp, type AppName } from "./e2e/support/apps";
import type { E2eWorkerOptions } from "./e2e/support/fixtures";
import { OIDC, authFile } from "./e2e/support/people";
import { E2E_CHROMIUM_PATH, e2ePorts } from "./e2e/support/ports";

// The app runs exactly as the README says (`npm start`), twice: apps "a" and
// "b" (e2e/support/apps.ts), each the whole console with its own embedded
// runtime, on its own free ports (e2e/support/ports.ts), with its own fresh
// data directory under .baton/e2e-data/<run>/<app> (git-ignored), users file,
// sign-ins and v0.1 handoff directory. The specs are split between the two
// apps (one project each, below) and each app's specs run one after the
// other in one worker, so the two halves run at the same time on the two
// cores without ever seeing each other's sessions: several specs count a
// person's inbox exactly, so specs must never share an app in parallel.
//
// Sign-in is required for reads (the default): before each app starts, its
// webServer command writes its e2e users file (e2e/support/seed-users.ts, the
// users CLI's logic at the cheap test scrypt cost); global setup then signs
// each person in on both apps and saves their browser state per app
// (e2e/support/people.ts). A local OpenID Connect provider runs as a third
// web server for the SSO test (it sends people back to either app).
//
// Playwright starts the web servers one after the other, each once the one
// before answers, so app "a" builds what is out of date (`npm start`:
// scripts/start.mjs) and app "b" finds the build current; scripts/build.mjs
// also holds a lock, so two builds never run at once (`npm test` builds
// beside vitest before Playwright starts). The servers start before global
// setup, so each run gets a new directory; global setup removes the ones
// left by earlier runs. The run id and the ports are fixed in the main
// process and inherited by the workers.
process.env.BATON_E2E_RUN ??= `run-${Date.now()}-${process.pid}`;
const ports = e2ePorts();

// The specs are grouped by domain: e2e/<domain>/NN-name.spec.ts (list,
// handoff, task, session, sign-in, demo, files, visual). Which run on app "b";
// every other spec runs on app "a". Balanced by the specs' durations with two
// workers (2026-11-27, 2-core machine, headless shell, tracing off): on "b"
// 10-people-visual 67 s, 19-file-handoffs 59, 22-escalation 46, 20-list-scale
// 40 (and about 20 s of seeding), 09-people 26 and 25-rotation 21, about 260 s;
// on "a" the other nineteen specs, about 290 s (24-oncall-shell 36,
// 06-visual-a11y 36, 17-brief 31, 21-hand-off 28, ...). The SSO spec
// (11-sign-in) may run on either app.
//
// A project runs its files in path order, so the domain folders decide the
// order within an app. Some specs need a place of their own, given by project
// dependencies (a project starts once the ones it depends on passed):
// - first on their app: 01-empty expects a runtime nothing has used yet, and
//   the specs that count a person's inbox exactly (13-task-people on "a",
//   09-people on "b"; the other specs leave nothing waiting on anyone, but
//   19-file-handoffs leaves v0.1 offers in inboxes);
// - last on their app: 07-scale and 20-list-scale put thousands of sessions
//   into their app's runtime.
const APP_B_SPECS = ["09-people", "10-people-visual", "19-file-handoffs", "20-list-scale", "22-escalation", "25-rotation"];
const A_FIRST = ["01-empty", "13-task-people"];
const A_LAST = ["07-scale"];
const B_FIRST = ["09-people"];
const B_LAST = ["20-list-scale"];

const specFiles = (fs.readdirSync(fileURLToPath(new URL("./e2e", import.meta.url)), { recursive: true }) as string[]).filter((f) =>
  f.endsWith(".spec.ts"),
);
const specNames = specFiles.map((f) => path.basename(f, ".spec.ts"));
if (new Set(specNames).size !== specNames.length) throw new Error("playwright.config.ts: two e2e specs have the same file name");
for (const name of [...APP_B_SPECS, ...A_FIRST, ...A_LAST, ...B_FIRST, ...B_LAST]) {
  if (!specNames.includes(name)) throw new Error(`playwright.config.ts: no e2e spec is named ${name}.spec.ts`);
}

const specPattern = (names: readonly string[]): RegExp =>
  new RegExp(`(^|/)(${names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})\\.spec\\.ts$`);

function traceMode(value: string | undefined): "off" | "on" | "retain-on-failure" | "on-first-retry" {
  if (value === undefined || value === "" || value === "off") return "off";
  if (value === "on" || value === "retain-on-failure" || value === "on-first-retry") return value;
  throw new Error(`BATON_E2E_TRACE must be off, on, retain-on-failure or on-first-retry, not ${JSON.stringify(value)}`);
}

function appServer(name: AppName) {
  const app = e2eApp(name);
  return {
    command: "npx tsx e2e/support/seed-users.ts && npm start",
    url: `${app.origin}/auth/methods`,
    reuseExistingServer: false,
    // Includes `next build` when the UI changed since the last build (app "a"
    // builds; app "b" starts after it, on the same build).
    timeout: 600_000,
    stdout: "pipe" as const,
    stderr: "pipe" as const,
    env: {
      PORT: String(app.consolePort),
      MACP_BIND_ADDR: app.runtimeAddr,
      MACP_DATA_DIR: app.dataDir,
      LOG_LEVEL: "warn",
      // Accounts live in the app's directory; the file exists before the
      // console starts, so no bootstrap admin (and no one-time password
      // notice) is created.
      BATON_USERS_FILE: app.usersFile,
      BATON_SESSION_SECRET: "baton-e2e-session-secret-that-is-long-enough-0123456789",
      // Sign-ins are kept next to the users file, not in ./data/.
      BATON_LOGINS_FILE: app.loginsFile,
      BATON_OIDC_ISSUER: `http://127.0.0.1:${OIDC.port}`,
      BATON_OIDC_CLIENT_ID: OIDC.clientId,
      BATON_OIDC_CLIENT_SECRET: OIDC.clientSecret,
      // The console watches one v0.1 handoff directory of the app (empty
      // until a spec writes into it: e2e/files/19-file-handoffs.spec.ts).
      BATON_HANDOFF_DIRS: app.handoffDir,
      BATON_DATA_DIR: app.dataDir,
      // An offer unanswered for 3 s is "stuck" (e2e/list/05-list.spec.ts); the default is 15 min.
      BATON_STUCK_AFTER_MINUTES: "0.05",
      // One minute of an escalation chain is 1 s (e2e/handoff/22-escalation.spec.ts); the default is 60 000 ms.
      BATON_ESCALATION_MINUTE_MS: "1000",
    },
  };
}

/** What a project of app `name` uses: its origin, its sign-ins, its runtime (fixtures.ts). */
function appUse(name: AppName) {
  return {
    baseURL: e2eApp(name).origin,
    // The older suites read agents' sessions as a signed-in viewer.
    storageState: authFile("wendy", name),
    e2eApp: name,
  };
}

export default defineConfig<object, E2eWorkerOptions>({
  testDir: "e2e",
  outputDir: "test-results",
  globalSetup: "./e2e/global-setup.ts",
  fullyParallel: false,
  // Two workers by default, one per app (each project's `workers: 1` keeps one spec at a time per
  // app): 6 minutes on the 2-core machine in the headless shell with tracing off (8 in the whole
  // browser), where one worker took 15 with tracing on (2026-11-27). BATON_E2E_WORKERS=1 runs the
  // apps one after the other.
  workers: Number(process.env.BATON_E2E_WORKERS ?? 2),
  retries: 0,
  timeout: 120_000,
  expect: { timeout: 15_000 },
  reporter: [["list"]],
  projects: [
    { name: "app-a-first", testMatch: specPattern(A_FIRST), workers: 1, use: appUse("a") },
    {
      name: "app-a",
      testIgnore: specPattern([...APP_B_SPECS, ...A_FIRST, ...A_LAST]),
      dependencies: ["app-a-first"],
      workers: 1,
      use: appUse("a"),
    },
    { name: "app-a-last", testMatch: specPattern(A_LAST), dependencies: ["app-a"], workers: 1, use: appUse("a") },
    { name: "app-b-first", testMatch: specPattern(B_FIRST), workers: 1, use: appUse("b") },
    {
      name: "app-b",
      testMatch: specPattern(APP_B_SPECS.filter((n) => !B_FIRST.includes(n) && !B_LAST.includes(n))),
      dependencies: ["app-b-first"],
      workers: 1,
      use: appUse("b"),
    },
    { name: "app-b-last", testMatch: specPattern(B_LAST), dependencies: ["app-b"], workers: 1, use: appUse("b") },
  ],
  use: {
    browserName: "chromium",
    viewport: { width: 1440, height: 900 },
    launchOptions: {
      executablePath: E2E_CHROMIUM_PATH,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    },
    // Off unless asked for (BATON_E2E_TRACE=retain-on-failure, or --trace on the command line):
    // tracing records a screencast and DOM snapshots of every step of every test, which cost a
    // third of the suite's CPU on two cores (17-brief: 53 s traced, 37 s not; 2026-11-27). A
    // failure still leaves its screenshot and the page's accessibility snapshot.
    trace: traceMode(process.env.BATON_E2E_TRACE),
    screenshot: "only-on-failure",
  },
  webServer: [
    {
      command: "npx tsx e2e/support/oidc-server.ts",
      url: `http://127.0.0.1:${ports.oidc}/.well-known/openid-configuration`,
      reuseExistingServer: false,
      timeout: 60_000,
      stdout: "pipe",
      stderr: "pipe",
      env: { BATON_E2E_APP_ORIGINS: APP_NAMES.map((n) => e2eApp(n).origin).join(",") },
    },
    ...APP_NAMES.map(appServer),
  ],
});
