// v0.1 file handoffs as rows of the console's catalog, so the session list
// (/) shows them beside the MACP sessions: filtered (`?mode=file`), sorted,
// searched (task id, description, agents) and paged by the same indexed
// queries. Rows are written incrementally as the console's watcher
// (lib/gateway/file-handoffs.ts) records snapshot changes in the history
// store: each changed file is read back from that store (its summary row)
// and upserted, a removed file's row is deleted, in batched transactions.
// Nothing is kept in memory beyond the names changed since the last flush
// (bounded by the files tracked), and nothing is re-scanned per request.
//
// Row mapping (SessionSummary, see proto/baton/v1/console.proto):
//   session_id  "v0.1:<dir key>/<file name>"   (MACP ids cannot contain ':' or '/')
//   mode        "v0.1.file"                    context_id = task_id
//   state       offered, accepted → OPEN; completed, failed → RESOLVED;
//               rejected → CANCELLED (as the bridge mirrors them in Task mode);
//               invalid → UNSPECIFIED
//   phase       Requested, InProgress, Completed, Failed, Declined ("" invalid)
//   intent      the description; owner / target = from_agent / to_agent
//   waiting on  offered: to_agent, or anyone but from_agent when empty;
//               accepted: to_agent (who completes it), as the inbox does
//   activity    the newest observed change; started = created_at (else first seen)
import { create } from "@bufbuild/protobuf";
import { SessionSummarySchema, type SessionSummary } from "@/lib/gen/baton/v1/console_pb";
import type { FileHandoff } from "@/lib/gen/baton/v1/files_pb";
import { SessionMetadataSchema } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import type { HandoffSummary } from "@/lib/handoff-files";
import { FILE_HANDOFF_MODE } from "@/lib/macp/constants";
import type { GatewayLogger } from "../logger";
import { ANYONE, EXCEPT } from "./sqlite";
import type { CatalogStore, CatalogWrite } from "./store";

export const FILE_ROW_PREFIX = "v0.1:";

/** The catalog id of a handoff file. */
export function fileRowId(dirKey: string, name: string): string {
  return `${FILE_ROW_PREFIX}${dirKey}/${name}`;
}

export function isFileRowId(id: string): boolean {
  return id.startsWith(FILE_ROW_PREFIX);
}

const STATE: Readonly<Record<string, SessionState>> = {
  offered: SessionState.OPEN,
  accepted: SessionState.OPEN,
  completed: SessionState.RESOLVED,
  failed: SessionState.RESOLVED,
  rejected: SessionState.CANCELLED,
};

const PHASE: Readonly<Record<string, string>> = {
  offered: "Requested",
  accepted: "InProgress",
  completed: "Completed",
  failed: "Failed",
  rejected: "Declined",
};

/** Who must act now, as the catalog stores it (see sqlite.ts ANYONE / EXCEPT). */
export function fileNextActors(s: Pick<HandoffSummary, "present" | "valid" | "status" | "fromAgent" | "toAgent">): string[] {
  if (!s.present || !s.valid) return [];
  const to = s.toAgent ?? "";
  const from = s.fromAgent ?? "";
  if (s.status === "offered" || s.status === "accepted") {
    if (to !== "") return [to];
    return from !== "" ? [ANYONE, `${EXCEPT}${from}`] : [ANYONE];
  }
  return [];
}

function isoMs(iso: string | undefined): number {
  if (!iso) return 0;
  const t = Date.parse(iso);
  return Number.isFinite(t) && t > 0 ? t : 0;
}

/**
 * The catalog row of a handoff as the history store knows it now.
 * `handoff` is the proto row the /files list serves (description clipped).
 */
export function fileRowOf(s: HandoffSummary, handoff: FileHandoff): CatalogWrite {
  const valid = s.present && s.valid && s.status !== undefined;
  const status = valid ? (s.status as string) : "";
  const from = s.fromAgent ?? "";
  const to = s.toAgent ?? "";
  const participants = [...new Set([from, to].filter((p) => p !== ""))];
  const description = handoff.description;
  const summary: SessionSummary = create(SessionSummarySchema, {
    metadata: create(SessionMetadataSchema, {
      sessionId: fileRowId(handoff.dirKey, s.name),
      mode: FILE_HANDOFF_MODE,
      state: valid ? (STATE[status] ?? SessionState.UNSPECIFIED) : SessionState.UNSPECIFIED,
      startedAtUnixMs: BigInt(isoMs(s.createdAt) || s.firstSeenMs),
      expiresAtUnixMs: 0n,
      participants,
      initiator: from,
      contextId: s.taskId,
    }),
    phase: valid ? (PHASE[status] ?? "") : "",
    intent: description !== "" ? description : s.name,
    currentOwner: from,
    currentTarget: to,
    // Invalid files say why where a session shows its scope.
    scope: valid ? "" : (s.problem ?? "not a valid v0.1 handoff"),
    lastActivityUnixMs: BigInt(s.lastChangeMs),
    eventCount: BigInt(s.snapshots),
    outcome: status === "completed" ? "positive" : status === "failed" ? "negative" : "",
    fileHandoff: handoff,
  });
  return { summary, folded: 0, final: true, needsRead: false, nextActors: fileNextActors(s) };
}

