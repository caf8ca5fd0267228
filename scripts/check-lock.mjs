#!/usr/bin/env node
// Checks that package-lock.json lets `npm ci` install on every platform and on
// the documented Node version, without a network or a clean clone:
//   1. every dependency range in package.json is what the lock's root records
//      (npm ci refuses a lock that is out of sync);
//   2. every optional dependency of every locked package has its own entry
//      (the platform binaries of next, buf, tailwind's oxide, lightningcss,
//      rollup…; a lock rewritten from a Linux node_modules drops the others);
//   3. every locked package's `engines.node` admits the lowest Node version
//      package.json's `engines` allows (no EBADENGINE warnings on install).
// Exit 1 with one line per problem. Run by `npm test` and `npm run lint`.
import fs from "node:fs";
import path from "node:path";
import semver from "semver";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
const lock = JSON.parse(fs.readFileSync(path.join(root, "package-lock.json"), "utf8"));
const packages = lock.packages ?? {};
const problems = [];

// 1. package.json ⇄ lock root.
const lockRoot = packages[""] ?? {};
for (const field of ["dependencies", "devDependencies", "optionalDependencies"]) {
  const want = pkg[field] ?? {};
  const have = lockRoot[field] ?? {};
  for (const [name, range] of Object.entries(want)) {
    if (have[name] !== range) problems.push(`${field}.${name}: package.json says ${range}, the lock says ${have[name] ?? "nothing"}`);
  }
  for (const name of Object.keys(have)) {
    if (!(name in want)) problems.push(`${field}.${name}: in the lock but not in package.json`);
  }
}

// 2. optional dependencies present. npm resolves a dependency by walking up
// node_modules folders, so look for the nearest entry.
function resolves(fromKey, name) {
  let dir = fromKey;
  for (;;) {
    const key = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[key]) return true;
    if (!dir) return false;
    const cut = dir.lastIndexOf("/node_modules/");
    dir = cut === -1 ? "" : dir.slice(0, cut);
  }
}
let optionalCount = 0;
for (const [key, entry] of Object.entries(packages)) {
  for (const name of Object.keys(entry.optionalDependencies ?? {})) {
    optionalCount++;
    if (!resolves(key, name)) problems.push(`${key || "(root)"}: optional dependency ${name} is missing from the lock`);
  }
}

// 3. engines.
const floor = semver.minVersion(pkg.engines?.node ?? "*")?.version;
if (!floor) problems.push(`package.json engines.node (${pkg.engines?.node}) has no lowest version`);
else {
  for (const [key, entry] of Object.entries(packages)) {
    const range = entry.engines?.node;
    if (key && range && !semver.satisfies(floor, range)) {
      problems.push(`${key}@${entry.version} requires Node ${range}; package.json allows ${pkg.engines.node}`);
    }
  }
}

if (problems.length) {
  for (const p of problems) console.error(`lock: ${p}`);
  console.error(
    `lock: ${problems.length} problem(s); regenerate with \`npm install --package-lock-only\` (from a clean clone) and check again`,
  );
  process.exit(1);
}
console.log(
  `lock: in sync with package.json; ${optionalCount} optional platform dependencies all locked; every package admits Node ${floor}`,
);
