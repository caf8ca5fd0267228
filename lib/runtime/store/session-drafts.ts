// Write side of the session index: what a session's index row will be once
// the batch being assembled commits, validated against the committed index
// plus everything queued, so a store never writes a log it would refuse to
// load (used by both stores' writers).
import { InvalidRecordError } from "./common";
import type { LogRecord, SessionStatus, SessionSummary } from "./types";

/** What the writer needs to know about a session's committed index row. */
export interface CommittedSession {
  firstPosition: number;
  /** The session's newest committed seq (from the log, not as of its last summary). */
  lastSeq: number;
  status: SessionStatus | null;
  activityMs: number;
  metadata: Uint8Array | null;
}

/** Read access the writer needs to validate a batch against what is committed. */
export interface IndexLookup {
  /** The committed index row, or undefined for a session with no records. */
  session(sessionId: string): CommittedSession | undefined;
  hasMessage(sessionId: string, messageId: string): boolean;
}

/**
 * The index row a session will have once the batch being assembled commits.
 * `firstPosition` is 0 for a session whose first record is in this batch: the
 * backend fills it in with that record's position as it inserts it.
 * `committed` is the row as committed before this batch (undefined: a new
 * session), so the backend writes only what changed.
 */
export interface SessionDraft {
  sessionId: string;
  firstPosition: number;
  lastSeq: number;
  status: SessionStatus | null;
  activityMs: number;
  metadata: Uint8Array | null;
  committed?: CommittedSession;
  /** A summary came with this batch (or the session is new): the backend writes the row. */
  summarised?: boolean;
}

/** Committed index rows kept by the writer for the sessions it wrote most recently. */
const RECENT_ROWS = 1024;

/**
 * Validates writes against the committed index plus everything queued but not
 * yet committed, so that a store never writes a log it would refuse to load
 * (a gap or a repeat in a session's seq, an annotation or summary for a
 * session that was never started, a message id accepted twice), and keeps the
 * drafts of the index rows the batch will write. Only sessions touched by the
 * batch being assembled are held; committed state is looked up on demand, so
 * memory does not grow with the number of sessions ever written.
 */
export class SessionDrafts {
  private drafts = new Map<string, SessionDraft>();
  private messages = new Map<string, Set<string>>();
  /**
   * Rows as committed, for the sessions written most recently (a bounded LRU):
   * the store is written only through this writer, so they stay exact, and a
   * session receiving envelopes is validated without reading its row back.
   */
  private readonly recent = new Map<string, CommittedSession>();

  constructor(private readonly committed: IndexLookup) {}

  private committedRow(sessionId: string): CommittedSession | undefined {
    const hit = this.recent.get(sessionId);
    if (hit) {
      this.recent.delete(sessionId);
      this.recent.set(sessionId, hit);
      return hit;
    }
    const row = this.committed.session(sessionId);
    if (row) this.remember(sessionId, row);
    return row;
  }

  private remember(sessionId: string, row: CommittedSession): void {
    this.recent.delete(sessionId);
    this.recent.set(sessionId, row);
    if (this.recent.size > RECENT_ROWS) this.recent.delete(this.recent.keys().next().value as string);
  }

  /** The draft of `sessionId` as of the queued writes, or undefined if unknown. */
  private current(sessionId: string, local: Map<string, SessionDraft>): SessionDraft | undefined {
    const queued = local.get(sessionId) ?? this.drafts.get(sessionId);
    if (queued) return queued;
    const row = this.committedRow(sessionId);
    return row ? { sessionId, ...row, committed: row } : undefined;
  }

  private messageQueued(sessionId: string, messageId: string, local: Map<string, Set<string>>): boolean {
    return Boolean(local.get(sessionId)?.has(messageId) || this.messages.get(sessionId)?.has(messageId));
  }

  /**
   * Check one write call (records, then summaries, then message ids of
   * already-written records) and reserve its effects; all or nothing.
   */
  reserve(
    records: readonly LogRecord[],
    summaries: readonly SessionSummary[],
    extraMessages: readonly (readonly [string, string])[] = [],
  ): void {
    const local = new Map<string, SessionDraft>();
    const localMessages = new Map<string, Set<string>>();
    const addMessage = (sessionId: string, messageId: string, where: string, existed: boolean) => {
      if (this.messageQueued(sessionId, messageId, localMessages) || (existed && this.committed.hasMessage(sessionId, messageId))) {
        throw new InvalidRecordError(`${where}: session ${sessionId} already accepted message id ${JSON.stringify(messageId)}`);
      }
      let set = localMessages.get(sessionId);
      if (!set) localMessages.set(sessionId, (set = new Set()));
      set.add(messageId);
    };
    records.forEach((r, i) => {
      const where = `record ${i}`;
      const prior = this.current(r.sessionId, local);
      if (r.kind !== "envelope") {
        if (!prior) throw new InvalidRecordError(`${where}: annotation "${r.kind}" for session ${r.sessionId}, which has no records`);
        if (!local.has(r.sessionId)) local.set(r.sessionId, { ...prior });
        return;
      }
      const prev = prior?.lastSeq ?? 0;
      if (r.seq !== prev + 1) {
        throw new InvalidRecordError(
          `${where}: session ${r.sessionId} expects seq ${prev + 1} next, got ${r.seq}` +
            (r.seq <= prev ? " (already written or queued)" : " (would leave a gap)"),
        );
      }
      const draft: SessionDraft = prior
        ? { ...prior, lastSeq: r.seq }
        : {
            sessionId: r.sessionId,
            firstPosition: 0,
            lastSeq: r.seq,
            status: null,
            activityMs: r.recvMs,
            metadata: null,
            summarised: true,
          };
      local.set(r.sessionId, draft);
      if (r.messageId !== undefined && r.messageId !== "") addMessage(r.sessionId, r.messageId, where, prior !== undefined);
    });
    summaries.forEach((sum, i) => {
      const prior = this.current(sum.sessionId, local);
      if (!prior) throw new InvalidRecordError(`summary ${i}: session ${sum.sessionId} has no records`);
      local.set(sum.sessionId, { ...prior, status: sum.status, activityMs: sum.activityMs, metadata: sum.metadata, summarised: true });
    });
    extraMessages.forEach(([sessionId, messageId], i) => {
      const prior = this.current(sessionId, local);
      if (!prior) throw new InvalidRecordError(`message id ${i}: session ${sessionId} has no records`);
      if (!local.has(sessionId)) local.set(sessionId, { ...prior });
      addMessage(sessionId, messageId, `message id ${i}`, true);
    });
    for (const [sessionId, draft] of local) this.drafts.set(sessionId, draft);
    for (const [sessionId, ids] of localMessages) {
      let set = this.messages.get(sessionId);
      if (!set) this.messages.set(sessionId, (set = new Set()));
      for (const id of ids) set.add(id);
    }
  }

  /** The index rows the batch will write, in the order sessions were first touched. */
  pending(): SessionDraft[] {
    return [...this.drafts.values()];
  }

  /**
   * The batch was committed (the backend filled in the new sessions' first
   * positions) or rolled back (nothing of it was stored).
   */
  reset(committed: boolean): void {
    if (committed) {
      for (const d of this.drafts.values()) {
        const { sessionId, committed: _before, summarised: _written, ...row } = d;
        void _before;
        void _written;
        this.remember(sessionId, row);
      }
    }
    this.drafts = new Map();
    this.messages = new Map();
  }
}
