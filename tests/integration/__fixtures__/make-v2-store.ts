// Provenance of v2-store/: a runtime store of schema v2 (the session and
// message-id indexes, before the list rows of schema v3), made once from
// v1-store/ by the schema-v2 runtime (commit fe05e38):
//
//   git stash && npx tsx tests/integration/__fixtures__/make-v2-store.ts && git stash pop
//
// It opens a copy of v1-store with that runtime (which migrates it to v2 and
// summarises every session), on a clock from when v1-store was written (so no
// open session expires), and closes it. Read by
// tests/integration/list-rows-migration.test.ts. Running it against a newer
// runtime writes a store of that runtime's schema, so do not re-run it.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { loadConfig } from "@/lib/runtime/config";
import { Kernel } from "@/lib/runtime/kernel";
import { openSqliteStore, SQLITE_FILE_NAME } from "@/lib/runtime/store/sqlite";
import { tempDir } from "../harness";

const here = path.dirname(fileURLToPath(import.meta.url));
const v1 = path.join(here, "v1-store");
const out = path.join(here, "v2-store");
const expected = JSON.parse(fs.readFileSync(path.join(v1, "expected.json"), "utf8")) as {
  sessions: { startedAtUnixMs: string; participantActivity?: { lastMessageAtUnixMs: string }[] }[];
};
const fixtureNow =
  Math.max(
    ...expected.sessions.flatMap((s) => [
      Number(s.startedAtUnixMs),
      ...(s.participantActivity ?? []).map((a) => Number(a.lastMessageAtUnixMs)),
    ]),
  ) + 1_000;
const dir = tempDir("baton-v2-fixture-");
fs.copyFileSync(path.join(v1, SQLITE_FILE_NAME), path.join(dir, SQLITE_FILE_NAME));
const store = openSqliteStore({ dir });
const config = loadConfig({ MACP_ALLOW_INSECURE: "1" });
const kernel = await Kernel.open({ store, config, logger: pino({ level: "silent" }), clock: () => fixtureNow });
if (store.openReport.schemaVersion !== 2) throw new Error(`expected a schema-v2 runtime, got ${store.openReport.schemaVersion}`);
await kernel.close();
await store.close();
fs.mkdirSync(out, { recursive: true });
fs.copyFileSync(path.join(dir, SQLITE_FILE_NAME), path.join(out, SQLITE_FILE_NAME));
fs.rmSync(dir, { recursive: true, force: true });
process.stdout.write(`wrote ${out}\n`);
