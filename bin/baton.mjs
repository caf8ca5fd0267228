#!/usr/bin/env node
// `baton` / `npx baton`: loads the TypeScript CLI (lib/cli/main.ts) through
// tsx's loader in this same process, with the repository's tsconfig so the
// `@/` path alias resolves wherever the command is run from.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { tsImport } from "tsx/esm/api";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const cli = await tsImport(path.join(root, "lib", "cli", "main.ts"), {
  parentURL: import.meta.url,
  tsconfig: path.join(root, "tsconfig.json"),
});
const code = await cli.runCli(process.argv.slice(2));
// Open HTTP/2 connections are closed by the CLI; the exit makes sure nothing
// left behind (a half-closed socket, a timer) holds the process open.
process.exitCode = code;
setTimeout(() => process.exit(code), 200).unref();
