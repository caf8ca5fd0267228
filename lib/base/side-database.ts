// A small SQLite file the console keeps beside its catalog (hand-off
// templates, escalation chains, the webhook outbox): the folder made if
// missing, write-ahead logging for a file, NORMAL sync (a crash loses at most
// the last commits, never the file's consistency), and the schema applied
// (statements written to be re-run: CREATE … IF NOT EXISTS).
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";

/** Open (creating if needed) `file`, or ":memory:", with `schema` applied. */
export function openSideDatabase(file: string, schema: string): Database.Database {
  if (file !== ":memory:") fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  try {
    if (file !== ":memory:") db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.exec(schema);
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}
