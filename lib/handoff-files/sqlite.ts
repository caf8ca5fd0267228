// The SQLite file shared by the history store and the bridge's state
// (default $BATON_DATA_DIR/handoff-files.sqlite). WAL mode, so the console,
// `baton files watch --record` and `baton files bridge` can use it at once.

import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";

export type Db = Database.Database;

const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE handoff (
    id INTEGER PRIMARY KEY,
    dir TEXT NOT NULL,
    name TEXT NOT NULL,
    task_id TEXT NOT NULL,
    present INTEGER NOT NULL,
    valid INTEGER NOT NULL,
    problem TEXT,
    status TEXT,
    last_valid_status TEXT,
    from_agent TEXT,
    to_agent TEXT,
    description TEXT,
    created_at TEXT,
    updated_at TEXT,
    last_hash TEXT,
    last_ctime_ms REAL,
    first_seen_ms INTEGER NOT NULL,
    last_change_ms INTEGER NOT NULL,
    seq INTEGER NOT NULL DEFAULT 0,
    pruned INTEGER NOT NULL DEFAULT 0,
    content_bytes INTEGER NOT NULL DEFAULT 0,
    UNIQUE (dir, name)
  );
  CREATE INDEX handoff_recent ON handoff (last_change_ms DESC, id DESC);
  CREATE INDEX handoff_task ON handoff (task_id);
  CREATE INDEX handoff_inbox ON handoff (status, to_agent, last_change_ms DESC);
  CREATE TABLE snapshot (
    handoff_id INTEGER NOT NULL REFERENCES handoff (id),
    seq INTEGER NOT NULL,
    observed_at_ms INTEGER NOT NULL,
    source TEXT NOT NULL,
    kind TEXT NOT NULL,
    valid INTEGER NOT NULL,
    status TEXT,
    to_agent TEXT,
    step TEXT,
    problem TEXT,
    hash TEXT,
    size INTEGER,
    content TEXT,
    PRIMARY KEY (handoff_id, seq)
  ) WITHOUT ROWID;
  CREATE TABLE bridge_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE bridge_task (
    dir TEXT NOT NULL,
    task_id TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    from_agent TEXT NOT NULL,
    participants TEXT NOT NULL,
    phase TEXT NOT NULL,
    note TEXT,
    file_hash TEXT,
    updated_ms INTEGER NOT NULL,
    PRIMARY KEY (dir, task_id)
  ) WITHOUT ROWID;
  CREATE INDEX bridge_task_phase ON bridge_task (phase);
  `,
];

/**
 * Open (creating the folder and file if needed) and migrate. `durable`
 * (synchronous=FULL) for the bridge's state; the history uses NORMAL (a
 * power loss may drop the last observations, which the next scan makes again).
 */
export function openHandoffDb(file: string, opts: { durable?: boolean; readonly?: boolean } = {}): Db {
  if (!opts.readonly) fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file, { timeout: 5_000, ...(opts.readonly ? { readonly: true, fileMustExist: true } : {}) });
  try {
    if (!opts.readonly) {
      db.pragma("journal_mode = WAL");
      db.pragma(`synchronous = ${opts.durable ? "FULL" : "NORMAL"}`);
      db.pragma("foreign_keys = ON");
      migrate(db);
    }
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}

function migrate(db: Db): void {
  db.transaction(() => {
    const from = Number(db.pragma("user_version", { simple: true }));
    if (from > MIGRATIONS.length) {
      throw new Error(`${db.name} was written by a newer Baton (schema ${from}; this one knows ${MIGRATIONS.length})`);
    }
    for (let v = from; v < MIGRATIONS.length; v++) {
      db.exec(MIGRATIONS[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    }
  }).immediate();
}
