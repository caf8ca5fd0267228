#!/usr/bin/env node
// `npm start`: build what is out of date (scripts/build.mjs decides from the
// files each part of the last build read), then run the compiled console
// server (.baton/server/main.mjs: console + embedded MACP runtime unless
// MACP_RUNTIME_URL is set) with plain Node in production mode.
//   npm start -- --rebuild     build both parts again
//   BATON_SKIP_BUILD=1         never build (use whatever .next and .baton/server hold)
// Other arguments go to the server (e.g. --no-ui).
import { spawn } from "node:child_process";
import { SERVER_ENV, SERVER_NODE_FLAGS } from "./server-flags.mjs";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "./build.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const force = args.includes("--rebuild");
const serverArgs = args.filter((a) => a !== "--rebuild");
const server = path.join(root, ".baton", "server", "main.mjs");

if (process.env.BATON_SKIP_BUILD !== "1") {
  if (!(await build({ ifNeeded: true, force }))) {
    process.stderr.write("baton: the build failed; not starting\n");
    process.exit(1);
  }
} else if (!fs.existsSync(server)) {
  process.stderr.write("baton: BATON_SKIP_BUILD=1 but there is no compiled server (.baton/server/main.mjs); run npm run build\n");
  process.exit(1);
}

// The console's Node flags and environment (scripts/server-flags.mjs).
const child = spawn(process.execPath, ["--enable-source-maps", ...SERVER_NODE_FLAGS, server, ...serverArgs], {
  cwd: root,
  stdio: "inherit",
  env: { ...SERVER_ENV, ...process.env, NODE_ENV: "production" },
});
// Forward stop signals. On Ctrl-C the child gets SIGINT from the terminal as
// well; the server treats a repeat within a second as the same request.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("exit", (code, signal) => {
  process.exit(code ?? (signal ? 1 : 0));
});
