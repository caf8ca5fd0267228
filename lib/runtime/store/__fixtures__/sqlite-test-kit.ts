// What the SQLite store's unit tests share (sqlite.test.ts,
// sqlite-indexes.test.ts, sqlite-crash.test.ts): a fresh data folder per test
// with the stores opened in it closed afterwards, an envelope record, a
// logger that records its lines, and a plain connection to the store's file.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach } from "vitest";
import type { StoreLogger } from "../common";
import { openSqliteStore, SQLITE_FILE_NAME, type SqliteStore } from "../sqlite";
import type { LogRecord } from "../types";

const enc = new TextEncoder();

export function env(sessionId: string, seq: number, text = `${sessionId}#${seq}`): LogRecord {
  return { sessionId, kind: "envelope", seq, recvMs: 1_700_000_000_000 + seq, envelope: enc.encode(text) };
}

export interface LogLine {
  level: "info" | "warn" | "error";
  obj: object;
  msg: string | undefined;
}

export function recordingLogger(): StoreLogger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  return {
    lines,
    info: (obj, msg) => void lines.push({ level: "info", obj, msg }),
    warn: (obj, msg) => void lines.push({ level: "warn", obj, msg }),
    error: (obj, msg) => void lines.push({ level: "error", obj, msg }),
  };
}

/** Run `fn` on a plain connection to the (closed) store file. */
export function withRaw<T>(dir: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path.join(dir, SQLITE_FILE_NAME));
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** The current test's data folder (not created until a store opens it). */
export let dir: string;
let open: SqliteStore[];

/** Give every test of the calling file a fresh `dir`; call once at its top level. */
export function freshDirPerTest(): void {
  beforeEach(() => {
    dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "baton-sqlite-")), "data");
    open = [];
  });
  afterEach(async () => {
    for (const s of open) await s.close().catch(() => undefined);
    fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  });
}

/** Open a store in `at` (the current test's folder by default); closed after the test. */
export function openStore(logger?: StoreLogger, at = dir, integrityCheck?: "auto" | "always"): SqliteStore {
  const s = openSqliteStore({ dir: at, logger, integrityCheck });
  open.push(s);
  return s;
}
