import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

// Unit tests live next to the code (*.test.ts); integration tests that start
// the real runtime live in tests/integration. Both run under `npm test`.
export default defineConfig({
  resolve: {
    alias: { "@": fileURLToPath(new URL(".", import.meta.url)) },
  },
  test: {
    include: ["lib/**/*.test.ts", "components/**/*.test.ts", "tests/**/*.test.ts", "scripts/**/*.test.ts"],
    environment: "node",
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    env: { TZ: "UTC" },
  },
});
