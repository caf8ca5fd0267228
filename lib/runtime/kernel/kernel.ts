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
import { CORE_TYPES, DEFAULT_POLICY_ID, MACP_VERSION, RUNTIME_SENDER } from "@/lib/macp/constants";
import { AckSchema, EnvelopeSchema, MACPErrorSchema, SessionState, type Ack, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import {
  SessionCancelPayloadSchema,
  SessionLifecycleEventSchema,
  SessionLifecycleEvent_EventType as EventType,
  SessionResumePayloadSchema,
  SessionSuspendPayloadSchema,
  type SessionMetadata,
} from "@/lib/gen/macp/v1/core_pb";
import { PolicyDescriptorSchema, type PolicyDescriptor } from "@/lib/gen/macp/v1/policy_pb";
import type { Identity } from "../auth";
import type { RuntimeConfig } from "../config";
import { MacpRejection, reject } from "../errors";
import { bindPolicy, DEFAULT_POLICY, hasCommitmentAuthority, type BoundPolicy } from "../policy";
import { SlidingWindowLimiter } from "../rate-limit";
import type { LogRecord, RecordKind, StoredListRow, Store, StoreReadStats } from "../store/types";
import { StoreCorruptionError } from "../store/types";
import { applyInSession, checkAmbient, checkCaller, checkShape, checkStart } from "./admission";
import {
  Fanout,
  type Delivered,
  type LifecycleListener,
  type ListRowListener,
  type Logger,
  type PolicyListener,
  type SessionListener,
  type SignalListener,
} from "./fanout";
import { backfillListRows, HISTORY_PAGE_BYTES, HISTORY_PAGE_RECORDS } from "./list-rows";
import { PolicyRegistry } from "./policies";
import { Residents } from "./residents";
import {
  createSession,
  decodeMetadata,
  residentListRow,
  sessionMetadata,
  sessionSummary,
  type ClosedSession,
  type Session,
} from "./session";
import { encodeListSessions, snapshotItems } from "./snapshot";

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

const now = (): number => Date.now();

function rejection(err: unknown): MacpRejection {
  if (err instanceof MacpRejection) return err;
  return new MacpRejection("INTERNAL_ERROR", `internal error: ${(err as Error)?.message ?? String(err)}`);
}

export interface KernelOptions {
  store: Store;
  config: Pick<RuntimeConfig, "maxPayloadBytes" | "sessionStartsPerMinute" | "messagesPerMinute" | "expirySweepMs" | "maxSuspendMs"> &
    Partial<Pick<RuntimeConfig, "closedSessionCache" | "closedSessionCacheBytes">>;
  logger: Logger;
  /** Injectable clock for tests. */
  clock?: () => number;
}

export class Kernel {
  /** What is resident, and the closed sessions read from storage (residents.ts). */
  private readonly residents: Residents;
  private loaded: LoadReport | null = null;
  private readonly historyReads = { pages: 0, records: 0 };
  private readonly policies: PolicyRegistry;
  private readonly fanout: Fanout;
  private readonly stopListRows: () => void;
  /** The list-row backfill of a store migrated from schema v2, while it runs. */
  private backfill: Promise<void> | null = null;
  private readonly limiters: { starts: SlidingWindowLimiter; messages: SlidingWindowLimiter };
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
    this.limiters = {
      starts: new SlidingWindowLimiter(opts.config.sessionStartsPerMinute),
      messages: new SlidingWindowLimiter(opts.config.messagesPerMinute),
    };
    this.residents = new Residents(this.store, this.log, {
      maxEntries: opts.config.closedSessionCache ?? 1024,
      maxBytes: opts.config.closedSessionCacheBytes ?? 16_777_216,
    });
    this.fanout = new Fanout(this.log);
    this.policies = new PolicyRegistry(this.store, this.clock, (all) => this.fanout.policiesChanged(all));
    this.stopListRows = this.store.onListRows((rows) => this.fanout.listRowsWritten(rows));
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
      k.backfill = backfillListRows({
        store: k.store,
        log: k.log,
        residentRow: (id) => {
          const s = k.residents.get(id);
          return s ? residentListRow(s) : undefined;
        },
        stopped: () => k.closed,
      }).catch((err: unknown) => {
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
    await Promise.allSettled([...this.residents.all()].map((s) => s.tail));
    await this.backfill;
    this.stopListRows();
  }

  // -------------------------------------------------------------- list rows

  /**
   * Durable list rows from now on, in change order (the live half of the
   * list-row feed; the stored half is readListRows).
   */
  watchListRows(listener: ListRowListener): () => void {
    this.fanout.listRows.add(listener);
    return () => void this.fanout.listRows.delete(listener);
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

  /** Initial load: the policies, then the resident sessions (residents.ts). */
  private async load(): Promise<LoadReport> {
    const t0 = performance.now();
    const before = this.store.readStats();
    this.policies.load();
    const indexed = await this.residents.load();
    const reads = this.store.readStats();
    this.loaded = {
      resident: this.residents.size,
      open: this.residents.openCount,
      indexRows: reads.indexRows - before.indexRows,
      records: reads.records - before.records,
      indexed,
      policies: this.policies.size,
      ms: Math.round(performance.now() - t0),
    };
    return this.loaded;
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

  private async admit(identity: Identity | null, env: Envelope): Promise<Ack> {
    if (this.closed) reject("INTERNAL_ERROR", "runtime is shutting down");
    checkShape(env, this.cfg.maxPayloadBytes);
    const at = this.clock();
    checkCaller(identity, env, at, this.limiters);
    if (env.messageType === CORE_TYPES.Signal || env.messageType === CORE_TYPES.Progress) {
      // Signals and Progress are fanned out, never stored (an ambient Progress has no session).
      checkAmbient(env);
      this.fanout.signal(env);
      return this.ack(env, true, false, SessionState.OPEN);
    }
    if (env.messageType === CORE_TYPES.SessionStart) return this.admitStart(identity, env, at);
    return this.admitInSession(env, at);
  }

  private async admitStart(identity: Identity, env: Envelope, at: number): Promise<Ack> {
    const { handler, payload: p } = checkStart(env);
    const existing = this.residents.get(env.sessionId);
    if (existing) {
      if (existing.dedup.has(env.messageId)) {
        await existing.tail.catch(() => undefined);
        const again = this.residents.get(env.sessionId);
        if (again?.dedup.has(env.messageId)) return this.ack(env, true, true, again.state);
        return this.admitStart(identity, env, at);
      }
      reject("SESSION_ALREADY_EXISTS", `session ${env.sessionId} already exists`);
    }
    const closed = this.residents.closed(env.sessionId);
    if (closed) {
      if (this.store.hasMessage(closed.id, env.messageId)) return this.ack(env, true, true, closed.state);
      reject("SESSION_ALREADY_EXISTS", `session ${env.sessionId} already exists`);
    }
    if (identity.maxOpenSessions !== undefined) {
      const n = this.residents.countOpen((s) => s.initiator === env.sender && at <= s.deadlineMs);
      if (n >= identity.maxOpenSessions)
        reject("RATE_LIMITED", `${env.sender} already has ${n} open sessions (limit ${identity.maxOpenSessions})`);
    }
    const policyId = p.policyVersion === "" ? DEFAULT_POLICY_ID : p.policyVersion;
    let policy: BoundPolicy = DEFAULT_POLICY;
    if (policyId !== DEFAULT_POLICY_ID) {
      const d = this.policies.registered(policyId);
      if (!d) reject("UNKNOWN_POLICY_VERSION", `policy "${policyId}" is not registered`);
      policy = bindPolicy(d as PolicyDescriptor, env.mode);
    }
    if (policy.descriptor.mode !== "*" && policy.descriptor.mode !== env.mode) {
      reject("INVALID_POLICY_DEFINITION", `policy "${policyId}" applies to ${policy.descriptor.mode}, not ${env.mode}`);
    }
    const startErr = handler.validateStart(env.sender, new Set(p.participants));
    if (startErr) reject("INVALID_ENVELOPE", startErr);

    const s = createSession(env, policy, at);
    s.durableSeq = 0;
    this.residents.add(s);
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
    const s = this.residents.get(env.sessionId);
    if (!s) return this.admitToClosed(env);
    if (s.dedup.has(env.messageId)) {
      // A retry of something already admitted: answer once it is durable.
      await s.tail.catch(() => undefined);
      const again = this.residents.get(env.sessionId);
      if (again?.dedup.has(env.messageId)) return this.ack(env, true, true, again.state);
      return this.admitInSession(env, this.clock());
    }
    if (env.mode !== s.mode) reject("INVALID_ENVELOPE", `session ${s.id} is in mode ${s.mode}, not ${env.mode}`);
    if (s.state === SessionState.OPEN && at > s.deadlineMs) {
      this.expire(s, at);
      reject("SESSION_NOT_OPEN", `session ${s.id} expired (TtlExpired)`);
    }
    if (s.state !== SessionState.OPEN) reject("SESSION_NOT_OPEN", `session ${s.id} is ${SessionState[s.state]}`);
    const resolved = applyInSession(s, env, at);
    if (resolved) this.residents.resolved(s);
    const seq = s.seq;
    const record: LogRecord = {
      sessionId: s.id,
      kind: "envelope",
      seq,
      recvMs: at,
      envelope: toBinary(EnvelopeSchema, env),
      messageId: env.messageId,
    };
    // The session's index row is rewritten when its state changes (here: when it resolves).
    await this.persist(s, [record], resolved, () => {
      this.publish(s, seq, env);
      if (resolved) {
        this.emitLifecycle(EventType.RESOLVED, s);
        this.residents.retire(s);
      }
    });
    return this.ack(env, true, false, s.state);
  }

  /** A non-start envelope for a session that is not resident: a closed one, or none. */
  private admitToClosed(env: Envelope): Ack {
    const c = this.residents.closed(env.sessionId);
    if (!c) return reject("SESSION_NOT_FOUND", `session ${env.sessionId} does not exist`);
    // A late resend of something the session accepted: the same duplicate Ack as while it was resident.
    if (this.store.hasMessage(c.id, env.messageId)) return this.ack(env, true, true, c.state);
    if (env.mode !== c.mode) reject("INVALID_ENVELOPE", `session ${c.id} is in mode ${c.mode}, not ${env.mode}`);
    return reject("SESSION_NOT_OPEN", `session ${c.id} is ${SessionState[c.state]}`);
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
    const write = this.store.append(records, summarise ? [sessionSummary(s)] : undefined, [residentListRow(s)]);
    s.tail = write;
    try {
      await write;
    } catch (e) {
      if (gen === this.generation) {
        this.generation++;
        this.log.error({ err: e, sessionId: s.id }, "storage commit failed; rebuilding runtime state from storage");
        try {
          this.policies.load();
          this.residents.reload();
        } catch (e2) {
          this.log.error({ err: e2 }, "rebuild after storage failure failed");
        }
      }
      reject("INTERNAL_ERROR", `storage failure: ${(e as Error).message}`);
    }
    if (gen !== this.generation) reject("INTERNAL_ERROR", "storage failure in the same commit group");
    onDurable();
  }

  /** A resident session (with lazy expiry) or a closed one. */
  private find(sessionId: string): Session | ClosedSession | undefined {
    const s = this.lookup(sessionId);
    if (s) return s;
    const c = this.residents.closed(sessionId);
    return c ?? this.residents.get(sessionId);
  }

  private publish(s: Session, seq: number, env: Envelope): void {
    s.durableSeq = seq;
    this.fanout.publish(s.id, { sequence: seq, envelope: env });
  }

  private emitLifecycle(type: EventType, s: Session): void {
    this.fanout.lifecycleEvent(() =>
      create(SessionLifecycleEventSchema, {
        eventType: type,
        session: sessionMetadata(s),
        observedAtUnixMs: BigInt(this.clock()),
      }),
    );
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
    this.residents.setState(s, SessionState.EXPIRED);
    this.writeAnnotation(s, "expire", this.annotation(s, CORE_TYPES.TtlExpired, new Uint8Array(), at), at, () => {
      this.emitLifecycle(EventType.EXPIRED, s);
      this.residents.retire(s);
    }).catch((e) => this.log.warn({ err: e, sessionId: s.id }, "could not record expiry; it will be retried"));
  }

  /** Expire OPEN sessions whose deadline has passed, even with no traffic. */
  sweep(): void {
    const at = this.clock();
    for (const s of this.residents.open()) if (at > s.deadlineMs) this.expire(s, at);
  }

  /** Look up a session, applying lazy expiry. */
  private lookup(sessionId: string): Session | undefined {
    const s = this.residents.get(sessionId);
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
      this.residents.setState(s, SessionState.CANCELLED);
      const payload = toBinary(SessionCancelPayloadSchema, create(SessionCancelPayloadSchema, { reason, cancelledBy: identity.sender }));
      await this.writeAnnotation(s, "cancel", this.annotation(s, CORE_TYPES.SessionCancel, payload, at), at, () => {
        this.emitLifecycle(EventType.CANCELLED, s);
        this.residents.retire(s);
      });
      return this.controlAck(s, true);
    }
    if (op === "suspend") {
      if (s.state !== SessionState.OPEN) {
        return this.controlAck(s, false, new MacpRejection("SESSION_NOT_OPEN", `session is ${SessionState[s.state]}`));
      }
      this.residents.setState(s, SessionState.SUSPENDED);
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
      return this.controlAck(
        s,
        false,
        new MacpRejection("SESSION_NOT_OPEN", "cumulative suspension exceeded the cap; the session expired"),
      );
    }
    s.suspendedTotalMs += banked;
    s.deadlineMs += banked;
    s.suspendedAtMs = 0;
    this.residents.setState(s, SessionState.OPEN);
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
      identity.sender === c.initiator ||
      hasCommitmentAuthority(this.residents.closedPolicy(c).rules, identity.sender, c.initiator, c.participants);
    if (!allowed) throw new ControlError("permission_denied", `${identity.sender} may not ${op} session ${c.id}`);
    if (op === "cancel") return this.controlAck(c, true);
    if (op === "suspend") return this.controlAck(c, false, new MacpRejection("SESSION_NOT_OPEN", `session is ${SessionState[c.state]}`));
    return this.controlAck(c, false, new MacpRejection("SESSION_NOT_OPEN", `session is ${SessionState[c.state]}, not SUSPENDED`));
  }

  // ---------------------------------------------------------------- reads

  getSession(sessionId: string): { metadata: SessionMetadata; initiator: string; participants: ReadonlySet<string> } | undefined {
    const found = this.find(sessionId);
    if (!found) return undefined;
    if ("handler" in found) return { metadata: sessionMetadata(found), initiator: found.initiator, participants: found.ctx.participants };
    return { metadata: found.metadata, initiator: found.initiator, participants: found.participants };
  }

  /** Every session, in the order they started (ListSessions). */
  listSessions(): SessionMetadata[] {
    const out: SessionMetadata[] = [];
    for (const item of this.snapshot()) out.push("metadata" in item ? item.metadata : decodeMetadata(item.entry));
    return out;
  }

  /**
   * The same list as a binary macp.v1.ListSessionsResponse, assembled from
   * the stored summaries without decoding them (snapshot.ts).
   */
  listSessionsEncoded(): Uint8Array {
    return encodeListSessions(this.snapshot());
  }

  /** Every session as of now, closed ones read lazily as iterated (snapshot.ts). */
  private snapshot(): ReturnType<typeof snapshotItems> {
    return snapshotItems(this.store, [...this.residents.all()].map(sessionMetadata));
  }

  /** Whether `identity` may read the session (initiator, participant, observer). */
  canRead(identity: Identity, sessionId: string): boolean {
    return this.residents.canRead(identity, sessionId);
  }

  hasSession(sessionId: string): boolean {
    return this.residents.exists(sessionId);
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
        throw new StoreCorruptionError(
          `session ${sessionId}: its history ends at seq ${Math.floor(cursor)} but seq ${head} was acknowledged`,
        );
      }
      for (const r of page) {
        cursor = r.seq;
        yield { sequence: r.seq, envelope: fromBinary(EnvelopeSchema, r.envelope) };
      }
    }
  }

  /** Live delivery only (a stream bound by an envelope frame). */
  listen(sessionId: string, listener: SessionListener): () => void {
    return this.fanout.listen(sessionId, listener);
  }

  /** Sequence of the newest envelope that is durable and published (0 if there is no such session). */
  durableHead(sessionId: string): number {
    return this.residents.durableHead(sessionId);
  }

  /**
   * WatchSessions: live lifecycle events from now on, and a snapshot of every
   * session as of now, read lazily from the session index a page at a time
   * as the caller iterates (so a slow watcher holds one page).
   */
  watchSessions(listener: LifecycleListener): { snapshot: Iterable<SessionMetadata>; close: () => void } {
    this.fanout.lifecycle.add(listener);
    const items = this.snapshot();
    function* sessions(): Generator<SessionMetadata, void, undefined> {
      for (const item of items) yield "metadata" in item ? item.metadata : decodeMetadata(item.entry);
    }
    return { snapshot: sessions(), close: () => this.fanout.lifecycle.delete(listener) };
  }

  watchSignals(listener: SignalListener): () => void {
    this.fanout.signals.add(listener);
    return () => this.fanout.signals.delete(listener);
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
    return {
      resident: this.residents.size,
      open: this.residents.openCount,
      closedCached: this.residents.cached.entries,
      closedCachedBytes: this.residents.cached.bytes,
      sessionSubscribers: this.fanout.sessionSubscribers,
      lifecycleSubscribers: this.fanout.lifecycle.size,
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
    return this.policies.list(modeFilter);
  }

  getPolicy(id: string): PolicyDescriptor | undefined {
    return this.policies.get(id);
  }

  registerPolicy(d: PolicyDescriptor): Promise<string | null> {
    return this.policies.register(d);
  }

  unregisterPolicy(id: string): Promise<string | null> {
    return this.policies.unregister(id);
  }

  watchPolicies(listener: PolicyListener): { snapshot: PolicyDescriptor[]; close: () => void } {
    this.fanout.policies.add(listener);
    return { snapshot: this.policies.list(), close: () => this.fanout.policies.delete(listener) };
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
