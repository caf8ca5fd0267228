// The rebuild decision of `npm start`: a build part is out of date when a file
// it read changed or disappeared, or when a new route file appeared.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
// @ts-expect-error -- plain ESM script without type declarations
import { acquireBuildLock, EAGER_COMPILE_HINT, markEagerChunks, staleReason } from "./build.mjs";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function project(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "baton-build-"));
  dirs.push(d);
  fs.mkdirSync(path.join(d, "app", "inbox"), { recursive: true });
  for (const f of ["app/page.tsx", "app/inbox/page.tsx", "lib.ts"]) fs.writeFileSync(path.join(d, f), "export {};\n");
  return d;
}

function setMtime(file: string, ms: number): void {
  fs.utimesSync(file, ms / 1000, ms / 1000);
}

type Reason = (part: unknown, opts: { base: string; newRoutes?: string[] }) => string | null;
const stale = staleReason as Reason;

describe("staleReason", () => {
  it("is null when nothing the build read changed", () => {
    const base = project();
    const builtAt = Date.now();
    for (const f of ["app/page.tsx", "app/inbox/page.tsx", "lib.ts"]) setMtime(path.join(base, f), builtAt - 60_000);
    const part = { builtAt, inputs: ["app/page.tsx", "app/inbox/page.tsx", "lib.ts"] };
    expect(stale(part, { base, newRoutes: [path.join(base, "app/page.tsx")] })).toBeNull();
  });
  it("names a changed, a removed and a new route file", () => {
    const base = project();
    const builtAt = Date.now() - 10_000;
    for (const f of ["app/page.tsx", "app/inbox/page.tsx"]) setMtime(path.join(base, f), builtAt - 60_000);
    setMtime(path.join(base, "lib.ts"), builtAt + 5_000);
    expect(stale({ builtAt, inputs: ["app/page.tsx", "lib.ts"] }, { base })).toBe("lib.ts changed");
    expect(stale({ builtAt, inputs: ["app/page.tsx", "gone.ts"] }, { base })).toBe("gone.ts is gone");
    expect(stale({ builtAt, inputs: ["app/page.tsx"] }, { base, newRoutes: [path.join(base, "app/inbox/page.tsx")] })).toBe(
      "app/inbox/page.tsx is new",
    );
  });
  it("treats a part never recorded as not built", () => {
    expect(stale(undefined, { base: project() })).toBe("not built yet");
    expect(stale({ builtAt: 0 }, { base: project() })).toBe("not built yet");
  });
});

type Acquire = (log: (line: string) => void, file: string) => Promise<() => void>;
const acquire = acquireBuildLock as Acquire;

describe("the build lock (one build at a time)", () => {
  it("makes a second builder wait until the first releases it", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-build-lock-"));
    dirs.push(dir);
    const file = path.join(dir, "build.lock");
    const lines: string[] = [];
    const releaseFirst = await acquire((l) => lines.push(l), file);
    expect(fs.readFileSync(file, "utf8")).toBe(String(process.pid));
    // The same pid holds it, so the second call waits (it does not take over a live holder's lock).
    let secondHeld = false;
    const second = acquire((l) => lines.push(l), file).then((release) => {
      secondHeld = true;
      return release;
    });
    await new Promise((r) => setTimeout(r, 600));
    expect(secondHeld).toBe(false);
    expect(lines.join("\n")).toMatch(/waiting for the build another process is running/);
    releaseFirst();
    const releaseSecond = await second;
    expect(secondHeld).toBe(true);
    releaseSecond();
    expect(fs.existsSync(file)).toBe(false);
  });
  it("takes over a lock left by a process that is gone", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-build-lock-"));
    dirs.push(dir);
    const file = path.join(dir, "build.lock");
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    fs.writeFileSync(file, gone.stdout);
    const release = await acquire(() => {}, file);
    expect(fs.readFileSync(file, "utf8")).toBe(String(process.pid));
    release();
  });
});

type Mark = (nextDir: string) => { marked: number; eager: number; framework: number };
const mark = markEagerChunks as Mark;
const HINT = EAGER_COMPILE_HINT as string;

describe("the eager compile hint on Baton's chunks", () => {
  function nextBuild(manifest: unknown): string {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), "baton-next-"));
    dirs.push(d);
    fs.mkdirSync(path.join(d, "static", "chunks"), { recursive: true });
    fs.writeFileSync(path.join(d, "build-manifest.json"), JSON.stringify(manifest));
    for (const f of ["react.js", "polyfill.js", "live.js", "page.js", "style.css"])
      fs.writeFileSync(path.join(d, "static", "chunks", f), `/* ${f} */`);
    return d;
  }
  const read = (d: string, f: string) => fs.readFileSync(path.join(d, "static", "chunks", f), "utf8");

  it("goes first in every chunk but the framework's, once", () => {
    const d = nextBuild({ rootMainFiles: ["static/chunks/react.js"], polyfillFiles: ["static/chunks/polyfill.js"], pages: {} });
    expect(HINT).toBe("//# allFunctionsCalledOnLoad\n");
    expect(mark(d)).toEqual({ marked: 2, eager: 2, framework: 2 });
    expect(read(d, "live.js")).toBe(`${HINT}/* live.js */`);
    expect(read(d, "page.js")).toBe(`${HINT}/* page.js */`);
    expect(read(d, "react.js")).toBe("/* react.js */");
    expect(read(d, "polyfill.js")).toBe("/* polyfill.js */");
    expect(read(d, "style.css")).toBe("/* style.css */");
    // A second run (an interrupted build compressed again) changes nothing.
    expect(mark(d)).toEqual({ marked: 0, eager: 2, framework: 2 });
    expect(read(d, "live.js")).toBe(`${HINT}/* live.js */`);
  });
  it("refuses a manifest that names no framework chunk rather than mark them all", () => {
    const d = nextBuild({ pages: {} });
    expect(() => mark(d)).toThrow(/names no framework chunks/);
    expect(read(d, "react.js")).toBe("/* react.js */");
  });
});
