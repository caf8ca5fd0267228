// The runtime kernel: the single place where envelopes are admitted, in the
// reference order of PROTOCOL.md §2.4, §3.1 and §3.3, one at a time.
//
// Admission is synchronous against in-memory state (so the next message sees
// the effect of the previous one), then the record is handed to the store's
// group commit, together with the session's new summary for the store's
// session index when its state changes; the Ack, the broadcast to
// subscribers and the lifecycle event all wait until the record is on disk. If a commit fails, nothing of
// that batch was stored: the kernel rebuilds its state from the store and
// answers INTERNAL_ERROR, so memory never runs ahead of disk.
//
// Only sessions in use are resident: OPEN and SUSPENDED ones (and a session
// whose terminal record is still being written). Once a session's terminal
// record (Commitment, cancel, expiry) is durable it leaves memory; from then
// on it is answered from the store's session index (GetSession, ListSessions,
// WatchSessions, read rights, SESSION_NOT_OPEN), its message-id index
// (duplicates of late resends) and its log (history, read page by page), with
// a small cache of recently closed sessions in front. A restart rebuilds only
// the resident sessions, from the session index and their own records.
//
// List rows: every resident session also keeps a lean fold of its envelopes
// (the shared projection of lib/macp/projections/summary.ts, context bytes
// dropped), and each write of a session carries the session's list row as of
// after it (baton.v1.SessionSummary plus who acts next), stored in the same
// transaction as the records and numbered by the store's change counter.
// Once durable, the rows go to list-row listeners (the list-row feed,
// catalog-service.ts). A closed session's row is final; its fold leaves
// memory with it. A store migrated from schema v2 gets the rows of its
// sessions by a background backfill after start.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  CORE_TYPES,
  DEFAULT_POLICY_ID,
  MACP_VERSION,
  MAX_PARTICIPANTS,
  MAX_TTL_MS,
  MODE_VERSION,
  RUNTIME_SENDER,
} from "@/lib/macp/constants";
import { isValidSessionId } from "@/lib/macp/ids";
import { leanEnvelope, nextActors, SessionFold, toSummary } from "@/lib/macp/projections/summary";
import {
  AckSchema,
  EnvelopeSchema,
  MACPErrorSchema,
  SessionState,
  type Ack,
  type Envelope,
} from "@/lib/gen/macp/v1/envelope_pb";
import {
  CommitmentPayloadSchema,
  ParticipantActivitySchema,
  SessionCancelPayloadSchema,
  SessionLifecycleEventSchema,
  SessionLifecycleEvent_EventType as EventType,
  SessionMetadataSchema,
  SessionResumePayloadSchema,
  SessionStartPayloadSchema,
  SessionSuspendPayloadSchema,
  SignalPayloadSchema,
  type SessionLifecycleEvent,
  type SessionMetadata,
} from "@/lib/gen/macp/v1/core_pb";
import { PolicyDescriptorSchema, type PolicyDescriptor } from "@/lib/gen/macp/v1/policy_pb";
import type { Identity } from "./auth";
import type { RuntimeConfig } from "./config";
import { MacpRejection, reject } from "./errors";
import { MODES, type AnyMode } from "./modes";
import type { SessionContext } from "./modes/types";
import { encodeListSummary } from "./list-row-codec";
import { bindPolicy, DEFAULT_POLICY, hasCommitmentAuthority, validateDescriptor, type BoundPolicy } from "./policy";
import { closedBytes, ClosedCache, closedFromEntry, decodeMetadata, isTerminal, lengthDelimitedHead, STATUS_OF, type ClosedSession } from "./kernel-closed";
import { SlidingWindowLimiter } from "./rate-limit";
import type {
  ListRow,
  LogRecord,
  RecordKind,
  SessionIndexEntry,
  SessionSummary,
  Store,
  StoredListRow,
  StoredRecord,
  StoreReadStats,
} from "./store/types";
import { isResidentStatus, StoreCorruptionError } from "./store/types";

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const MAX_ID_CHARS = 256;
const MAX_TYPE_CHARS = 128;

/** One accepted envelope as delivered to subscribers. */
export interface Delivered {
  sequence: number;
  envelope: Envelope;
}

type SessionListener = (d: Delivered) => void;
type LifecycleListener = (ev: SessionLifecycleEvent) => void;
type SignalListener = (env: Envelope) => void;
type PolicyListener = (all: PolicyDescriptor[]) => void;
/** Durable list rows, in change order (one call per commit that wrote any). */
export type ListRowListener = (rows: readonly StoredListRow[]) => void;

interface Activity {
  count: number;
  lastMs: number;
}

interface Session {
  readonly id: string;
  readonly mode: string;
  readonly handler: AnyMode;
  modeState: unknown;
  state: SessionState;
  readonly initiator: string;
  readonly participants: readonly string[];
  readonly ctx: SessionContext;
  readonly modeVersion: string;
  readonly configurationVersion: string;
  readonly policy: BoundPolicy;
  readonly contextId: string;
  readonly extensionKeys: readonly string[];
  readonly startedAtMs: number;
  deadlineMs: number;
  suspendedAtMs: number;
  suspendedTotalMs: number;
  readonly dedup: Set<string>;
  /** Sequence assigned to the newest admitted envelope (durable or not). */
  seq: number;
  /** Sequence of the newest envelope known to be on disk and broadcast. */
  durableSeq: number;
  readonly activity: Map<string, Activity>;
  /** Server time of the session's newest record. */
  touchedMs: number;
  /** Settles when the newest write for this session has settled. */
  tail: Promise<unknown>;
  /** The session's envelopes folded into its list row (context bytes dropped). */
  readonly fold: SessionFold;
}

/**
 * Records and bytes per page when history is read from storage (a page always
 * holds at least one envelope, so with 1 MB envelopes a page is one of them).
 */
export const HISTORY_PAGE_RECORDS = 128;
export const HISTORY_PAGE_BYTES = 256 * 1024;
/** Index rows per page when sessions are listed or rebuilt from storage. */
const INDEX_PAGE_ROWS = 256;
/** Sessions per page (and per commit) of the list-row backfill. */
const BACKFILL_PAGE_SESSIONS = 64;
/** The list-row backfill logs its progress this often. */
const BACKFILL_PROGRESS_MS = 5_000;

/** What the kernel read from storage when it opened. */
export interface LoadReport {
  /** Sessions rebuilt in memory (OPEN and SUSPENDED). */
  resident: number;
  open: number;
  /** Index rows read (resident ones only, after the first start on a migrated store). */
  indexRows: number;
  /** Log records replayed. */
  records: number;
  /** Sessions whose index summary was written from their log (first start after the schema-v2 migration). */
  indexed: number;
  policies: number;
  ms: number;
}

const toMs = (v: bigint): number => Number(v);
const now = (): number => Date.now();

function rejection(err: unknown): MacpRejection {
  if (err instanceof MacpRejection) return err;
  return new MacpRejection("INTERNAL_ERROR", `internal error: ${(err as Error)?.message ?? String(err)}`);
}

export interface KernelOptions {
  store: Store;
  config: Pick<
    RuntimeConfig,
    "maxPayloadBytes" | "sessionStartsPerMinute" | "messagesPerMinute" | "expirySweepMs" | "maxSuspendMs"
  > &
    Partial<Pick<RuntimeConfig, "closedSessionCache" | "closedSessionCacheBytes">>;
  logger: Logger;
  /** Injectable clock for tests. */
  clock?: () => number;
}

