// The bridge's durable state (SQLite, synchronous=FULL): its secret, and for
// each handoff the current epoch and session, so a restarted bridge carries
// on in the same sessions instead of starting new ones.

import { randomBytes } from "node:crypto";
import { openHandoffDb, type Db } from "../sqlite";

export type BridgePhase =
  /** Being mirrored. */
  | "open"
  /** Final in the file and fully mirrored (until the file changes). */
  | "done"
  /** Already final when the bridge first saw it: not mirrored (until it is offered again). */
  | "skipped"
  /** Its session was cancelled on the MACP side: waiting for the file to change. */
  | "parked";

export interface BridgeTask {
  dir: string;
  taskId: string;
  /** 0 while skipped; 1, 2, … one per session. */
  epoch: number;
  sessionId: string;
  fromAgent: string;
  participants: string[];
  phase: BridgePhase;
  /** Why it is blocked or skipped, when it is. */
  note?: string;
  /** The file's hash when the phase was last set. */
  fileHash?: string;
  updatedMs: number;
}

interface Row {
  dir: string;
  task_id: string;
  epoch: number;
  session_id: string;
  from_agent: string;
  participants: string;
  phase: string;
  note: string | null;
  file_hash: string | null;
  updated_ms: number;
}

const PHASES: ReadonlySet<string> = new Set(["open", "done", "skipped", "parked"]);

function fromRow(r: Row): BridgeTask {
  let participants: string[] = [];
  try {
    const v: unknown = JSON.parse(r.participants);
    if (Array.isArray(v)) participants = v.filter((p): p is string => typeof p === "string");
  } catch {
    // Written by this module as a JSON array; anything else reads as none.
  }
  const t: BridgeTask = {
    dir: r.dir,
    taskId: r.task_id,
    epoch: r.epoch,
    sessionId: r.session_id,
    fromAgent: r.from_agent,
    participants,
    phase: (PHASES.has(r.phase) ? r.phase : "open") as BridgePhase,
    updatedMs: r.updated_ms,
  };
  if (r.note !== null) t.note = r.note;
  if (r.file_hash !== null) t.fileHash = r.file_hash;
  return t;
}

export class SqliteBridgeState {
  private readonly db: Db;
  private readonly stmts;

  constructor(file: string) {
    this.db = openHandoffDb(file, { durable: true });
    const db = this.db;
    this.stmts = {
      get: db.prepare<[string, string], Row>("SELECT * FROM bridge_task WHERE dir = ? AND task_id = ?"),
      put: db.prepare(`INSERT INTO bridge_task (dir, task_id, epoch, session_id, from_agent, participants, phase, note, file_hash, updated_ms)
        VALUES (@dir, @task_id, @epoch, @session_id, @from_agent, @participants, @phase, @note, @file_hash, @updated_ms)
        ON CONFLICT (dir, task_id) DO UPDATE SET epoch = excluded.epoch, session_id = excluded.session_id, from_agent = excluded.from_agent,
          participants = excluded.participants, phase = excluded.phase, note = excluded.note, file_hash = excluded.file_hash, updated_ms = excluded.updated_ms`),
      open: db.prepare<[string], { task_id: string }>("SELECT task_id FROM bridge_task WHERE dir = ? AND phase = 'open'"),
      bySession: db.prepare<[string], Row>("SELECT * FROM bridge_task WHERE session_id = ?"),
      getMeta: db.prepare<[string], { value: string }>("SELECT value FROM bridge_meta WHERE key = ?"),
      putMeta: db.prepare("INSERT OR IGNORE INTO bridge_meta (key, value) VALUES (?, ?)"),
    };
  }

  /** The secret session ids are derived with (made once, then kept). */
  secret(): Buffer {
    const existing = this.stmts.getMeta.get("secret");
    if (existing) return Buffer.from(existing.value, "hex");
    this.stmts.putMeta.run("secret", randomBytes(32).toString("hex"));
    return Buffer.from((this.stmts.getMeta.get("secret") as { value: string }).value, "hex");
  }

  get(dir: string, taskId: string): BridgeTask | undefined {
    const r = this.stmts.get.get(dir, taskId);
    return r ? fromRow(r) : undefined;
  }

  bySession(sessionId: string): BridgeTask | undefined {
    const r = this.stmts.bySession.get(sessionId);
    return r ? fromRow(r) : undefined;
  }

  put(t: BridgeTask): void {
    this.stmts.put.run({
      dir: t.dir,
      task_id: t.taskId,
      epoch: t.epoch,
      session_id: t.sessionId,
      from_agent: t.fromAgent,
      participants: JSON.stringify(t.participants),
      phase: t.phase,
      note: t.note ?? null,
      file_hash: t.fileHash ?? null,
      updated_ms: t.updatedMs,
    });
  }

  /** Task ids of `dir` being mirrored (at most one per tracked file). */
  openTaskIds(dir: string): string[] {
    return this.stmts.open.all(dir).map((r) => r.task_id);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