/** A participant id's display name when it is a console person's. */
export type PeopleNames = (participantId: string) => string | undefined;

/** Name the people among the file rows' from_agent / to_agent (as the accounts say now; not stored). */
export function nameFileParties(rows: readonly SessionSummary[], nameOf: PeopleNames): void {
  for (const r of rows) {
    const f = r.fileHandoff;
    if (!f) continue;
    f.fromName = f.fromAgent !== "" ? (nameOf(f.fromAgent) ?? "") : "";
    f.toName = f.toAgent !== "" ? (nameOf(f.toAgent) ?? "") : "";
  }
}

/** Delete every file row (the console watches no directory any more). Returns the new version. */
export function removeFileRows(store: CatalogStore, chunk = 500): number {
  let version = store.version;
  for (;;) {
    const part = store.fileRows(0, chunk);
    if (part.rows.length === 0) return version;
    version = store.writeFiles(
      [],
      part.rows.map((r) => r.metadata?.sessionId ?? ""),
    );
  }
}

/** What the writer needs of the console's v0.1 handoffs (FileHandoffs). */
export interface FileRowSource {
  /** The store's row of a file, if it has one. */
  find(dir: string, name: string): HandoffSummary | undefined;
  /** The proto row the /files list serves. */
  toProto(s: HandoffSummary): FileHandoff;
  /** The key of a watched directory (undefined: no longer watched). */
  keyOf(dir: string): string | undefined;
  /** Every recorded change (dir, file name); returns an unsubscribe function. */
  onChange(listener: (dir: string, name: string) => void): () => void;
  /** Resolves when the first scan of every directory is recorded. */
  readonly ready: Promise<void>;
}

export interface FileRowWriterOptions {
  store: CatalogStore;
  source: FileRowSource;
  /** After each write that changed the catalog (the list's change notices). */
  written: (version: number) => void;
  /** Changes within this window go in one transaction. Default 50 ms. */
  flushMs?: number;
  /** At most this many files per transaction. Default 500. */
  batch?: number;
  logger?: GatewayLogger;
}

/** Keeps the catalog's file rows in step with the watched directories. */
export class FileRowWriter {
  private readonly pending = new Map<string, { dir: string; name: string }>();
  private readonly flushMs: number;
  private readonly batch: number;
  private readonly unsubscribe: () => void;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  /** Resolves when the rows of the first scan are written and stale rows removed. */
  readonly ready: Promise<void>;

  constructor(private readonly options: FileRowWriterOptions) {
    this.flushMs = options.flushMs ?? 50;
    this.batch = options.batch ?? 500;
    this.unsubscribe = options.source.onChange((dir, name) => this.changed(dir, name));
    this.ready = options.source.ready.then(() => {
      if (this.closed) return;
      this.flush();
      this.reconcile();
    });
  }

  private changed(dir: string, name: string): void {
    if (this.closed || dir === "" || name === "") return;
    this.pending.set(`${dir}\u0000${name}`, { dir, name });
    if (this.pending.size >= this.batch) {
      this.flush();
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.flush();
    }, this.flushMs);
  }

  /** Write every pending change now. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.pending.size > 0 && !this.closed) {
      const items = [...this.pending.entries()].slice(0, this.batch);
      for (const [k] of items) this.pending.delete(k);
      const rows: CatalogWrite[] = [];
      const removed: string[] = [];
      for (const [, { dir, name }] of items) {
        const key = this.options.source.keyOf(dir);
        if (key === undefined) continue;
        const s = this.options.source.find(dir, name);
        if (!s || !s.present) removed.push(fileRowId(key, name));
        else rows.push(fileRowOf(s, this.options.source.toProto(s)));
      }
      this.write(rows, removed);
    }
  }

  private write(rows: CatalogWrite[], removed: string[]): void {
    const before = this.options.store.version;
    let version: number;
    try {
      version = this.options.store.writeFiles(rows, removed);
    } catch (err) {
      this.options.logger?.error({ err }, "could not write v0.1 file rows to the catalog");
      return;
    }
    if (version !== before) this.options.written(version);
  }

  /**
   * Delete rows whose file is gone or whose directory is no longer watched
   * (changes made while the console was stopped), a chunk at a time.
   */
  reconcile(): void {
    let after = 0;
    for (;;) {
      const part = this.options.store.fileRows(after, this.batch);
      const stale: string[] = [];
      for (const row of part.rows) {
        const f = row.fileHandoff;
        const id = row.metadata?.sessionId ?? "";
        if (!f) {
          stale.push(id);
          continue;
        }
        const key = this.options.source.keyOf(f.dir);
        const s = key === f.dirKey ? this.options.source.find(f.dir, f.name) : undefined;
        if (!s || !s.present) stale.push(id);
      }
      if (stale.length > 0) this.write([], stale);
      if (part.rows.length < this.batch) return;
      after = part.last;
    }
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.unsubscribe();
  }
}