export class Kernel {
  /** Resident sessions: OPEN, SUSPENDED, and terminal ones whose last record is not yet durable. */
  private sessions = new Map<string, Session>();
  private open = new Set<Session>();
  private readonly closedCache: ClosedCache;
  private loaded: LoadReport | null = null;
  private readonly historyReads = { pages: 0, records: 0 };
  private policies = new Map<string, PolicyDescriptor>();
  private readonly sessionListeners = new Map<string, Set<SessionListener>>();
  private readonly lifecycleListeners = new Set<LifecycleListener>();
  private readonly signalListeners = new Set<SignalListener>();
  private readonly policyListeners = new Set<PolicyListener>();
  private readonly listRowListeners = new Set<ListRowListener>();
  private readonly stopListRows: () => void;
  /** The list-row backfill of a store migrated from schema v2, while it runs. */
  private backfill: Promise<void> | null = null;
  private readonly startLimiter: SlidingWindowLimiter;
  private readonly messageLimiter: SlidingWindowLimiter;
  private readonly store: Store;
  private readonly log: Logger;
  private readonly clock: () => number;
  private readonly cfg: KernelOptions["config"];
  private sweepTimer: NodeJS.Timeout | null = null;
  /** Bumped on every rebuild after a storage failure. */
  private generation = 0;
  private closed = false;

  private constructor(opts: KernelOptions) {
    this.store = opts.store;
    this.log = opts.logger;
    this.clock = opts.clock ?? now;
    this.cfg = opts.config;
    this.startLimiter = new SlidingWindowLimiter(opts.config.sessionStartsPerMinute);
    this.messageLimiter = new SlidingWindowLimiter(opts.config.messagesPerMinute);
    this.closedCache = new ClosedCache(opts.config.closedSessionCache ?? 1024, opts.config.closedSessionCacheBytes ?? 16_777_216);
    this.stopListRows = this.store.onListRows((rows) => {
      for (const l of this.listRowListeners) {
        try {
          l(rows);
        } catch (err) {
          this.log.error({ err }, "list-row listener failed");
        }
      }
    });
  }

  /**
   * Open a kernel over a store: rebuild the OPEN and SUSPENDED sessions from
   * the store's session index and their own records. Closed sessions stay on
   * disk. On the first start after the schema-v2 migration every session is
   * still unsummarised: each is replayed once, page by page, and its summary
   * and message ids are written to the index.
   */
  static async open(opts: KernelOptions): Promise<Kernel> {
    const k = new Kernel(opts);
    const report = await k.load();
    opts.logger.info(report, "runtime state rebuilt from storage (open and suspended sessions)");
    k.sweepTimer = setInterval(() => k.sweep(), opts.config.expirySweepMs);
    k.sweepTimer.unref();
    if (!opts.store.listRowsBackfilled()) {
      k.backfill = k.backfillListRows().catch((err: unknown) => {
        if (!k.closed) opts.logger.error({ err }, "list-row backfill failed; it resumes at the next start");
      });
    }
    return k;
  }

  /** Settles when the list-row backfill (if one runs) has ended: for tests and tools. */
  async listRowsBackfilled(): Promise<void> {
    await this.backfill;
  }

  /** What the kernel read from storage when it opened. */
  get loadReport(): LoadReport | null {
    return this.loaded;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    await Promise.allSettled([...this.sessions.values()].map((s) => s.tail));
    await this.backfill;
    this.stopListRows();
  }

  // -------------------------------------------------------------- list rows

  /** The session's list row as of its newest admitted record. */
  private listRow(s: Session): ListRow {
    const meta = this.metadata(s);
    // Read and dropped right here (toSummary and nextActors copy what they keep), so the fold's batch goes on.
    const view = s.fold.peek();
    // Agents' timestamps are clamped to the server time of the newest record: the row follows from the log.
    const c = s.policy.rules.commitment;
    const committers = c.authority === "designated_role" ? c.designatedRoles : undefined;
    const summary = toSummary(meta, view, s.fold.count, s.touchedMs, committers);
    return { sessionId: s.id, summary: encodeListSummary(summary), nextActors: nextActors(meta, view, committers), final: isTerminal(s.state) };
  }

