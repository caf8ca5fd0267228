#!/usr/bin/env node
// `npm test`: every tier of the suite — lock check, type check, lint, format and import cycles
// (at the same time), then vitest (units
// next to the code + integration tests against the real runtime over gRPC)
// while the production build runs beside it, then Playwright end-to-end in
// Debian's Chromium against the app started as the README starts it (two
// copies of it: playwright.config.ts). Prints one closing line "N passed, N failed".
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const out = path.join(root, ".baton", "test-results");
fs.mkdirSync(out, { recursive: true });
const bin = (name) => path.join(root, "node_modules", ".bin", name);
const env = { ...process.env, TZ: "UTC", FORCE_COLOR: process.env.CI ? "0" : process.env.FORCE_COLOR };

// Each step's header says when it started, counted from the start of `npm test` (m:ss).
const suiteStarted = Date.now();
const clock = () => {
  const s = Math.round((Date.now() - suiteStarted) / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
};

function run(label, cmd, args, extraEnv = {}) {
  process.stdout.write(`\n=== ${label} · at ${clock()}\n`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...env, ...extraEnv } });
  return r.status ?? 1;
}

let passed = 0;
let failed = 0;
let status = 0;

// The static checks are independent and each single-threaded: they run at
// the same time (about a minute saved on two cores), each one's output
// printed whole when it ends.
function runBuffered(label, cmd, args, print = (text) => process.stdout.write(text)) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(cmd, args, { cwd: root, env });
    const chunks = [];
    child.stdout.on("data", (c) => chunks.push(c));
    child.stderr.on("data", (c) => chunks.push(c));
    child.on("close", (code) => {
      const took = ((Date.now() - started) / 1000).toFixed(1);
      print(`\n=== ${label} (${took} s)\n${Buffer.concat(chunks).toString()}`);
      resolve(code ?? 1);
    });
    child.on("error", (err) => {
      print(`\n=== ${label}\n${err.message}\n`);
      resolve(1);
    });
  });
}

const staticChecks = await Promise.all(
  [
    ["lock file (every platform, every engine)", process.execPath, [path.join(root, "scripts", "check-lock.mjs")]],
    ["typecheck (tsc --noEmit)", bin("tsc"), ["--noEmit", "-p", "."]],
    ["lint (eslint: typescript-eslint, react-hooks, jsx-a11y, Next.js, layers)", bin("eslint"), ["."]],
    ["format (prettier --check; npm run format fixes it)", bin("prettier"), ["--check", "--log-level", "warn", "."]],
    // `npm run check:cycles`: dpdm; type-only imports (-T) vanish at run time, so they do not count.
    ["import cycles (dpdm)", "npm", ["run", "--silent", "check:cycles"]],
  ].map(([label, cmd, args]) => runBuffered(label, cmd, args)),
);
for (const rc of staticChecks) {
  status |= rc;
  if (rc) failed++;
}

// The production build (what `npm start` builds when it is out of date:
// scripts/build.mjs --if-needed) runs while vitest does (vitest's two
// workers often wait on runtimes and timers, so the build takes its share of
// the two cores off the critical path), and Playwright's web servers then
// start on a current build. One build at a time (scripts/build.mjs holds a
// lock): vitest's compression test starts the app with `npm start` too and
// waits for this build rather than running a second one. Its output is
// printed whole after vitest's.
const e2e = fs.existsSync(path.join(root, "playwright.config.ts")) && !process.argv.includes("--no-e2e");
let buildReport = "";
const building = e2e
  ? runBuffered(
      "production build (scripts/build.mjs --if-needed, beside vitest)",
      process.execPath,
      [path.join(root, "scripts", "build.mjs"), "--if-needed"],
      (text) => {
        buildReport = text;
      },
    )
  : Promise.resolve(0);

/** Like run(), without blocking, printing as it goes and also keeping what was printed: resolves with the exit code and the text. */
function runTee(label, cmd, args) {
  process.stdout.write(`\n=== ${label} · at ${clock()}\n`);
  return new Promise((resolve) => {
    // Piped, so colours are asked for when our own output is a terminal.
    const color = process.stdout.isTTY && !process.env.CI ? { FORCE_COLOR: "1" } : {};
    const child = spawn(cmd, args, { cwd: root, stdio: ["inherit", "pipe", "pipe"], env: { ...env, ...color } });
    const chunks = [];
    const keep = (stream) => (c) => {
      chunks.push(c);
      stream.write(c);
    };
    child.stdout.on("data", keep(process.stdout));
    child.stderr.on("data", keep(process.stderr));
    child.on("close", (code) => resolve({ code: code ?? 1, text: Buffer.concat(chunks).toString() }));
    child.on("error", (err) => resolve({ code: 1, text: `${label}: ${err.message}\n` }));
  });
}

const vitestJson = path.join(out, "vitest.json");
fs.rmSync(vitestJson, { force: true });
const vitest = await runTee("vitest (unit + integration)", bin("vitest"), [
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile=${vitestJson}`,
]);
status |= vitest.code;
// Errors outside any test (an unhandled rejection, a worker timeout) fail the
// run without failing a test: they are counted, and their report is printed
// again at the end, where a truncated CI log still shows it.
let vitestErrors = "";
if (fs.existsSync(vitestJson)) {
  const r = JSON.parse(fs.readFileSync(vitestJson, "utf8"));
  passed += r.numPassedTests ?? 0;
  const failedHere = (r.numFailedTests ?? 0) + (r.numFailedTestSuites ?? 0);
  failed += failedHere;
  if (vitest.code !== 0 && failedHere === 0) {
    failed++;
    const start = vitest.text.indexOf("Unhandled Error");
    const end = start < 0 ? -1 : vitest.text.indexOf("Test Files", start);
    vitestErrors =
      start < 0
        ? "vitest exited with an error outside any test (its report is above)\n"
        : vitest.text.slice(start, end < 0 ? undefined : end);
  }
} else failed++;

const built = await building;
process.stdout.write(buildReport);
if (built) {
  status |= built;
  failed++;
  process.stdout.write("\nThe production build failed: the end-to-end suite is not run.\n");
} else if (e2e) {
  const pwJson = path.join(out, "playwright.json");
  fs.rmSync(pwJson, { force: true });
  status |= run("playwright (e2e)", bin("playwright"), ["test", "--reporter=list,json"], { PLAYWRIGHT_JSON_OUTPUT_NAME: pwJson });
  if (fs.existsSync(pwJson)) {
    const s = JSON.parse(fs.readFileSync(pwJson, "utf8")).stats ?? {};
    passed += (s.expected ?? 0) + (s.flaky ?? 0);
    failed += s.unexpected ?? 0;
  } else failed++;
}

if (vitestErrors) process.stdout.write(`\n=== vitest: errors outside the tests (counted as one failure)\n${vitestErrors}\n`);
process.stdout.write(`\nnpm test took ${clock()}\n\n${passed} passed, ${failed} failed\n`);
process.exit(status || failed ? 1 : 0);
