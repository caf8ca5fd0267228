#!/usr/bin/env node
// `npm run build`: the production build, in three parts.
//   1. `next build`: the pages (browser bundles and server rendering).
//   1b. Baton's chunks of that build (not the framework's) marked for eager
//      compilation (EAGER_COMPILE_HINT below), then the browser files
//      compressed ahead of time: for every
//      compressible file of .next/static, `name.br` (brotli, quality 11) and
//      `name.gz` (gzip, level 9) next to it, when smaller; the console server
//      picks one by Accept-Encoding (lib/server/static-assets.ts). Recorded
//      with the build id it compressed, so a new `next build` (by this script
//      or by hand) is compressed again.
//   2. The console server (lib/server/main.ts: console, gateway, embedded
//      runtime), compiled by esbuild into .baton/server/main.mjs with npm
//      packages left as plain imports, so `npm start` runs it with plain Node.
// Each part records in .baton/build-manifest.json the files it read: for the
// server, esbuild's metafile; for the pages, the import graph of every route
// file under app/ (traced with esbuild, which resolves the same tsconfig
// paths), plus the configuration, stylesheets and public files. scripts/start.mjs
// rebuilds a part when one of its files changed, disappeared, or a new route
// file appeared.
//   node scripts/build.mjs [--if-needed] [--force] [--quiet]
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import zlib from "node:zlib";
import * as esbuild from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outDir = path.join(root, ".baton", "server");
const manifestPath = path.join(root, ".baton", "build-manifest.json");
const bin = (name) => path.join(root, "node_modules", ".bin", process.platform === "win32" ? `${name}.cmd` : name);
const rel = (p) => path.relative(root, p).split(path.sep).join("/");

// Files every `next build` reads besides the import graph of app/.
const NEXT_CONFIG_FILES = ["next.config.ts", "postcss.config.mjs", "tsconfig.json", "package-lock.json"];
// Route files of the App Router (entry points of the page build).
const ROUTE_FILE = /^(page|layout|template|error|global-error|not-found|loading|default|route)\.(tsx|ts|jsx|js)$/;

function walk(dir, visit) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (e.name.startsWith(".") || e.name === "node_modules") continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, visit);
    else if (e.isFile()) visit(p);
  }
}

/** Route files under app/: the page build's entry points. */
export function routeFiles() {
  const out = [];
  walk(path.join(root, "app"), (p) => {
    if (ROUTE_FILE.test(path.basename(p))) out.push(p);
  });
  return out.sort();
}

const sourceOnly = (inputs) =>
  Object.keys(inputs)
    .filter((f) => !f.includes("node_modules/") && !f.startsWith("<"))
    .map((f) => rel(path.resolve(root, f)));

/** What `next build` reads: the import graph of the route files, config, CSS and public files. */
async function pageInputs() {
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: routeFiles(),
    bundle: true,
    write: false,
    metafile: true,
    outdir: path.join(outDir, "trace"),
    platform: "neutral",
    format: "esm",
    jsx: "automatic",
    packages: "external",
    logLevel: "silent",
    loader: { ".css": "empty", ".svg": "empty", ".png": "empty", ".woff2": "empty" },
  });
  const files = new Set(sourceOnly(result.metafile.inputs));
  for (const f of NEXT_CONFIG_FILES) if (fs.existsSync(path.join(root, f))) files.add(f);
  walk(path.join(root, "app"), (p) => {
    if (p.endsWith(".css")) files.add(rel(p));
  });
  walk(path.join(root, "public"), (p) => files.add(rel(p)));
  return [...files].sort();
}

async function buildServer() {
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { main: path.join(root, "lib", "server", "main.ts") },
    bundle: true,
    outdir: outDir,
    outExtension: { ".js": ".mjs" },
    platform: "node",
    target: "node20",
    format: "esm",
    packages: "external",
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
    // The bundle sits two folders below the project, like lib/server/main.ts,
    // so paths it derives from import.meta.url still name the project root.
    banner: { js: "// Built by scripts/build.mjs from lib/server/main.ts; do not edit." },
  });
  // Files read at run time next to their module (the demo runbooks).
  fs.cpSync(path.join(root, "lib", "demo", "runbooks"), path.join(outDir, "runbooks"), { recursive: true });
  return [...sourceOnly(result.metafile.inputs), "package-lock.json", "tsconfig.json"].sort();
}

// Text formats worth compressing (fonts and images are compressed already).
const COMPRESSIBLE = /\.(js|mjs|css|json|map|txt|svg|html)$/;
// Below this a compressed variant saves too little to matter.
const COMPRESS_MIN_BYTES = 512;
const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/**
 * Write `.br` and `.gz` next to every compressible file under `dir` (a
 * variant is written only when it is smaller than the file; a stale one is
 * removed). Returns the counts and bytes for the build log and manifest.
 */
