#!/usr/bin/env node
// `npm start`: build the Next.js app when there is no production build or a
// UI source is newer than it, then run the console server (with the embedded
// MACP runtime unless MACP_RUNTIME_URL is set) in production mode.
//   npm start -- --rebuild     force `next build`
//   BATON_SKIP_BUILD=1         never build (use whatever .next holds)
// Extra arguments go to lib/server/main.ts (e.g. --no-ui).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => path.join(root, "node_modules", ".bin", process.platform === "win32" ? `${name}.cmd` : name);
const args = process.argv.slice(2);
const force = args.includes("--rebuild");
const serverArgs = args.filter((a) => a !== "--rebuild");

// What the Next.js build depends on. Server-only code (runtime, gateway,
// console server) runs through tsx and needs no rebuild.
const UI_DIRS = ["app", "pages", "src", "components", "public", "lib", "styles"];
const SERVER_ONLY = new Set(["lib/runtime", "lib/gateway", "lib/server"].map((p) => path.join(root, p)));
const UI_FILES = [
  "next.config.ts",
  "next.config.mjs",
  "next.config.js",
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "postcss.config.mjs",
  "postcss.config.js",
  "tailwind.config.ts",
  "tailwind.config.js",
  "middleware.ts",
  "proxy.ts",
  "instrumentation.ts",
];

// The App Router needs a root layout; a bare app/ folder is not a UI yet.
const hasUi =
  ["app", "src/app"].some((d) => ["tsx", "ts", "jsx", "js"].some((x) => fs.existsSync(path.join(root, d, `layout.${x}`)))) ||
  ["pages", "src/pages"].some((d) => fs.existsSync(path.join(root, d)));

/** Newest modification time (ms) of any build input. */
function newestSource() {
  let newest = 0;
  const visit = (p) => {
    let st;
    try {
      st = fs.statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      if (SERVER_ONLY.has(p)) return;
      for (const e of fs.readdirSync(p)) {
        if (e.startsWith(".") || e === "node_modules") continue;
        visit(path.join(p, e));
      }
      return;
    }
    if (/\.test\.tsx?$/.test(p)) return;
    newest = Math.max(newest, st.mtimeMs);
  };
  for (const d of UI_DIRS) visit(path.join(root, d));
  for (const f of UI_FILES) visit(path.join(root, f));
  return newest;
}

function needsBuild() {
  if (force) return "forced with --rebuild";
  const buildId = path.join(root, ".next", "BUILD_ID");
  if (!fs.existsSync(buildId)) return "no production build yet";
  if (newestSource() > fs.statSync(buildId).mtimeMs) return "sources changed since the last build";
  return null;
}

if (!hasUi) {
  process.stderr.write("baton: no app/layout or pages/ yet; starting the Connect API and runtime without the UI\n");
  if (!serverArgs.includes("--no-ui")) serverArgs.push("--no-ui");
} else if (process.env.BATON_SKIP_BUILD !== "1") {
  const reason = needsBuild();
  if (reason) {
    process.stderr.write(`baton: building the console (${reason})…\n`);
    const r = spawnSync(bin("next"), ["build"], {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, NODE_ENV: "production" },
    });
    if (r.status !== 0) {
      process.stderr.write("baton: `next build` failed; not starting\n");
      process.exit(r.status ?? 1);
    }
  }
}

const child = spawn(bin("tsx"), [path.join(root, "lib", "server", "main.ts"), ...serverArgs], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, NODE_ENV: "production" },
});
// Forward stop signals. On Ctrl-C the child gets SIGINT from the terminal as
// well; the server treats a repeat within a second as the same request.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
child.on("exit", (code, signal) => {
  process.exit(code ?? (signal ? 1 : 0));
});
