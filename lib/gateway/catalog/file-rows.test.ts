// v0.1 file handoffs as catalog rows: a real directory, the console's real
// watcher and history store (FileHandoffs), and a real SQLite catalog. Rows
// are written, updated and removed as files change; the list's mode filter,
// search and "waiting on" find them; runtime resets keep them; rows of files
// removed (or directories unwatched) while the console was stopped go.
import { mkdtemp, readFile, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { SessionSummarySchema } from "@/lib/gen/baton/v1/console_pb";
import { SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { handoffSettingsFromEnv } from "@/lib/handoff-files";
import { FILE_HANDOFF_MODE, TASK_MODE } from "@/lib/macp/constants";
import { FileHandoffs, dirKeyOf } from "../file-handoffs";
import { FileRowWriter, fileNextActors, fileRowId, removeFileRows } from "./file-rows";
import { MODE_KEYS, type CatalogQuery } from "./query";
import { SqliteCatalog } from "./sqlite";

let dir: string;
let data: string;
const closers: (() => void)[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "file-rows-"));
  data = await mkdtemp(path.join(os.tmpdir(), "file-rows-data-"));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) c();
  await rm(dir, { recursive: true, force: true });
  await rm(data, { recursive: true, force: true });
});

async function writeHandoff(id: string, over: Record<string, unknown> = {}): Promise<void> {
  const now = new Date().toISOString();
  const doc = {
    task_id: id,
    from_agent: "agent://planner",
    to_agent: "",
    status: "offered",
    description: `Rotate the certificates ${id}`,
    context: {},
    created_at: now,
    updated_at: now,
    ...over,
  };
  const tmp = path.join(dir, `.tmp-${id}`);
  await writeFile(tmp, JSON.stringify(doc));
  await rename(tmp, path.join(dir, `${id}.json`));
}