export async function compressStatic(dir, { concurrency = 2 } = {}) {
  const files = [];
  walk(dir, (p) => {
    if (COMPRESSIBLE.test(p)) files.push(p);
  });
  const totals = { files: files.length, identity: 0, br: 0, gzip: 0 };
  let next = 0;
  const one = async (file) => {
    const body = fs.readFileSync(file);
    totals.identity += body.length;
    const variants = [];
    if (body.length >= COMPRESS_MIN_BYTES) {
      const [br, gz] = await Promise.all([
        brotli(body, {
          params: {
            [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
            [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
            [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
          },
        }),
        gzip(body, { level: zlib.constants.Z_BEST_COMPRESSION }),
      ]);
      variants.push([".br", br, "br"], [".gz", gz, "gzip"]);
    } else variants.push([".br", null, "br"], [".gz", null, "gzip"]);
    for (const [suffix, data, key] of variants) {
      const out = file + suffix;
      if (data && data.length < body.length) {
        fs.writeFileSync(out, data);
        totals[key] += data.length;
      } else {
        fs.rmSync(out, { force: true });
        totals[key] += body.length;
      }
    }
  };
  const workers = Array.from({ length: Math.max(1, concurrency) }, async () => {
    while (next < files.length) await one(files[next++]);
  });
  await Promise.all(workers);
  return totals;
}

// V8's explicit compile hint (Chrome 136 and later; to other engines it is a
// comment): when a script starts with this line, all of its functions are
// compiled while it downloads, on the script streaming thread, instead of
// one at a time on the main thread when each is first called. Lazy compiles
// were about 230 ms of the session page's main thread between `load` and
// its live view (trace, 2026-11-28). It goes on Baton's own chunks (a
// route's client components, the code loaded on demand such as the live
// views), whose functions run on the page that loads them; not on the
// framework's shared chunks (React DOM, the router, polyfills), large and
// only partly used by any one page.
export const EAGER_COMPILE_HINT = "//# allFunctionsCalledOnLoad\n";

/** The framework's chunk files (names under static/chunks) of a `next build` in `nextDir`, from its build-manifest.json. */
function frameworkChunkNames(nextDir) {
  const build = JSON.parse(fs.readFileSync(path.join(nextDir, "build-manifest.json"), "utf8"));
  const files = [...(build.rootMainFiles ?? []), ...(build.polyfillFiles ?? [])].filter((p) => typeof p === "string" && p.endsWith(".js"));
  // Without them every chunk would be marked, React DOM's too: refuse instead.
  if (files.length === 0) throw new Error(`${nextDir}/build-manifest.json names no framework chunks; is this a next build?`);
  return new Set(files.map((p) => path.posix.basename(p)));
}

/** Put EAGER_COMPILE_HINT first in every chunk but the framework's (idempotent): how many were marked now, and in all. */
export function markEagerChunks(nextDir) {
  const framework = frameworkChunkNames(nextDir);
  const dir = path.join(nextDir, "static", "chunks");
  let marked = 0;
  let eager = 0;
  for (const name of fs.readdirSync(dir)) {
    if (!name.endsWith(".js") || framework.has(name)) continue;
    eager++;
    const file = path.join(dir, name);
    const body = fs.readFileSync(file, "utf8");
    if (body.startsWith(EAGER_COMPILE_HINT)) continue;
    fs.writeFileSync(file, EAGER_COMPILE_HINT + body);
    marked++;
  }
  return { marked, eager, framework: framework.size };
}

function currentBuildId() {
  try {
    return fs.readFileSync(path.join(root, ".next", "BUILD_ID"), "utf8").trim();
  } catch {
    return null;
  }
}

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;

async function compressPart(m, log) {
  const started = Date.now();
  const hints = markEagerChunks(path.join(root, ".next"));
  log(
    `baton: ${hints.eager} of Baton's chunks marked for eager compilation (${hints.marked} now; the framework's ${hints.framework} left lazy)`,
  );
  const t = await compressStatic(path.join(root, ".next", "static"));
  m.static = { buildId: currentBuildId(), builtAt: started, ...t };
  log(
    `baton: compressed ${t.files} browser files in ${((Date.now() - started) / 1000).toFixed(1)} s: ${kib(t.identity)} → brotli ${kib(t.br)}, gzip ${kib(t.gzip)}`,
  );
}

function readManifest() {
  try {
    return JSON.parse(fs.readFileSync(manifestPath, "utf8"));
  } catch {
    return {};
  }
}

function writeManifest(m) {
  fs.mkdirSync(path.dirname(manifestPath), { recursive: true });
  fs.writeFileSync(manifestPath, `${JSON.stringify(m, null, 1)}\n`);
}

/** Why a recorded build part is out of date, or null. */
export function staleReason(part, { newRoutes = [], base = root } = {}) {
  if (!part || !Array.isArray(part.inputs)) return "not built yet";
  for (const f of part.inputs) {
    let st;
    try {
      st = fs.statSync(path.join(base, f));
    } catch {
      return `${f} is gone`;
    }
    if (st.mtimeMs > part.builtAt) return `${f} changed`;
  }
  const known = new Set(part.inputs);
  const added = newRoutes.map((p) => path.relative(base, p).split(path.sep).join("/")).find((f) => !known.has(f));
  if (added) return `${added} is new`;
  return null;
}

/** Which parts need building now: { pages, static, server }: a reason, or null. */
export function buildPlan({ force = false } = {}) {
  const m = readManifest();
  const nextBuilt = fs.existsSync(path.join(root, ".next", "BUILD_ID"));
  const serverBuilt = fs.existsSync(path.join(outDir, "main.mjs"));
  const buildId = currentBuildId();
  return {
    pages: force ? "forced" : !nextBuilt ? "no page build yet" : staleReason(m.pages, { newRoutes: routeFiles() }),
    static: force ? "forced" : !m.static || m.static.buildId !== buildId ? "this page build is not compressed yet" : null,
    server: force ? "forced" : !serverBuilt ? "no server build yet" : staleReason(m.server),
  };
}

// One build at a time per project: `npm start` builds when needed, and the
// suite may start it more than once at the same time (npm test builds while
// vitest runs, and vitest's compression test starts the app; the e2e suite
// starts two apps). A second build waits for the first, then plans again, so
// it finds the first one's output current and builds nothing. The lock is a
// file holding the builder's pid; one whose process is gone is taken over.
const lockPath = path.join(root, ".baton", "build.lock");
const LOCK_POLL_MS = 250;

function lockHolder(file) {
  try {
    const pid = Number(fs.readFileSync(file, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e?.code === "EPERM";
  }
}

/**
 * Wait until this process holds the build lock (`file`); returns the
 * function that releases it.
 */
export async function acquireBuildLock(log, file = lockPath) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let told = false;
  let unreadableSince = 0;
  for (;;) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: "wx" });
      return () => {
        if (lockHolder(file) === process.pid) fs.rmSync(file, { force: true });
      };
    } catch (e) {
      if (e?.code !== "EEXIST") throw e;
    }
    const holder = lockHolder(file);
    if (holder !== null && !alive(holder)) {
      // Left by a build that was killed: take it over.
      fs.rmSync(file, { force: true });
      continue;
    }
    if (holder === null) {
      // Being written right now, or (after a few seconds) left empty by a crash.
      unreadableSince ||= Date.now();
      if (Date.now() - unreadableSince > 5_000) fs.rmSync(file, { force: true });
    } else {
      unreadableSince = 0;
      if (!told) {
        log(`baton: waiting for the build another process is running (pid ${holder})…`);
        told = true;
      }
    }
    await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
  }
}

