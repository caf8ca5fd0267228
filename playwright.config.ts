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
// handoff, task, session, sign-in, demo, files, visual). PLAN says which run on
// app "b"; every other spec runs on app "a". A project runs its files in path
// order, so the domain folders decide the order within a project. Some specs
// need a place of their own on their app, given by project dependencies:
// - first: 01-empty expects a runtime nothing has used yet, and the specs that
//   count a person's inbox exactly (13-task-people on "a", 09-people on "b";
//   the other specs leave nothing waiting on anyone, but 19-file-handoffs
//   leaves v0.1 offers in inboxes) run before every spec after them in path
//   order;
// - last: 20-list-scale puts thousands of sessions into its app's runtime.
//
// Playwright runs projects in phases: the projects with no dependencies, then
// those whose dependencies all ran, and so on, and a phase starts only once
// every project of the one before it has finished, on both apps. So each phase
// is balanced across the apps, with specs that need no place of their own.
// Durations in seconds (2026-11-27 21:53 UTC, 2-core machine, headless
// shell, tracing off), first / middle / last phase:
// - "a": 01-empty 4 + 13-task-people 14 + 06-visual-a11y 35 / the other
//   thirteen, 167 (21-hand-off 25, 05-list 23, 25-rotation 21, ...) /
//   24-oncall-shell 30;
// - "b": 09-people 32 + 17-brief 27 / 22-escalation 46 + 19-file-handoffs
//   46 + 10-people-visual 45 + 02-handoff 21 / 07-scale 28 + 20-list-scale 32
//   (of which about 13 seeding).
// The whole tier took 323 s. 24-oncall-shell and 07-scale (which serves its
// 20,000 events from page.route: nothing stays in the runtime) need no place
// of their own: they run last only to balance the phases.
// Two apps, one worker each, on two cores; a third app made each spec slower
// by as much as it gained (332 s, against 333 s for the phases of the day).
interface AppPlan {
  /** The specs of this app ("a" takes every spec no other app names). */
  specs?: readonly string[];
  /** Those of them run in the first phase, in path order. */
  first: readonly string[];
  /** Those of them run in the last phase, in path order. */
  last: readonly string[];
}
const PLAN: Record<AppName, AppPlan> = {
  a: { first: ["01-empty", "13-task-people", "06-visual-a11y"], last: ["24-oncall-shell"] },
  b: {
    specs: ["09-people", "17-brief", "02-handoff", "10-people-visual", "19-file-handoffs", "22-escalation", "07-scale", "20-list-scale"],
    first: ["09-people", "17-brief"],
    last: ["07-scale", "20-list-scale"],
  },
};
const NAMED_ELSEWHERE = APP_NAMES.flatMap((n) => PLAN[n].specs ?? []);

const specFiles = (fs.readdirSync(fileURLToPath(new URL("./e2e", import.meta.url)), { recursive: true }) as string[]).filter((f) =>
  f.endsWith(".spec.ts"),
);
const specNames = specFiles.map((f) => path.basename(f, ".spec.ts"));
if (new Set(specNames).size !== specNames.length) throw new Error("playwright.config.ts: two e2e specs have the same file name");
for (const name of APP_NAMES.flatMap((n) => [...(PLAN[n].specs ?? []), ...PLAN[n].first, ...PLAN[n].last])) {
  if (!specNames.includes(name)) throw new Error(`playwright.config.ts: no e2e spec is named ${name}.spec.ts`);
}
if (new Set(NAMED_ELSEWHERE).size !== NAMED_ELSEWHERE.length) throw new Error("playwright.config.ts: a spec is planned on two apps");
for (const n of APP_NAMES) {
  const { specs, first, last } = PLAN[n];
  const stray = [...first, ...last].filter((x) => (specs ? !specs.includes(x) : NAMED_ELSEWHERE.includes(x)));
  if (stray.length) throw new Error(`playwright.config.ts: app "${n}" runs ${stray.join(", ")} first or last, but not among its specs`);
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

/**
 * One app's projects: its first specs, then the others in path order, then its last ones, one
 * spec at a time (`workers: 1`), each project starting once the one before it passed.
 */
function appProjects(name: AppName) {
  const plan = PLAN[name];
  const own = plan.specs;
  const middle = {
    name: `app-${name}`,
    workers: 1,
    use: appUse(name),
    ...(own
      ? { testMatch: specPattern(own.filter((n) => !plan.first.includes(n) && !plan.last.includes(n))) }
      : { testIgnore: specPattern([...NAMED_ELSEWHERE, ...plan.first, ...plan.last]) }),
    ...(plan.first.length ? { dependencies: [`app-${name}-first`] } : {}),
  };
  return [
    ...(plan.first.length ? [{ name: `app-${name}-first`, testMatch: specPattern(plan.first), workers: 1, use: appUse(name) }] : []),
    middle,
    ...(plan.last.length
      ? [{ name: `app-${name}-last`, testMatch: specPattern(plan.last), dependencies: [`app-${name}`], workers: 1, use: appUse(name) }]
      : []),
  ];
}

export default defineConfig<object, E2eWorkerOptions>({
  testDir: "e2e",
  outputDir: "test-results",
  globalSetup: "./e2e/global-setup.ts",
  fullyParallel: false,
  // One worker per app by default (each project's `workers: 1` keeps one spec at a time per app).
  // On the 2-core machine with tracing off (2026-11-27): 333 s in the headless shell with the
  // phases balanced, 357 s before, 483 s in the whole browser; one worker took 15 minutes with
  // tracing on. BATON_E2E_WORKERS=1 runs the apps one after the other.
  workers: Number(process.env.BATON_E2E_WORKERS ?? APP_NAMES.length),
  retries: 0,
  timeout: 120_000,
  expect: { timeout: 15_000 },
  reporter: [["list"]],
  projects: APP_NAMES.flatMap(appProjects),
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