  /** A closed session's list row, folded from its stored envelopes (a page at a time, yielding in between). */
  private async storedListRow(entry: SessionIndexEntry): Promise<ListRow> {
    const meta = decodeMetadata(entry);
    const fold = new SessionFold(entry.sessionId, meta.mode);
    for (let after = 0; ; ) {
      const page = this.store.readSession(entry.sessionId, after, { maxRecords: HISTORY_PAGE_RECORDS, maxBytes: HISTORY_PAGE_BYTES });
      if (page.length === 0) break;
      for (const r of page) fold.add(leanEnvelope(fromBinary(EnvelopeSchema, r.envelope)));
      after = (page[page.length - 1] as StoredRecord).seq;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.closed) break;
    }
    const view = fold.view;
    const summary = toSummary(meta, view, fold.count, entry.activityMs);
    return { sessionId: entry.sessionId, summary: encodeListSummary(summary), nextActors: nextActors(meta, view), final: isTerminal(meta.state) };
  }

  /**
   * A store migrated from schema v2 has sessions without list rows: fold
   * them a page of sessions at a time (resident ones from memory, closed
   * ones from their envelopes), each page one commit, yielding to the event
   * loop in between, so the runtime serves meanwhile. A session the kernel
   * writes in the meantime keeps the kernel's row. Interrupted, it resumes
   * at the next start.
   */
  private async backfillListRows(): Promise<void> {
    const t0 = performance.now();
    let lastLog = t0;
    let done = 0;
    this.log.info({}, "list rows: folding the rows of sessions stored before schema v3, in the background");
    for (let after = 0; ; ) {
      if (this.closed) return;
      const page = this.store.sessionsWithoutListRow(after, BACKFILL_PAGE_SESSIONS);
      if (page.length === 0) break;
      const rows: ListRow[] = [];
      for (const entry of page) {
        const s = this.sessions.get(entry.sessionId);
        if (s) rows.push(this.listRow(s));
        else if (entry.metadata !== null && !isResidentStatus(entry.status)) rows.push(await this.storedListRow(entry));
        if (this.closed) return;
      }
      after = (page[page.length - 1] as SessionIndexEntry).firstPosition;
      await this.store.backfillListRows(rows);
      done += rows.length;
      if (performance.now() - lastLog >= BACKFILL_PROGRESS_MS) {
        lastLog = performance.now();
        this.log.info({ rows: done, ms: Math.round(lastLog - t0) }, `list rows: ${done} sessions folded so far`);
      }
    }
    if (this.closed) return;
    await this.store.backfillListRows([], true);
    this.log.info({ rows: done, ms: Math.round(performance.now() - t0) }, `list rows: backfill done (${done} sessions folded)`);
  }

  /**
   * Durable list rows from now on, in change order (the live half of the
   * list-row feed; the stored half is readListRows).
   */
  watchListRows(listener: ListRowListener): () => void {
    this.listRowListeners.add(listener);
    return () => void this.listRowListeners.delete(listener);
  }

  /** Stored list rows with change > afterChange, in change order (at most `limit`). */
  readListRows(afterChange: number, limit: number): StoredListRow[] {
    return this.store.readListRows(afterChange, limit);
  }

  /** The newest change in the store's list-row feed. */
  lastListChange(): number {
    return this.store.lastListChange();
  }

  /** Identity of the store the list-row changes belong to. */
  get storeId(): string {
    return this.store.storeId;
  }

  // ---------------------------------------------------------------- rebuild

  private resetState(): void {
    this.sessions = new Map();
    this.open = new Set();
    this.closedCache.clear();
    this.policies = new Map();
    for (const p of this.store.loadPolicies()) {
      this.policies.set(p.policyId, fromBinary(PolicyDescriptorSchema, p.descriptor));
    }
  }

  private keepResident(s: Session): void {
    this.sessions.set(s.id, s);
    if (s.state === SessionState.OPEN) this.open.add(s);
  }

  /** Initial load, with the one-time summary backfill of a migrated store. */
  private async load(): Promise<LoadReport> {
    const t0 = performance.now();
    const before = this.store.readStats();
    this.resetState();
    let indexed = 0;
    for (let after = 0; ; ) {
      const page = this.store.listSessions({ afterPosition: after, limit: INDEX_PAGE_ROWS, residentOnly: true });
      if (page.length === 0) break;
      const writes: { summary: SessionSummary; messageIds: string[] }[] = [];
      for (const entry of page) {
        const s = this.replaySession(entry);
        const status = STATUS_OF[s.state] ?? "open";
        if (entry.status === null) {
          writes.push({ summary: this.summary(s), messageIds: [...s.dedup] });
        } else if (entry.status !== status) {
          this.log.error(
            { sessionId: s.id, index: entry.status, log: status },
            "session index disagreed with the log; repairing the index from the log",
          );
          writes.push({ summary: this.summary(s), messageIds: [] });
        }
        if (!isTerminal(s.state)) this.keepResident(s);
      }
      if (writes.length > 0) {
        await this.store.indexSessions(writes);
        indexed += writes.length;
      }
      after = (page[page.length - 1] as SessionIndexEntry).firstPosition;
    }
    const reads = this.store.readStats();
    this.loaded = {
      resident: this.sessions.size,
      open: this.open.size,
      indexRows: reads.indexRows - before.indexRows,
      records: reads.records - before.records,
      indexed,
      policies: this.policies.size,
      ms: Math.round(performance.now() - t0),
    };
    return this.loaded;
  }

  /** After a storage failure: replace in-memory state with what the store holds. */
  private reloadResident(): void {
    this.resetState();
    for (let after = 0; ; ) {
      const page = this.store.listSessions({ afterPosition: after, limit: INDEX_PAGE_ROWS, residentOnly: true });
      if (page.length === 0) break;
      for (const entry of page) {
        const s = this.replaySession(entry);
        if (!isTerminal(s.state)) this.keepResident(s);
      }
      after = (page[page.length - 1] as SessionIndexEntry).firstPosition;
    }
  }

  /** Rebuild one session from its records (read lazily, page by page). */
  private replaySession(entry: SessionIndexEntry): Session {
    let s: Session | undefined;
    for (const r of this.store.sessionRecords(entry.sessionId)) {
      try {
        s = this.replay(s, r);
      } catch (e) {
        if (e instanceof StoreCorruptionError) throw e;
        throw new StoreCorruptionError(
          `record at position ${r.position} (session ${r.sessionId}) cannot be replayed: ${(e as Error).message}`,
          r.position,
        );
      }
    }
    if (!s) throw new StoreCorruptionError(`session ${entry.sessionId} is in the session index but has no records`);
    // The row's last seq is as of the session's last change of state; the log may have more since.
    if (entry.lastSeq > s.seq || (!isResidentStatus(entry.status) && entry.lastSeq !== s.seq)) {
      throw new StoreCorruptionError(
        `session ${entry.sessionId}: the session index says its last seq is ${entry.lastSeq}, its log ends at ${s.seq}`,
      );
    }
    return s;
  }

  private replay(s: Session | undefined, r: StoredRecord): Session {
    const env = fromBinary(EnvelopeSchema, r.envelope);
    if (!s) {
      if (r.kind !== "envelope" || env.messageType !== CORE_TYPES.SessionStart) throw new Error("the first record is not a SessionStart");
      if (r.seq !== 1) throw new Error(`SessionStart has sequence ${r.seq}`);
      const policy = r.boundPolicy
        ? bindPolicy(fromBinary(PolicyDescriptorSchema, r.boundPolicy), env.mode)
        : DEFAULT_POLICY;
      return this.createSession(env, policy, r.recvMs);
    }
    if (r.kind === "envelope" && env.messageType === CORE_TYPES.SessionStart) throw new Error("duplicate SessionStart");
    s.touchedMs = Math.max(s.touchedMs, r.recvMs);
    switch (r.kind) {
      case "envelope": {
        if (s.state !== SessionState.OPEN) throw new Error(`envelope recorded while session was ${SessionState[s.state]}`);
        if (r.seq !== s.seq + 1) throw new Error(`sequence ${r.seq} follows ${s.seq}`);
        this.applyInSession(s, env, r.recvMs);
        s.durableSeq = s.seq;
        return s;
      }
      case "cancel":
        s.state = SessionState.CANCELLED;
        return s;
      case "expire":
        s.state = SessionState.EXPIRED;
        return s;
      case "suspend":
        s.suspendedAtMs = r.recvMs;
        s.state = SessionState.SUSPENDED;
        return s;
      case "resume": {
        const p = fromBinary(SessionResumePayloadSchema, env.payload);
        const banked = toMs(p.bankedMs);
        s.suspendedTotalMs += banked;
        s.deadlineMs += banked;
        s.suspendedAtMs = 0;
        s.state = SessionState.OPEN;
        return s;
      }
    }
  }

  // --------------------------------------------------------------- sessions

  private createSession(env: Envelope, policy: BoundPolicy, recvMs: number): Session {
    const p = fromBinary(SessionStartPayloadSchema, env.payload);
    const handler = MODES.get(env.mode);
    if (!handler) throw new MacpRejection("MODE_NOT_SUPPORTED", `mode ${env.mode} is not supported`);
    const participantSet = new Set(p.participants);
    const ts = toMs(env.timestampUnixMs);
    const base = ts > 0 ? ts : recvMs;
    const fold = new SessionFold(env.sessionId, env.mode);
    fold.add(leanEnvelope(env));
    return {
      id: env.sessionId,
      mode: env.mode,
      handler,
      modeState: handler.initialState(),
      state: SessionState.OPEN,
      initiator: env.sender,
      participants: [...p.participants],
      ctx: { initiator: env.sender, participants: participantSet, policy },
      modeVersion: p.modeVersion,
      configurationVersion: p.configurationVersion,
      policy,
      contextId: p.contextId,
      extensionKeys: Object.keys(p.extensions),
      startedAtMs: recvMs,
      deadlineMs: base + toMs(p.ttlMs),
      suspendedAtMs: 0,
      suspendedTotalMs: 0,
      dedup: new Set([env.messageId]),
      seq: 1,
      durableSeq: 1,
      activity: new Map(),
      touchedMs: recvMs,
      tail: Promise.resolve(),
      fold,
    };
  }

  private setState(s: Session, state: SessionState): void {
    s.state = state;
    if (state === SessionState.OPEN) this.open.add(s);
    else this.open.delete(s);
  }

  /** The session's row in the store's session index, as of now. */
  private summary(s: Session): SessionSummary {
    return {
      sessionId: s.id,
      status: STATUS_OF[s.state] ?? "open",
      activityMs: s.touchedMs,
      metadata: toBinary(SessionMetadataSchema, this.metadata(s)),
    };
  }

  metadata(s: Session): SessionMetadata {
    return create(SessionMetadataSchema, {
      sessionId: s.id,
      mode: s.mode,
      state: s.state,
      startedAtUnixMs: BigInt(s.startedAtMs),
      expiresAtUnixMs: BigInt(s.deadlineMs),
      modeVersion: s.modeVersion,
      configurationVersion: s.configurationVersion,
      policyVersion: s.policy.descriptor.policyId,
      participants: [...s.participants],
      participantActivity: [...s.activity].map(([id, a]) =>
        create(ParticipantActivitySchema, {
          participantId: id,
          lastMessageAtUnixMs: BigInt(a.lastMs),
          messageCount: a.count,
        }),
      ),
      initiator: s.initiator,
      contextId: s.contextId,
      extensionKeys: [...s.extensionKeys],
    });
  }

  // ------------------------------------------------------------- admission

  /** Submit one envelope (the Send RPC). Never throws: the verdict is in the Ack. */
  async send(identity: Identity | null, input: Envelope): Promise<Ack> {
    const env = create(EnvelopeSchema, input);
    try {
      return await this.admit(identity, env);
    } catch (e) {
      const r = rejection(e);
      if (r.code === "INTERNAL_ERROR") this.log.error({ err: e, sessionId: env.sessionId }, "internal error during admission");
      return this.ack(env, false, false, SessionState.UNSPECIFIED, r);
    }
  }

  private ack(env: Envelope, ok: boolean, duplicate: boolean, state: SessionState, err?: MacpRejection): Ack {
    return create(AckSchema, {
      ok,
      duplicate,
      messageId: env.messageId,
      sessionId: env.sessionId,
      acceptedAtUnixMs: BigInt(this.clock()),
      sessionState: state,
      error: err
        ? create(MACPErrorSchema, {
            code: err.code,
            message: err.message,
            sessionId: env.sessionId,
            messageId: env.messageId,
            details: err.details ? new TextEncoder().encode(JSON.stringify(err.details)) : new Uint8Array(),
          })
        : undefined,
    });
  }

  /** Shape checks of §2.4, which run before authentication. */
  checkShape(env: Envelope): void {
    if (env.macpVersion !== MACP_VERSION) reject("UNSUPPORTED_PROTOCOL_VERSION", `macp_version must be "${MACP_VERSION}", got "${env.macpVersion}"`);
    if (env.messageType === "" || env.messageId === "") reject("INVALID_ENVELOPE", "message_type and message_id must not be empty");
    if (env.messageId.length > MAX_ID_CHARS) reject("INVALID_ENVELOPE", `message_id is longer than ${MAX_ID_CHARS} characters`);
    if (env.sessionId.length > MAX_ID_CHARS) reject("INVALID_ENVELOPE", `session_id is longer than ${MAX_ID_CHARS} characters`);
    if (env.messageType.length > MAX_TYPE_CHARS || env.mode.length > MAX_ID_CHARS) reject("INVALID_ENVELOPE", "message_type or mode is too long");
    const blankMode = env.mode.trim() === "";
    if (env.messageType === CORE_TYPES.Signal) {
      if (env.sessionId !== "" || !blankMode) reject("INVALID_ENVELOPE", "a Signal must have an empty session_id and mode");
    } else if (env.messageType === CORE_TYPES.Progress && env.sessionId === "") {
      if (!blankMode) reject("INVALID_ENVELOPE", "an ambient Progress must have an empty mode");
    } else if (env.sessionId === "" || blankMode) {
      reject("INVALID_ENVELOPE", "session_id and mode must not be empty");
    }
    if (env.payload.length > this.cfg.maxPayloadBytes) {
      reject("PAYLOAD_TOO_LARGE", `payload is ${env.payload.length} bytes; the limit is ${this.cfg.maxPayloadBytes}`);
    }
  }

  /** Authentication, sender binding, identity flags and rate limits (§9). */
  checkCaller(identity: Identity | null, env: Envelope, at: number): void {
    if (!identity) reject("UNAUTHENTICATED", "no valid credentials: send Authorization: Bearer <token>");
    const id = identity as Identity;
    if (env.sender !== "" && env.sender !== id.sender) {
      reject("UNAUTHENTICATED", `sender "${env.sender}" does not match the authenticated identity "${id.sender}"`);
    }
    env.sender = id.sender;
    if (id.isObserver) reject("FORBIDDEN", `${id.sender} is an observer and may not send`);
    if (id.allowedModes.length > 0 && !id.allowedModes.includes(env.mode)) {
      reject("FORBIDDEN", `${id.sender} may not use mode "${env.mode}"`);
    }
    const start = env.messageType === CORE_TYPES.SessionStart;
    if (start && !id.canStartSessions) reject("FORBIDDEN", `${id.sender} may not start sessions`);
    const limiter = start ? this.startLimiter : this.messageLimiter;
    if (!limiter.tryAcquire(id.sender, at)) reject("RATE_LIMITED", `rate limit exceeded for ${id.sender}`);
  }

  private async admit(identity: Identity | null, env: Envelope): Promise<Ack> {
    if (this.closed) reject("INTERNAL_ERROR", "runtime is shutting down");
    this.checkShape(env);
    const at = this.clock();
    this.checkCaller(identity, env, at);
    if (env.messageType === CORE_TYPES.Signal || (env.messageType === CORE_TYPES.Progress && env.sessionId === "")) {
      if (env.messageType === CORE_TYPES.Signal && env.payload.length > 0) {
        let sig;
        try {
          sig = fromBinary(SignalPayloadSchema, env.payload);
        } catch {
          reject("INVALID_ENVELOPE", "payload is not a valid SignalPayload");
        }
        if (sig && sig.signalType.trim() === "") reject("INVALID_ENVELOPE", "signal_type must not be blank");
      }
      for (const l of this.signalListeners) l(env);
      return this.ack(env, true, false, SessionState.OPEN);
    }
    if (env.messageType === CORE_TYPES.Progress) {
      for (const l of this.signalListeners) l(env);
      return this.ack(env, true, false, SessionState.OPEN);
    }
    if (env.messageType === CORE_TYPES.SessionStart) return this.admitStart(identity as Identity, env, at);
    return this.admitInSession(env, at);
  }

  private async admitStart(identity: Identity, env: Envelope, at: number): Promise<Ack> {
    if (!isValidSessionId(env.sessionId)) {
      reject("INVALID_SESSION_ID", "session_id must be a lowercase UUID v4/v7 or at least 22 characters of [A-Za-z0-9_-]");
    }
    const handler = MODES.get(env.mode);
    if (!handler) reject("MODE_NOT_SUPPORTED", `mode "${env.mode}" is not supported by this runtime (supported: ${[...MODES.keys()].join(", ")})`);
    if (env.payload.length === 0) reject("INVALID_ENVELOPE", "SessionStart payload must not be empty");
    let p;
    try {
      p = fromBinary(SessionStartPayloadSchema, env.payload);
    } catch (e) {
      return reject("INVALID_ENVELOPE", `payload is not a valid SessionStartPayload: ${(e as Error).message}`);
    }
    const ttl = toMs(p.ttlMs);
    if (!(ttl >= 1 && ttl <= MAX_TTL_MS)) reject("INVALID_ENVELOPE", `ttl_ms must be between 1 and ${MAX_TTL_MS}, got ${p.ttlMs}`);
    if (p.modeVersion.trim() === "") reject("INVALID_ENVELOPE", "mode_version must not be blank");
    if (p.configurationVersion.trim() === "") reject("INVALID_ENVELOPE", "configuration_version must not be blank");
    if (p.participants.length === 0) reject("INVALID_ENVELOPE", "participants must not be empty");
    if (p.participants.length > MAX_PARTICIPANTS) reject("INVALID_ENVELOPE", `at most ${MAX_PARTICIPANTS} participants`);
    const trimmed = new Set<string>();
    for (const part of p.participants) {
      const t = part.trim();
      if (t === "") reject("INVALID_ENVELOPE", "participants must not be blank");
      if (part.length > MAX_ID_CHARS) reject("INVALID_ENVELOPE", `participant ids are limited to ${MAX_ID_CHARS} characters`);
      if (trimmed.has(t)) reject("INVALID_ENVELOPE", `participant "${t}" is listed twice`);
      trimmed.add(t);
    }
    if (p.modeVersion !== MODE_VERSION) reject("INVALID_ENVELOPE", `mode_version must be "${MODE_VERSION}"`);

    const existing = this.sessions.get(env.sessionId);
    if (existing) {
      if (existing.dedup.has(env.messageId)) {
        await existing.tail.catch(() => undefined);
        const again = this.sessions.get(env.sessionId);
        if (again?.dedup.has(env.messageId)) return this.ack(env, true, true, again.state);
        return this.admitStart(identity, env, at);
      }
      reject("SESSION_ALREADY_EXISTS", `session ${env.sessionId} already exists`);
    }
    const closed = this.closedSession(env.sessionId);
    if (closed) {
      if (this.store.hasMessage(closed.id, env.messageId)) return this.ack(env, true, true, closed.state);
      reject("SESSION_ALREADY_EXISTS", `session ${env.sessionId} already exists`);
    }
    if (identity.maxOpenSessions !== undefined) {
      let n = 0;
      for (const s of this.open) if (s.initiator === env.sender && at <= s.deadlineMs) n++;
      if (n >= identity.maxOpenSessions) reject("RATE_LIMITED", `${env.sender} already has ${n} open sessions (limit ${identity.maxOpenSessions})`);
    }
    const policyId = p.policyVersion === "" ? DEFAULT_POLICY_ID : p.policyVersion;
    let policy: BoundPolicy = DEFAULT_POLICY;
    if (policyId !== DEFAULT_POLICY_ID) {
      const d = this.policies.get(policyId);
      if (!d) reject("UNKNOWN_POLICY_VERSION", `policy "${policyId}" is not registered`);
      policy = bindPolicy(d as PolicyDescriptor, env.mode);
    }
    if (policy.descriptor.mode !== "*" && policy.descriptor.mode !== env.mode) {
      reject("INVALID_POLICY_DEFINITION", `policy "${policyId}" applies to ${policy.descriptor.mode}, not ${env.mode}`);
    }
    const startErr = (handler as AnyMode).validateStart(env.sender, new Set(p.participants));
    if (startErr) reject("INVALID_ENVELOPE", startErr);

    const s = this.createSession(env, policy, at);
    s.durableSeq = 0;
    this.sessions.set(s.id, s);
    this.open.add(s);
    const record: LogRecord = {
      sessionId: s.id,
      kind: "envelope",
      seq: 1,
      recvMs: at,
      envelope: toBinary(EnvelopeSchema, env),
      messageId: env.messageId,
      boundPolicy: policy === DEFAULT_POLICY ? undefined : toBinary(PolicyDescriptorSchema, policy.descriptor),
    };
    await this.persist(s, [record], true, () => {
      this.publish(s, 1, env);
      this.emitLifecycle(EventType.CREATED, s);
    });
    return this.ack(env, true, false, SessionState.OPEN);
  }

  private async admitInSession(env: Envelope, at: number): Promise<Ack> {
    const s = this.sessions.get(env.sessionId);
    if (!s) return this.admitToClosed(env);
    if (s.dedup.has(env.messageId)) {
      // A retry of something already admitted: answer once it is durable.
      await s.tail.catch(() => undefined);
      const again = this.sessions.get(env.sessionId);
      if (again?.dedup.has(env.messageId)) return this.ack(env, true, true, again.state);
      return this.admitInSession(env, this.clock());
    }
    if (env.mode !== s.mode) reject("INVALID_ENVELOPE", `session ${s.id} is in mode ${s.mode}, not ${env.mode}`);
    if (s.state === SessionState.OPEN && at > s.deadlineMs) {
      this.expire(s, at);
      reject("SESSION_NOT_OPEN", `session ${s.id} expired (TtlExpired)`);
    }
    if (s.state !== SessionState.OPEN) reject("SESSION_NOT_OPEN", `session ${s.id} is ${SessionState[s.state]}`);
    const resolved = this.applyInSession(s, env, at);
    const seq = s.seq;
    const record: LogRecord = { sessionId: s.id, kind: "envelope", seq, recvMs: at, envelope: toBinary(EnvelopeSchema, env), messageId: env.messageId };
    // The session's index row is rewritten when its state changes (here: when it resolves).
    await this.persist(s, [record], resolved, () => {
      this.publish(s, seq, env);
      if (resolved) {
        this.emitLifecycle(EventType.RESOLVED, s);
        this.retire(s);
      }
    });
    return this.ack(env, true, false, s.state);
  }

  /** A non-start envelope for a session that is not resident: a closed one, or none. */
  private admitToClosed(env: Envelope): Ack {
    const c = this.closedSession(env.sessionId);
    if (!c) return reject("SESSION_NOT_FOUND", `session ${env.sessionId} does not exist`);
    // A late resend of something the session accepted: the same duplicate Ack as while it was resident.
    if (this.store.hasMessage(c.id, env.messageId)) return this.ack(env, true, true, c.state);
    if (env.mode !== c.mode) reject("INVALID_ENVELOPE", `session ${c.id} is in mode ${c.mode}, not ${env.mode}`);
    return reject("SESSION_NOT_OPEN", `session ${c.id} is ${SessionState[c.state]}`);
  }

  /**
   * Authority, validation and state change for one non-start envelope (§3.3
   * steps 6–9). Used by admission and by replay. Returns true if it resolved.
   */
  private applyInSession(s: Session, env: Envelope, at: number): boolean {
    const sender = env.sender;
    const isParticipant = sender === s.initiator || s.ctx.participants.has(sender);
    let resolved = false;
    if (env.messageType === CORE_TYPES.Commitment) {
      if (!hasCommitmentAuthority(s.policy.rules, sender, s.initiator, s.ctx.participants)) {
        reject("FORBIDDEN", `${sender} has no commitment authority under policy ${s.policy.descriptor.policyId}`);
      }
      let c;
      try {
        c = fromBinary(CommitmentPayloadSchema, env.payload);
      } catch (e) {
        return reject("INVALID_ENVELOPE", `payload is not a valid CommitmentPayload: ${(e as Error).message}`);
      }
      for (const [k, v] of [
        ["commitment_id", c.commitmentId],
        ["action", c.action],
        ["authority_scope", c.authorityScope],
        ["reason", c.reason],
      ] as const) {
        if (v.trim() === "") reject("INVALID_ENVELOPE", `${k} must not be blank`);
      }
      if (c.modeVersion !== s.modeVersion) reject("INVALID_ENVELOPE", `mode_version must be "${s.modeVersion}"`);
      if (c.configurationVersion !== s.configurationVersion) {
        reject("INVALID_ENVELOPE", `configuration_version must be "${s.configurationVersion}"`);
      }
      const effective = s.policy.descriptor.policyId;
      const policyMatches = c.policyVersion === effective || (c.policyVersion === "" && effective === DEFAULT_POLICY_ID);
      if (!policyMatches) reject("INVALID_ENVELOPE", `policy_version must be "${effective}"`);
      if (c.supersedes && (c.supersedes.sessionId.trim() === "" || c.supersedes.commitmentHash.trim() === "")) {
        reject("INVALID_ENVELOPE", "supersedes needs both session_id and commitment_hash");
      }
      if (/(rejected|failed|declined)$/.test(c.action) && c.outcomePositive) {
        reject("INVALID_ENVELOPE", `action ${c.action} requires outcome_positive=false`);
      }
      if (/(selected|accepted|completed|approved)$/.test(c.action) && !c.outcomePositive) {
        reject("INVALID_ENVELOPE", `action ${c.action} requires outcome_positive=true`);
      }
      s.modeState = s.handler.commit(s.modeState, env, c, s.ctx);
      this.setState(s, SessionState.RESOLVED);
      resolved = true;
    } else if (s.handler.knowsType(env.messageType)) {
      if (!s.handler.senderAllowed(env.messageType, sender, s.ctx)) {
        reject("FORBIDDEN", `${sender} may not send ${env.messageType} in this session`);
      }
      s.modeState = s.handler.apply(s.modeState, env, s.ctx);
    } else {
      reject(
        isParticipant ? "INVALID_ENVELOPE" : "FORBIDDEN",
        isParticipant ? `message type ${env.messageType} is not part of ${s.mode}` : `${sender} is not a participant of this session`,
      );
    }
    s.seq += 1;
    s.dedup.add(env.messageId);
    const a = s.activity.get(sender) ?? { count: 0, lastMs: 0 };
    s.activity.set(sender, { count: a.count + 1, lastMs: at });
    s.fold.add(leanEnvelope(env));
    return resolved;
  }

  /**
   * Hand records to the store; run `onDurable` once they are on disk. With
   * `summarise` (the session started or changed state), the session's row in
   * the store's session index is rewritten in the same transaction; a closed
   * session is answered from that row. Its live metadata while it is open is
   * served from memory, so plain envelopes do not rewrite it. The session's
   * list row is written with every record (see listRow). On a storage
   * failure the kernel reloads from the store and the caller gets
   * INTERNAL_ERROR (the message was not accepted; retrying is safe).
   */
  private async persist(s: Session, records: LogRecord[], summarise: boolean, onDurable: () => void): Promise<void> {
    const gen = this.generation;
    for (const r of records) if (r.recvMs > s.touchedMs) s.touchedMs = r.recvMs;
    const write = this.store.append(records, summarise ? [this.summary(s)] : undefined, [this.listRow(s)]);
    s.tail = write;
    try {
      await write;
    } catch (e) {
      if (gen === this.generation) {
        this.generation++;
        this.log.error({ err: e, sessionId: s.id }, "storage commit failed; rebuilding runtime state from storage");
        try {
          this.reloadResident();
        } catch (e2) {
          this.log.error({ err: e2 }, "rebuild after storage failure failed");
        }
      }
      reject("INTERNAL_ERROR", `storage failure: ${(e as Error).message}`);
    }
    if (gen !== this.generation) reject("INTERNAL_ERROR", "storage failure in the same commit group");
    onDurable();
  }

  /**
   * The session's terminal record is durable: it leaves memory. Later reads
   * find it in the store (and in the cache of recently closed sessions).
   */
  private retire(s: Session): void {
    if (this.sessions.get(s.id) !== s) return; // replaced by a reload after a storage failure
    this.sessions.delete(s.id);
    this.open.delete(s);
    const metadata = this.metadata(s);
    this.closedCache.put({
      id: s.id,
      mode: s.mode,
      state: s.state,
      initiator: s.initiator,
      participants: s.ctx.participants,
      metadata,
      lastSeq: s.durableSeq,
      bytes: closedBytes(metadata),
      policy: s.policy,
    });
  }

  /** A closed session from the cache or the store's session index; undefined if there is none. */
  private closedSession(sessionId: string): ClosedSession | undefined {
    const hit = this.closedCache.get(sessionId);
    if (hit) return hit;
    const entry = this.store.getSession(sessionId);
    if (!entry) return undefined;
    if (isResidentStatus(entry.status)) {
      // The index says it is open but it is not in memory (a reload after a
      // storage failure stopped early): rebuild it from its log.
      if (this.sessions.has(sessionId)) return undefined;
      const s = this.replaySession(entry);
      this.log.warn({ sessionId }, "open session was not resident; rebuilt it from storage");
      if (!isTerminal(s.state)) {
        this.keepResident(s);
        return undefined;
      }
    }
    const c = closedFromEntry(entry);
    this.closedCache.put(c);
    return c;
  }

  /** A resident session (with lazy expiry) or a closed one. */
  private find(sessionId: string): Session | ClosedSession | undefined {
    const s = this.lookup(sessionId);
    if (s) return s;
    const c = this.closedSession(sessionId);
    return c ?? this.sessions.get(sessionId);
  }

  /** The bound policy of a closed session, from its SessionStart record. */
  private closedPolicy(c: ClosedSession): BoundPolicy {
    if (c.policy) return c.policy;
    const start = this.store.readSession(c.id, 0, { maxRecords: 1 })[0];
    if (!start) throw new StoreCorruptionError(`session ${c.id} is in the session index but has no SessionStart record`);
    c.policy = start.boundPolicy ? bindPolicy(fromBinary(PolicyDescriptorSchema, start.boundPolicy), c.mode) : DEFAULT_POLICY;
    return c.policy;
  }

  private publish(s: Session, seq: number, env: Envelope): void {
    s.durableSeq = seq;
    const listeners = this.sessionListeners.get(s.id);
    if (!listeners) return;
    const d = { sequence: seq, envelope: env };
    for (const l of listeners) l(d);
  }

  private emitLifecycle(type: EventType, s: Session): void {
    if (this.lifecycleListeners.size === 0) return;
    const ev = create(SessionLifecycleEventSchema, {
      eventType: type,
      session: this.metadata(s),
      observedAtUnixMs: BigInt(this.clock()),
    });
    for (const l of this.lifecycleListeners) l(ev);
  }

  // --------------------------------------------------- expiry and control

  private annotation(s: Session, type: string, payload: Uint8Array, at: number): Envelope {
    return create(EnvelopeSchema, {
      macpVersion: MACP_VERSION,
      mode: s.mode,
      messageType: type,
      messageId: "",
      sessionId: s.id,
      sender: RUNTIME_SENDER,
      timestampUnixMs: BigInt(at),
      payload,
    });
  }

  private writeAnnotation(s: Session, kind: RecordKind, env: Envelope, at: number, onDurable: () => void): Promise<void> {
    return this.persist(s, [{ sessionId: s.id, kind, seq: 0, recvMs: at, envelope: toBinary(EnvelopeSchema, env) }], true, onDurable);
  }

  private expire(s: Session, at: number): void {
    this.setState(s, SessionState.EXPIRED);
    this.writeAnnotation(s, "expire", this.annotation(s, CORE_TYPES.TtlExpired, new Uint8Array(), at), at, () => {
      this.emitLifecycle(EventType.EXPIRED, s);
      this.retire(s);
    }).catch((e) => this.log.warn({ err: e, sessionId: s.id }, "could not record expiry; it will be retried"));
  }

  /** Expire OPEN sessions whose deadline has passed, even with no traffic. */
  sweep(): void {
    const at = this.clock();
    for (const s of [...this.open]) if (at > s.deadlineMs) this.expire(s, at);
  }

  /** Look up a session, applying lazy expiry. */
  private lookup(sessionId: string): Session | undefined {
    const s = this.sessions.get(sessionId);
    if (s && s.state === SessionState.OPEN && this.clock() > s.deadlineMs) this.expire(s, this.clock());
    return s;
  }

  private controlAck(s: { id: string; state: SessionState }, ok: boolean, err?: MacpRejection): Ack {
    return create(AckSchema, {
      ok,
      messageId: "",
      sessionId: s.id,
      acceptedAtUnixMs: BigInt(this.clock()),
      sessionState: ok ? s.state : SessionState.UNSPECIFIED,
      error: err ? create(MACPErrorSchema, { code: err.code, message: err.message, sessionId: s.id }) : undefined,
    });
  }

  /** Cancel / Suspend / Resume. Throws ControlError for gRPC-status failures. */
  async control(identity: Identity, op: "cancel" | "suspend" | "resume", sessionId: string, reason: string): Promise<Ack> {
    const found = this.find(sessionId);
    if (!found) throw new ControlError("not_found", `session ${sessionId} does not exist`);
    if (!("handler" in found)) return this.controlClosed(identity, op, found);
    const s = found;
    const allowed =
      identity.sender === s.initiator || hasCommitmentAuthority(s.policy.rules, identity.sender, s.initiator, s.ctx.participants);
    if (!allowed) throw new ControlError("permission_denied", `${identity.sender} may not ${op} session ${sessionId}`);
    const at = this.clock();
    if (op === "cancel") {
      if (s.state !== SessionState.OPEN && s.state !== SessionState.SUSPENDED) return this.controlAck(s, true);
      this.setState(s, SessionState.CANCELLED);
      const payload = toBinary(SessionCancelPayloadSchema, create(SessionCancelPayloadSchema, { reason, cancelledBy: identity.sender }));
      await this.writeAnnotation(s, "cancel", this.annotation(s, CORE_TYPES.SessionCancel, payload, at), at, () => {
        this.emitLifecycle(EventType.CANCELLED, s);
        this.retire(s);
      });
      return this.controlAck(s, true);
    }
    if (op === "suspend") {
      if (s.state !== SessionState.OPEN) {
        return this.controlAck(s, false, new MacpRejection("SESSION_NOT_OPEN", `session is ${SessionState[s.state]}`));
      }
      this.setState(s, SessionState.SUSPENDED);
      s.suspendedAtMs = at;
      const payload = toBinary(SessionSuspendPayloadSchema, create(SessionSuspendPayloadSchema, { reason, suspendedBy: identity.sender }));
      await this.writeAnnotation(s, "suspend", this.annotation(s, CORE_TYPES.SessionSuspend, payload, at), at, () =>
        this.emitLifecycle(EventType.SUSPENDED, s),
      );
      return this.controlAck(s, true);
    }
    if (s.state !== SessionState.SUSPENDED) {
      return this.controlAck(s, false, new MacpRejection("SESSION_NOT_OPEN", `session is ${SessionState[s.state]}, not SUSPENDED`));
    }
    const banked = Math.max(0, at - s.suspendedAtMs);
    if (s.suspendedTotalMs + banked > this.cfg.maxSuspendMs) {
      this.expire(s, at);
      await s.tail.catch(() => undefined);
      return this.controlAck(s, false, new MacpRejection("SESSION_NOT_OPEN", "cumulative suspension exceeded the cap; the session expired"));
    }
    s.suspendedTotalMs += banked;
    s.deadlineMs += banked;
    s.suspendedAtMs = 0;
    this.setState(s, SessionState.OPEN);
    const payload = toBinary(
      SessionResumePayloadSchema,
      create(SessionResumePayloadSchema, { reason, resumedBy: identity.sender, bankedMs: BigInt(banked) }),
    );
    await this.writeAnnotation(s, "resume", this.annotation(s, CORE_TYPES.SessionResume, payload, at), at, () =>
      this.emitLifecycle(EventType.RESUMED, s),
    );
    return this.controlAck(s, true);
  }

  /** Cancel / Suspend / Resume of a closed session: the same answers as while it was resident. */
  private controlClosed(identity: Identity, op: "cancel" | "suspend" | "resume", c: ClosedSession): Ack {
    const allowed =
      identity.sender === c.initiator || hasCommitmentAuthority(this.closedPolicy(c).rules, identity.sender, c.initiator, c.participants);
    if (!allowed) throw new ControlError("permission_denied", `${identity.sender} may not ${op} session ${c.id}`);
    if (op === "cancel") return this.controlAck(c, true);
    if (op === "suspend") return this.controlAck(c, false, new MacpRejection("SESSION_NOT_OPEN", `session is ${SessionState[c.state]}`));
    return this.controlAck(c, false, new MacpRejection("SESSION_NOT_OPEN", `session is ${SessionState[c.state]}, not SUSPENDED`));
  }

  // ---------------------------------------------------------------- reads

  getSession(sessionId: string): { metadata: SessionMetadata; initiator: string; participants: ReadonlySet<string> } | undefined {
    const found = this.find(sessionId);
    if (!found) return undefined;
    if ("handler" in found) return { metadata: this.metadata(found), initiator: found.initiator, participants: found.ctx.participants };
    return { metadata: found.metadata, initiator: found.initiator, participants: found.participants };
  }

  /** Every session, in the order they started (ListSessions). */
  listSessions(): SessionMetadata[] {
    const out: SessionMetadata[] = [];
    for (const item of this.snapshotItems()) out.push("metadata" in item ? item.metadata : decodeMetadata(item.entry));
    return out;
  }

  /**
   * The same list as a binary macp.v1.ListSessionsResponse, assembled from
   * the stored summaries without decoding them: its cost is the size of the
   * response, not the size of the sessions as objects.
   */
  listSessionsEncoded(): Uint8Array {
    const parts: Uint8Array[] = [];
    let size = 0;
    for (const item of this.snapshotItems()) {
      const body = "metadata" in item ? toBinary(SessionMetadataSchema, item.metadata) : (item.entry.metadata as Uint8Array);
      const head = lengthDelimitedHead(1, body.length);
      parts.push(head, body);
      size += head.length + body.length;
    }
    const out = new Uint8Array(size);
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  /** Whether `sender` may read the session (initiator, participant, observer). */
  canRead(identity: Identity, sessionId: string): boolean {
    const found = this.sessions.get(sessionId) ?? this.closedSession(sessionId) ?? this.sessions.get(sessionId);
    if (!found) return false;
    const participants = "handler" in found ? found.ctx.participants : found.participants;
    return identity.isObserver || identity.sender === found.initiator || participants.has(identity.sender);
  }

  hasSession(sessionId: string): boolean {
    return this.sessions.has(sessionId) || this.closedSession(sessionId) !== undefined || this.sessions.has(sessionId);
  }

  /**
   * Passive subscribe, history first: yields the accepted envelopes with
   * sequence > afterSeq, read from storage a page at a time (at most
   * HISTORY_PAGE_RECORDS records and about HISTORY_PAGE_BYTES bytes) and only
   * as the consumer asks for them, up to the durable head. When it has caught
   * up it calls `attach` (which registers the live listener) in the same
   * synchronous step in which it read the head, and ends: every envelope
   * published later goes to that listener, every earlier one came from
   * storage. No gap, no duplicate, and a consumer that stops reading holds
   * one page.
   */
  *history(sessionId: string, afterSeq: number, attach: () => void): Generator<Delivered, void, undefined> {
    let cursor = afterSeq;
    for (;;) {
      const head = this.durableHead(sessionId);
      if (!(cursor < head)) {
        attach();
        return;
      }
      const page = this.store.readSession(sessionId, cursor, {
        upToSeq: head,
        maxRecords: HISTORY_PAGE_RECORDS,
        maxBytes: HISTORY_PAGE_BYTES,
      });
      this.historyReads.pages++;
      this.historyReads.records += page.length;
      if (page.length === 0) {
        throw new StoreCorruptionError(`session ${sessionId}: its history ends at seq ${Math.floor(cursor)} but seq ${head} was acknowledged`);
      }
      for (const r of page) {
        cursor = r.seq;
        yield { sequence: r.seq, envelope: fromBinary(EnvelopeSchema, r.envelope) };
      }
    }
  }

  /** Live delivery only (a stream bound by an envelope frame). */
  listen(sessionId: string, listener: SessionListener): () => void {
    let set = this.sessionListeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.sessionListeners.set(sessionId, set);
    }
    set.add(listener);
    return () => {
      const cur = this.sessionListeners.get(sessionId);
      if (!cur) return;
      cur.delete(listener);
      if (cur.size === 0) this.sessionListeners.delete(sessionId);
    };
  }

  /** Sequence of the newest envelope that is durable and published (0 if there is no such session). */
  durableHead(sessionId: string): number {
    const s = this.sessions.get(sessionId);
    if (s) return s.durableSeq;
    return this.closedSession(sessionId)?.lastSeq ?? this.sessions.get(sessionId)?.durableSeq ?? 0;
  }

  /**
   * WatchSessions: live lifecycle events from now on, and a snapshot of every
   * session as of now, read lazily from the session index a page at a time
   * as the caller iterates (so a slow watcher holds one page).
   */
  watchSessions(listener: LifecycleListener): { snapshot: Iterable<SessionMetadata>; close: () => void } {
    this.lifecycleListeners.add(listener);
    const items = this.snapshotItems();
    function* sessions(): Generator<SessionMetadata, void, undefined> {
      for (const item of items) yield "metadata" in item ? item.metadata : decodeMetadata(item.entry);
    }
    return { snapshot: sessions(), close: () => this.lifecycleListeners.delete(listener) };
  }

  /**
   * Every session as of now, in the order they started: resident ones as
   * metadata, closed ones as their index rows. Taken now: the
   * resident sessions' metadata and the store's last position. Read later, as
   * iterated: the closed sessions, from the session index up to that
   * position. A closed session never changes, and a session that closes
   * while the snapshot is read appears as it was when it was taken (its
   * change arrives as a lifecycle event), so the snapshot plus the events
   * after it are exact. Sessions started later than now are not in it.
   */
  private snapshotItems(): Generator<{ metadata: SessionMetadata } | { entry: SessionIndexEntry }, void, undefined> {
    const maxPosition = this.store.lastPosition();
    const resident = new Map<string, SessionMetadata>();
    for (const s of this.sessions.values()) resident.set(s.id, this.metadata(s));
    const store = this.store;
    function* items(): Generator<{ metadata: SessionMetadata } | { entry: SessionIndexEntry }, void, undefined> {
      for (let after = 0; ; ) {
        const page = store.listSessions({ afterPosition: after, maxPosition, limit: INDEX_PAGE_ROWS });
        if (page.length === 0) break;
        for (const entry of page) {
          const live = resident.get(entry.sessionId);
          if (live) {
            resident.delete(entry.sessionId);
            yield { metadata: live };
          } else if (entry.metadata !== null && !isResidentStatus(entry.status)) {
            yield { entry };
          }
          // An open row not resident when the snapshot was taken cannot
          // happen after open() (every open row is rebuilt); it is skipped
          // rather than shown with a summary that may be behind.
        }
        after = (page[page.length - 1] as SessionIndexEntry).firstPosition;
      }
      // Admitted before the snapshot, not yet durable then: the newest.
      for (const metadata of resident.values()) yield { metadata };
    }
    return items();
  }

  watchSignals(listener: SignalListener): () => void {
    this.signalListeners.add(listener);
    return () => this.signalListeners.delete(listener);
  }

  /** Counters for logs, tests and benchmarks. */
  stats(): {
    resident: number;
    open: number;
    closedCached: number;
    closedCachedBytes: number;
    sessionSubscribers: number;
    lifecycleSubscribers: number;
    historyPages: number;
    historyRecords: number;
  } {
    let subs = 0;
    for (const set of this.sessionListeners.values()) subs += set.size;
    return {
      resident: this.sessions.size,
      open: this.open.size,
      closedCached: this.closedCache.size,
      closedCachedBytes: this.closedCache.heldBytes,
      sessionSubscribers: subs,
      lifecycleSubscribers: this.lifecycleListeners.size,
      historyPages: this.historyReads.pages,
      historyRecords: this.historyReads.records,
    };
  }

  /** What the store was asked to read since it was opened (tests and benchmarks). */
  storageReads(): StoreReadStats {
    return this.store.readStats();
  }

  // -------------------------------------------------------------- policies

  listPolicies(modeFilter = ""): PolicyDescriptor[] {
    const all = [DEFAULT_POLICY.descriptor, ...this.policies.values()];
    return all
      .filter((d) => modeFilter === "" || d.mode === modeFilter || d.mode === "*")
      .sort((a, b) => a.policyId.localeCompare(b.policyId));
  }

  getPolicy(id: string): PolicyDescriptor | undefined {
    return id === DEFAULT_POLICY_ID ? DEFAULT_POLICY.descriptor : this.policies.get(id);
  }

  async registerPolicy(d: PolicyDescriptor): Promise<string | null> {
    const err = validateDescriptor(d, (id) => this.policies.has(id));
    if (err) return err;
    const stored = create(PolicyDescriptorSchema, { ...d, registeredAtUnixMs: BigInt(this.clock()) });
    this.policies.set(d.policyId, stored);
    try {
      await this.store.putPolicy({ policyId: d.policyId, descriptor: toBinary(PolicyDescriptorSchema, stored) });
    } catch (e) {
      this.policies.delete(d.policyId);
      return `storage failure: ${(e as Error).message}`;
    }
    this.notifyPolicies();
    return null;
  }

  async unregisterPolicy(id: string): Promise<string | null> {
    if (id === DEFAULT_POLICY_ID) return "policy.default is built in and cannot be unregistered";
    const d = this.policies.get(id);
    if (!d) return `policy ${id} is not registered`;
    this.policies.delete(id);
    try {
      await this.store.deletePolicy(id);
    } catch (e) {
      this.policies.set(id, d);
      return `storage failure: ${(e as Error).message}`;
    }
    this.notifyPolicies();
    return null;
  }

  watchPolicies(listener: PolicyListener): { snapshot: PolicyDescriptor[]; close: () => void } {
    this.policyListeners.add(listener);
    return { snapshot: this.listPolicies(), close: () => this.policyListeners.delete(listener) };
  }

  private notifyPolicies(): void {
    const all = this.listPolicies();
    for (const l of this.policyListeners) l(all);
  }
}

export class ControlError extends Error {
  constructor(
    readonly kind: "not_found" | "permission_denied",
    message: string,
  ) {
    super(message);
    this.name = "ControlError";
  }
}