async function until(pred: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

function q(init: Partial<CatalogQuery> = {}): CatalogQuery {
  return { participant: "", text: "", sort: "activity", ascending: false, ...init };
}

function openCatalog(file = path.join(data, "console.sqlite")): SqliteCatalog {
  const c = new SqliteCatalog({ path: file });
  closers.push(() => c.close());
  return c;
}

function startHub(dirs = [dir]): FileHandoffs {
  const h = new FileHandoffs({
    dirs,
    settings: handoffSettingsFromEnv({ BATON_HANDOFF_WATCH: "watch" }),
    historyFile: path.join(data, "h.sqlite"),
  });
  closers.push(() => h.close());
  return h;
}

function follow(catalog: SqliteCatalog, hub: FileHandoffs): { writer: FileRowWriter; versions: number[] } {
  const versions: number[] = [];
  const writer = new FileRowWriter({ store: catalog, source: hub.rowSource(), written: (v) => versions.push(v), flushMs: 20 });
  closers.push(() => writer.close());
  return { writer, versions };
}

function macpRow(id: string) {
  return {
    summary: create(SessionSummarySchema, {
      metadata: create(SessionMetadataSchema, {
        sessionId: id,
        mode: TASK_MODE,
        state: SessionState.OPEN,
        participants: ["agent://x"],
        initiator: "agent://x",
      }),
      intent: "an MACP task",
      lastActivityUnixMs: 1n,
    }),
    folded: 1,
    final: false,
    needsRead: false,
    nextActors: [],
  };
}

describe("fileNextActors", () => {
  it("offered: to_agent, or anyone but the offerer; accepted: who took it; else nobody", () => {
    const base = { present: true, valid: true, fromAgent: "a", toAgent: "" };
    expect(fileNextActors({ ...base, status: "offered" })).toEqual(["*", "!a"]);
    expect(fileNextActors({ ...base, status: "offered", toAgent: "b" })).toEqual(["b"]);
    expect(fileNextActors({ ...base, status: "accepted", toAgent: "b" })).toEqual(["b"]);
    for (const status of ["completed", "failed", "rejected"] as const)
      expect(fileNextActors({ ...base, status, toAgent: "b" })).toEqual([]);
    expect(fileNextActors({ ...base, valid: false, status: "offered" })).toEqual([]);
    expect(fileNextActors({ ...base, present: false, status: "offered" })).toEqual([]);
  });
});

describe("FileRowWriter", () => {
  it("writes a row per file as the watcher records it, updates it on change and deletes it on removal", async () => {
    await writeHandoff("t-first");
    const catalog = openCatalog();
    const hub = startHub();
    const { writer, versions } = follow(catalog, hub);
    await writer.ready;
    const key = dirKeyOf(dir);
    const id = fileRowId(key, "t-first.json");
    const row = catalog.get(id);
    expect(row?.kind).toBe("file");
    expect(row?.summary.metadata).toMatchObject({
      sessionId: id,
      mode: FILE_HANDOFF_MODE,
      state: SessionState.OPEN,
      contextId: "t-first",
      initiator: "agent://planner",
    });
    expect(row?.summary).toMatchObject({
      intent: "Rotate the certificates t-first",
      currentOwner: "agent://planner",
      currentTarget: "",
      phase: "Requested",
    });
    expect(row?.summary.fileHandoff).toMatchObject({ dirKey: key, name: "t-first.json", status: "offered", valid: true, present: true });
    expect(row?.nextActors).toEqual(["*", "!agent://planner"]);
    expect(versions.length).toBeGreaterThan(0);

    // A new file, written by a plain process, shows up.
    await writeHandoff("t-second", { to_agent: "human:bob", description: "Renew the pager rota" });
    const second = fileRowId(key, "t-second.json");
    await until(() => catalog.get(second) !== undefined);
    expect(catalog.get(second)?.nextActors).toEqual(["human:bob"]);

    // A change updates the row in place (status, pill, waiting on, activity).
    const before = catalog.get(second);
    await writeHandoff("t-second", { to_agent: "human:bob", status: "accepted", description: "Renew the pager rota" });
    await until(() => catalog.get(second)?.summary.fileHandoff?.status === "accepted");
    const after = catalog.get(second);
    expect(after?.summary.phase).toBe("InProgress");
    expect(after?.nextActors).toEqual(["human:bob"]);
    expect(after?.version).toBeGreaterThan(before?.version ?? 0);
    expect(Number(after?.summary.lastActivityUnixMs)).toBeGreaterThanOrEqual(Number(before?.summary.lastActivityUnixMs));
    await writeHandoff("t-second", { to_agent: "human:bob", status: "completed", description: "Renew the pager rota" });
    await until(() => catalog.get(second)?.summary.fileHandoff?.status === "completed");
    expect(catalog.get(second)?.summary).toMatchObject({ outcome: "positive", phase: "Completed" });
    expect(catalog.get(second)?.summary.metadata?.state).toBe(SessionState.RESOLVED);
    expect(catalog.get(second)?.nextActors).toEqual([]);

    // Removal deletes the row and moves the version (the list's notices see it).
    const v = catalog.version;
    await unlink(path.join(dir, "t-second.json"));
    await until(() => catalog.get(second) === undefined);
    expect(catalog.version).toBeGreaterThan(v);
    expect(versions.at(-1)).toBe(catalog.version);
    expect(catalog.fileCount()).toBe(1);
  });

  it("shows invalid and hostile files as invalid rows with the reason, and never changes them", async () => {
    const catalog = openCatalog();
    const hub = startHub();
    const { writer } = follow(catalog, hub);
    await writer.ready;
    await writeFile(path.join(dir, "broken.json"), '{"task_id": "broken", "status": "off');
    const id = fileRowId(dirKeyOf(dir), "broken.json");
    await until(() => catalog.get(id) !== undefined);
    const row = catalog.get(id);
    expect(row?.summary.fileHandoff).toMatchObject({ valid: false, present: true });
    expect(row?.summary.fileHandoff?.problem).not.toBe("");
    expect(row?.summary.scope).toBe(row?.summary.fileHandoff?.problem);
    expect(row?.summary.metadata?.state).toBe(SessionState.UNSPECIFIED);
    expect(row?.nextActors).toEqual([]);
    // Searchable by name, listed under the file mode.
    expect(catalog.page(q({ text: "broken" }), 0, 10).rows.map((r) => r.metadata?.sessionId)).toEqual([id]);

    // Hostile files: 10 MB, a link out of the directory, a name that is not the task_id, an illegal step.
    const outside = path.join(data, "secret.json");
    await writeFile(outside, "{}");
    await symlink(outside, path.join(dir, "leak.json"));
    const big = Buffer.alloc(10 * 1024 * 1024, 0x20);
    await writeFile(path.join(dir, "big.json"), big);
    await writeHandoff("other-id");
    await rename(path.join(dir, "other-id.json"), path.join(dir, "wrong-name.json"));
    await writeHandoff("stepper", { status: "completed", to_agent: "agent://x" });
    const stepper = fileRowId(dirKeyOf(dir), "stepper.json");
    await until(() => catalog.get(stepper)?.summary.fileHandoff?.status === "completed");
    await writeHandoff("stepper", { status: "offered" });
    const problems: Record<string, RegExp> = {
      "leak.json": /outside the handoff directory/,
      "big.json": /over the \d+-byte limit/,
      "wrong-name.json": /does not match its task_id/,
      "stepper.json": /completed/,
    };
    for (const [name, problem] of Object.entries(problems)) {
      const rid = fileRowId(dirKeyOf(dir), name);
      await until(() => catalog.get(rid)?.summary.fileHandoff?.valid === false);
      const f = catalog.get(rid)?.summary.fileHandoff;
      expect(f?.problem, name).toMatch(problem);
      expect(catalog.get(rid)?.summary.scope, name).toBe(f?.problem);
    }
    expect((await readFile(path.join(dir, "big.json"))).equals(big)).toBe(true);
    expect(await readFile(outside, "utf8")).toBe("{}");
  });

  it("is found by the mode filter, by search over task id, description and agents, and by waiting on", async () => {
    await writeHandoff("3f2a9c1e-aaaa-4bbb-8ccc-000000000001", {
      description: "Rotate the TLS certificates",
      from_agent: "agent://planner",
    });
    await writeHandoff("3f2a9c1e-aaaa-4bbb-8ccc-000000000002", {
      description: "Renew the pager rota",
      from_agent: "agent://planner",
      to_agent: "human:bob",
    });
    const catalog = openCatalog();
    catalog.write([macpRow("macp-session-0000000000000000001")]);
    const hub = startHub();
    const { writer } = follow(catalog, hub);
    await writer.ready;
    const key = dirKeyOf(dir);
    const one = fileRowId(key, "3f2a9c1e-aaaa-4bbb-8ccc-000000000001.json");
    const two = fileRowId(key, "3f2a9c1e-aaaa-4bbb-8ccc-000000000002.json");
    const ids = (query: CatalogQuery) =>
      catalog
        .page(query, 0, 50)
        .rows.map((r) => r.metadata?.sessionId)
        .sort();

    expect(ids(q())).toEqual([one, two, "macp-session-0000000000000000001"].sort());
    expect(ids(q({ mode: MODE_KEYS.file }))).toEqual([one, two].sort());
    expect(ids(q({ mode: TASK_MODE }))).toEqual(["macp-session-0000000000000000001"]);
    expect(ids(q({ text: "000000000002" }))).toEqual([two]);
    expect(ids(q({ text: "tls cert" }))).toEqual([one]);
    expect(ids(q({ text: "human:bob" }))).toEqual([two]);
    expect(ids(q({ participant: "planner" }))).toEqual([one, two].sort());
    expect(ids(q({ state: SessionState.OPEN, mode: MODE_KEYS.file }))).toEqual([one, two].sort());
    // Waiting on: bob for his offer and the one made to anyone; the offerer for neither.
    expect(ids(q({ waitingOn: "human:bob" }))).toEqual([one, two].sort());
    expect(ids(q({ waitingOn: "human:carol" }))).toEqual([one]);
    expect(ids(q({ waitingOn: "agent://planner" }))).toEqual([]);
    const page = catalog.page(q({ waitingOn: "human:carol" }), 0, 10);
    expect(page.rows[0]?.waitingOn).toEqual(["*"]);
    expect(page.total).toBe(1);
  });

  it("rewrites nothing for files the watcher reports again unchanged, and drops rows of files removed while stopped", async () => {
    await writeHandoff("keep");
    await writeHandoff("gone");
    const catalogFile = path.join(data, "console.sqlite");
    let catalog = openCatalog(catalogFile);
    let hub = startHub();
    let w = follow(catalog, hub);
    await w.writer.ready;
    expect(catalog.fileCount()).toBe(2);
    w.writer.close();
    hub.close();
    catalog.close();

    // Stopped: one file goes, the other stays as it was.
    await unlink(path.join(dir, "gone.json"));
    catalog = openCatalog(catalogFile);
    const v = catalog.version;
    hub = startHub();
    w = follow(catalog, hub);
    await w.writer.ready;
    const key = dirKeyOf(dir);
    expect(catalog.get(fileRowId(key, "gone.json"))).toBeUndefined();
    expect(catalog.get(fileRowId(key, "keep.json"))?.version).toBeLessThanOrEqual(v);
    expect(catalog.version).toBe(v + 1);
    w.writer.close();
    hub.close();

    // The directory is no longer watched: its rows go at the next start.
    const other = await mkdtemp(path.join(os.tmpdir(), "file-rows-other-"));
    try {
      hub = startHub([other]);
      w = follow(catalog, hub);
      await w.writer.ready;
      expect(catalog.fileCount()).toBe(0);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it("a directory of 2,000 files is written in batched transactions (per 50 ms, at most 500 rows), and paged by the catalog", async () => {
    const now = new Date().toISOString();
    await Promise.all(
      Array.from({ length: 2_000 }, (_, i) => {
        const id = `bulk-${String(i).padStart(5, "0")}`;
        return writeFile(
          path.join(dir, `${id}.json`),
          JSON.stringify({
            task_id: id,
            from_agent: `agent://a${i % 7}`,
            to_agent: "",
            status: "offered",
            description: `bulk ${i}`,
            context: {},
            created_at: now,
            updated_at: now,
          }),
        );
      }),
    );
    const catalog = openCatalog();
    const hub = startHub();
    const { writer, versions } = follow(catalog, hub);
    await writer.ready;
    expect(catalog.fileCount()).toBe(2_000);
    // Batched (a transaction per 50 ms window, at most 500 rows each), not one per file; how many
    // windows it takes depends on the machine's speed, so only the bounds that do not are checked.
    expect(versions.length).toBeGreaterThanOrEqual(4);
    expect(versions.length).toBeLessThan(2_000 / 5);
    const last = catalog.page(q({ mode: MODE_KEYS.file, sort: "intent", ascending: true }), 1_990, 50);
    expect(last.total).toBe(2_000);
    expect(last.rows).toHaveLength(10);
    expect(catalog.page(q({ text: "bulk-01999" }), 0, 5).rows.map((r) => r.metadata?.contextId)).toEqual(["bulk-01999"]);
  }, 90_000);

  it("keeps file rows when the runtime's rows are reset, and removes them all when no directory is watched", async () => {
    await writeHandoff("stays");
    const catalog = openCatalog();
    catalog.write([macpRow("macp-session-0000000000000000001")]);
    const hub = startHub();
    const { writer } = follow(catalog, hub);
    await writer.ready;
    catalog.applyFeed([macpRow("macp-session-0000000000000000002")], { storeId: "new-store", change: 1n }, true);
    const all = catalog
      .page(q(), 0, 10)
      .rows.map((r) => r.metadata?.sessionId)
      .sort();
    expect(all).toEqual([fileRowId(dirKeyOf(dir), "stays.json"), "macp-session-0000000000000000002"].sort());
    // Search still finds it (its FTS entry survived the reset of the others').
    expect(catalog.page(q({ text: "stays" }), 0, 10).total).toBe(1);
    expect(catalog.counts().known).toBe(1);
    writer.close();
    removeFileRows(catalog);
    expect(catalog.fileCount()).toBe(0);
    expect(catalog.page(q(), 0, 10).total).toBe(1);
  });
});
