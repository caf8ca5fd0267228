#!/usr/bin/env node
// `baton` / `npx baton`: runs the CLI (lib/cli/main.ts) from a compiled
// bundle kept up to date by bin/cli-bundle.mjs, in this same process.
import { loadCli } from "./cli-bundle.mjs";

const cli = await loadCli();
const code = await cli.runCli(process.argv.slice(2));
// Open HTTP/2 connections are closed by the CLI; the exit makes sure nothing
// left behind (a half-closed socket, a timer) holds the process open.
process.exitCode = code;
setTimeout(() => process.exit(code), 200).unref();
