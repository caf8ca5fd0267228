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
//
// This file is the kernel's face: open and close, reads, list rows and
// policies. Send is send.ts, expiry and Cancel/Suspend/Resume lifecycle.ts,
// and both write through writes.ts.
import { fromBinary } from "@bufbuild/protobuf";
import { EnvelopeSchema, type Ack, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import type { PolicyDescriptor } from "@/lib/gen/macp/v1/policy_pb";
import type { Identity } from "../auth";
import type { RuntimeConfig } from "../config";
import { SlidingWindowLimiter } from "../rate-limit";
import type { StoredListRow, Store, StoreReadStats } from "../store/types";
import { StoreCorruptionError } from "../store/types";
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
import { Lifecycle } from "./lifecycle";
import { backfillListRows, HISTORY_PAGE_BYTES, HISTORY_PAGE_RECORDS } from "./list-rows";
import { PolicyRegistry } from "./policies";
import { Residents } from "./residents";
import { SendPath } from "./send";
import { decodeMetadata, residentListRow, sessionMetadata } from "./session";
import { encodeListSessions, snapshotItems } from "./snapshot";
import { SessionWrites } from "./writes";

export { ControlError } from "./lifecycle";

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
  /** Send (send.ts), and expiry and control (lifecycle.ts), both writing through writes.ts. */
  private readonly sendPath: SendPath;
  private readonly lifecycle: Lifecycle;
  private readonly store: Store;
  private readonly log: Logger;
  private sweepTimer: NodeJS.Timeout | null = null;
  private closed = false;

  private constructor(opts: KernelOptions) {
    this.store = opts.store;
    this.log = opts.logger;
    const clock = opts.clock ?? now;
    this.residents = new Residents(this.store, this.log, {
      maxEntries: opts.config.closedSessionCache ?? 1024,
      maxBytes: opts.config.closedSessionCacheBytes ?? 16_777_216,
    });
    this.fanout = new Fanout(this.log);
    this.policies = new PolicyRegistry(this.store, clock, (all) => this.fanout.policiesChanged(all));
    const writes = new SessionWrites(this.store, this.residents, this.policies, this.fanout, this.log, clock);
    this.lifecycle = new Lifecycle(this.residents, writes, this.log, clock, opts.config.maxSuspendMs);
    this.sendPath = new SendPath({
      store: this.store,
      residents: this.residents,
      policies: this.policies,
      fanout: this.fanout,
      writes,
      lifecycle: this.lifecycle,
      limiters: {
        starts: new SlidingWindowLimiter(opts.config.sessionStartsPerMinute),
        messages: new SlidingWindowLimiter(opts.config.messagesPerMinute),
      },
      maxPayloadBytes: opts.config.maxPayloadBytes,
      log: this.log,
      clock,
      closed: () => this.closed,
    });
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

  // ------------------------------------------- Send, control and expiry

  /** Submit one envelope (the Send RPC). Never throws: the verdict is in the Ack (send.ts). */
  send(identity: Identity | null, input: Envelope): Promise<Ack> {
    return this.sendPath.send(identity, input);
  }

  /** Cancel / Suspend / Resume. Throws ControlError for gRPC-status failures (lifecycle.ts). */
  control(identity: Identity, op: "cancel" | "suspend" | "resume", sessionId: string, reason: string): Promise<Ack> {
    return this.lifecycle.control(identity, op, sessionId, reason);
  }

  /** Expire OPEN sessions whose deadline has passed, even with no traffic. */
  sweep(): void {
    this.lifecycle.sweep();
  }

  // ---------------------------------------------------------------- reads

  getSession(sessionId: string): { metadata: SessionMetadata; initiator: string; participants: ReadonlySet<string> } | undefined {
    const found = this.lifecycle.find(sessionId);
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
