// A long-lived `baton` CLI process for the race test: it loads the CLI
// exactly as bin/baton.mjs does (lib/cli/main.ts through tsx, same tsconfig)
// and then runs the CLI's main() once per request from the parent, starting
// at the wall-clock time the parent names, so eight such processes act at
// the same moment. Paying Node's and tsx's start-up once per process instead
// of once per command is what keeps 400 CLI runs fast on two cores.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { tsImport } from "tsx/esm/api";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const cli = await tsImport(path.join(root, "lib", "cli", "main.ts"), {
  parentURL: import.meta.url,
  tsconfig: path.join(root, "tsconfig.json"),
});

process.on("message", async (req) => {
  if (req === "exit") process.exit(0);
  const out = [];
  const err = [];
  // Sleep until just before the start time, then spin to it.
  const wait = req.startAt - Date.now() - 5;
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  while (Date.now() < req.startAt) {
    /* spin */
  }
  const code = await cli.main(req.argv, {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env: { ...process.env, ...req.env },
    signal: new AbortController().signal,
  });
  process.send({ id: req.id, code, stdout: out.join(""), stderr: err.join("") });
});
process.send({ ready: true });
