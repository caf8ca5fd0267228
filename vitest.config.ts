import { defineConfig } from "vitest/config";
import os from "node:os";
import { fileURLToPath } from "node:url";

// Unit tests live next to the code (*.test.ts); integration tests that start
// the real runtime live in tests/integration. Both run under `npm test`.
//
// The runtime's conformance and integration suites run a second time with no
// cache of closed sessions (MACP_CLOSED_SESSION_CACHE=0, passed on by
// tests/integration/harness.ts), so that every read of a closed session
// (GetSession, ListSessions, history, duplicate resends, SESSION_NOT_OPEN,
// read rights, Cancel) goes to storage: they must pass unchanged either way.
const RUNTIME_SUITES = [
  "tests/integration/conformance.test.ts",
  "tests/integration/runtime-admission.test.ts",
  "tests/integration/runtime-streams.test.ts",
  "tests/integration/runtime-lifecycle.test.ts",
  "tests/integration/runtime-policies.test.ts",
  "tests/integration/runtime-scale-restart.test.ts",
  "tests/integration/runtime-scale-history.test.ts",
  "tests/integration/runtime-scale-stalled.test.ts",
  "tests/integration/runtime-scale-identity-streams.test.ts",
  "tests/integration/store-migration.test.ts",
  "tests/integration/durability.test.ts",
  "tests/integration/agent-client.test.ts",
  "tests/integration/agent-sessions.test.ts",
  "tests/integration/agent-streams.test.ts",
  "tests/integration/agent-auth.test.ts",
  "tests/integration/demo.test.ts",
  "tests/integration/grpc-js-interop.test.ts",
  "tests/integration/tls.test.ts",
  "tests/integration/list-rows.test.ts",
  "tests/integration/list-rows-migration.test.ts",
];

/** Unit files that need a module graph of their own: they mock modules, or set up a DOM. */
const ISOLATED_UNITS = ["lib/client/use-whoami.test.ts", "features/sessions-list/carry-over.test.ts"];

export default defineConfig({
  resolve: {
    alias: { "@": fileURLToPath(new URL(".", import.meta.url)) },
  },
  test: {
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Test files run in worker processes that keep their module graph from one file to the next
    // (files of different projects never share one): a module imported by forty files is loaded
    // once per worker, not forty times. Vitest reads this for the whole run, not per project; the
    // files that need a fresh module graph each run in worker threads instead ("isolated" below).
    // The integration projects took 167 s and 271 s of CPU instead of 216 s and 363 s isolated,
    // their imports 17 s instead of 72 s (2026-11-27, 2 cores). None of the files in these
    // processes mocks a module or changes the environment or a global: each starts its own
    // runtimes, stores and servers in temporary directories.
    pool: "forks",
    poolOptions: { forks: { isolate: false } },
    // At least two workers. vitest's default is one fewer than the cores (one on the 2-core CI
    // machine), which leaves a core idle while a file waits on its runtime, its child processes or
    // its timers: with two, vitest took 888 s instead of 1,322 s on the 2-core machine under the
    // same outside load (2026-11-27; README, "Tests"). VITEST_MAX_WORKERS (or --maxWorkers) overrides.
    maxWorkers: Number(process.env.VITEST_MAX_WORKERS) || Math.max(2, os.availableParallelism() - 1),
    env: { TZ: "UTC" },
    projects: [
      {
        // Unit tests of code with no DOM.
        extends: true,
        test: {
          name: "unit",
          include: ["lib/**/*.test.ts", "features/**/*.test.ts", "components/**/*.test.ts", "scripts/**/*.test.ts"],
          exclude: ISOLATED_UNITS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // Component tests (a DOM per file, Testing Library's cleanup) and the files that mock
        // modules: each file in a fresh worker thread, with a module graph of its own (about 15 s
        // in all, run beside the units).
        extends: true,
        test: {
          name: "isolated",
          pool: "threads",
          isolate: true,
          sequence: { groupOrder: 0 },
          include: ["components/**/*.test.tsx", "features/**/*.test.tsx", ...ISOLATED_UNITS],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          sequence: { groupOrder: 1 },
          include: ["tests/**/*.test.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "no closed-session cache",
          sequence: { groupOrder: 1 },
          include: RUNTIME_SUITES,
          env: { TZ: "UTC", MACP_CLOSED_SESSION_CACHE: "0" },
        },
      },
    ],
  },
});
