// The row feed keeps no decoded rows once it has applied them (issue 9,
// "Console at scale"): the stream's async iteration keeps the last
// WatchListRows response reachable for a while after it is applied, so the
// feed empties each response's rows itself; otherwise, while a large catalog
// fills, those rows are promoted to V8's old space and the console's RSS grows
// with the history it reads. Against a runtime PROCESS over real gRPC; the
// console's runtime client is wrapped only to keep a reference to every
// response it hands the feed.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WatchListRowsResponse } from "@/lib/gen/baton/v1/runtime_catalog_pb";
import { CatalogFeeder } from "@/lib/gateway/catalog/feeder";
import { SqliteCatalog } from "@/lib/gateway/catalog/sqlite";
import { silentLogger } from "@/lib/gateway/logger";
import { createRuntimeClient, type RuntimeReader } from "@/lib/gateway/runtime-client";
import { OBSERVER, seed, spawnRuntime, type RuntimeProcess } from "./catalog-harness";
import { tempDir, waitFor } from "./harness";

const SESSIONS = 240;
const folders: string[] = [];

describe("the row feed", () => {
  let runtime: RuntimeProcess;

  beforeAll(async () => {
    const d = tempDir("baton-release-runtime-");
    folders.push(d);
    runtime = await spawnRuntime(d);
    await seed(runtime, SESSIONS);
  }, 300_000);

  afterAll(async () => {
    await runtime?.stop();
    for (const d of folders) fs.rmSync(d, { recursive: true, force: true });
  });

  it("empties every WatchListRows response once its rows are in the catalog", async () => {
    const dir = tempDir("baton-release-console-");
    folders.push(dir);
    const reader = createRuntimeClient({ kind: "external", baseUrl: runtime.url, token: OBSERVER });
    const handed: WatchListRowsResponse[] = [];
    const rowsSent: number[] = [];
    const recording: RuntimeReader = Object.create(reader, {
      watchListRows: {
        value: async function* (request: Parameters<RuntimeReader["watchListRows"]>[0], signal: AbortSignal) {
          for await (const res of reader.watchListRows(request, signal)) {
            handed.push(res);
            rowsSent.push(res.rows.length);
            yield res;
          }
        },
      },
    });
    const store = new SqliteCatalog({ path: path.join(dir, "console.sqlite") });
    const feeder = new CatalogFeeder({ store, runtime: recording, logger: silentLogger, maxRows: 25 });
    try {
      feeder.start();
      await waitFor(
        () => feeder.mode === "rows" && !feeder.status().backfilling && store.counts().known === SESSIONS,
        60_000,
        "catalog filled from the rows",
      );
      // Every session came through the responses, 25 rows at most each...
      expect(rowsSent.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(SESSIONS);
      expect(handed.length).toBeGreaterThanOrEqual(SESSIONS / 25);
      // ...and none of them holds its rows any more.
      expect(handed.filter((r) => r.rows.length > 0).map((r) => r.rows.length)).toEqual([]);
    } finally {
      feeder.close();
      store.close();
      reader.close();
    }
  }, 120_000);
});
