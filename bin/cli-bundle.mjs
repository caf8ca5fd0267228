// Loads the baton CLI (lib/cli/main.ts) as a compiled bundle. The TypeScript
// sources are compiled by esbuild into .baton/cli/main.mjs the first time and
// again whenever a file the last build read has changed or disappeared
// (recorded in .baton/cli/inputs.json), so a command starts in about 0.2 s
// instead of the 1.3 s it takes to compile on every start (tsx). npm packages
// stay plain imports, resolved from the project's node_modules.
//
// Several commands may start at once (scripts, tests): one builds, under a
// lock file, while the others wait for its bundle; the bundle and its record
// are renamed into place, so a reader never sees them half written. If esbuild is not installed (a production install
// without dev dependencies), the sources are loaded through tsx instead.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outDir = path.join(root, ".baton", "cli");
const bundle = path.join(outDir, "main.mjs");
const inputsFile = path.join(outDir, "inputs.json");
const entry = path.join(root, "lib", "cli", "main.ts");
// Files read at run time next to their module (the demo runbooks), copied next to the bundle.
const RUNTIME_FILES = [path.join(root, "lib", "demo", "runbooks")];

/** Whether the bundle was built after every file it was built from last changed. */
export function bundleIsFresh() {
  let recorded;
  try {
    recorded = JSON.parse(fs.readFileSync(inputsFile, "utf8"));
    if (!fs.existsSync(bundle)) return false;
  } catch {
    return false;
  }
  if (typeof recorded?.builtAtMs !== "number" || !Array.isArray(recorded.inputs)) return false;
  for (const f of recorded.inputs) {
    try {
      if (fs.statSync(path.join(root, f)).mtimeMs > recorded.builtAtMs) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** A stale build lock (its process died) is taken over after this long. */
const STALE_LOCK_MS = 60_000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Build under an exclusive lock file, so that commands started at the same
 * moment build once: the others wait for it and then use its bundle.
 */
async function buildOnce(esbuild) {
  fs.mkdirSync(outDir, { recursive: true });
  const lock = path.join(outDir, "build.lock");
  for (;;) {
    try {
      fs.closeSync(fs.openSync(lock, "wx"));
      break;
    } catch (e) {
      if (e?.code !== "EEXIST") throw e;
    }
    try {
      if (Date.now() - fs.statSync(lock).mtimeMs > STALE_LOCK_MS) fs.rmSync(lock, { force: true });
    } catch {
      // gone meanwhile: try again
    }
    await sleep(50);
    if (bundleIsFresh()) return;
  }
  try {
    if (!bundleIsFresh()) await buildBundle(esbuild);
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

/** Compile lib/cli/main.ts into .baton/cli/main.mjs and record what it read. */
export async function buildBundle(esbuild) {
  // Stamped before reading the sources: a file saved during the build makes the next start rebuild.
  const builtAtMs = Date.now();
  fs.mkdirSync(outDir, { recursive: true });
  const tmp = `${bundle}.${process.pid}.${builtAtMs}.tmp`;
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [entry],
    bundle: true,
    outfile: tmp,
    platform: "node",
    target: "node20",
    format: "esm",
    packages: "external",
    metafile: true,
    logLevel: "warning",
    banner: { js: "// Built by bin/cli-bundle.mjs from lib/cli/main.ts; do not edit." },
  });
  const inputs = Object.keys(result.metafile.inputs)
    .filter((f) => !f.includes("node_modules/") && !f.startsWith("<"))
    .map((f) => path.relative(root, path.resolve(root, f)).split(path.sep).join("/"));
  inputs.push("package-lock.json", "tsconfig.json");
  for (const dir of RUNTIME_FILES) {
    const to = path.join(outDir, path.basename(dir));
    fs.rmSync(to, { recursive: true, force: true });
    fs.cpSync(dir, to, { recursive: true });
    for (const name of fs.readdirSync(dir)) inputs.push(path.relative(root, path.join(dir, name)).split(path.sep).join("/"));
  }
  fs.renameSync(tmp, bundle);
  const tmpInputs = `${inputsFile}.${process.pid}.${builtAtMs}.tmp`;
  fs.writeFileSync(tmpInputs, `${JSON.stringify({ builtAtMs, inputs: [...new Set(inputs)].sort() }, null, 1)}\n`);
  fs.renameSync(tmpInputs, inputsFile);
}

/** The CLI module ({ runCli }), compiled when needed. */
export async function loadCli() {
  if (!bundleIsFresh()) {
    let esbuild;
    try {
      esbuild = await import("esbuild");
    } catch {
      const { tsImport } = await import("tsx/esm/api");
      return tsImport(entry, { parentURL: import.meta.url, tsconfig: path.join(root, "tsconfig.json") });
    }
    await buildOnce(esbuild);
  }
  return import(pathToFileURL(bundle).href);
}