/** Build what the plan says; returns false when a build failed. */
export async function build(options = {}) {
  const log = options.log ?? ((s) => process.stderr.write(`${s}\n`));
  const release = await acquireBuildLock(log);
  try {
    return await buildLocked({ ...options, log });
  } finally {
    release();
  }
}

async function buildLocked({ force = false, ifNeeded = false, log }) {
  const plan = ifNeeded ? buildPlan({ force }) : { pages: "requested", static: "requested", server: "requested" };
  const m = readManifest();
  if (plan.pages) {
    log(`baton: building the pages with next build (${plan.pages})…`);
    const started = Date.now();
    const inputs = await pageInputs();
    const r = spawnSync(bin("next"), ["build"], { cwd: root, stdio: "inherit", env: { ...process.env, NODE_ENV: "production" } });
    if (r.status !== 0) {
      log("baton: `next build` failed");
      return false;
    }
    m.pages = { builtAt: started, inputs };
    writeManifest(m);
  }
  if (plan.pages || plan.static) {
    try {
      await compressPart(m, log);
    } catch (e) {
      log(`baton: compressing the browser files failed: ${e instanceof Error ? e.message : String(e)}`);
      return false;
    }
    writeManifest(m);
  }
  if (plan.server) {
    log(`baton: compiling the console server (${plan.server})…`);
    const started = Date.now();
    try {
      m.server = { builtAt: started, inputs: await buildServer() };
    } catch (e) {
      log(`baton: compiling the console server failed: ${e instanceof Error ? e.message : String(e)}`);
      return false;
    }
    writeManifest(m);
  }
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const ok = await build({ force: args.includes("--force"), ifNeeded: args.includes("--if-needed") });
  process.exit(ok ? 0 : 1);
}
