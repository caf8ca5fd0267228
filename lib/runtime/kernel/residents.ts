// What is resident: the sessions in use (OPEN, SUSPENDED, and terminal ones
// whose last record is not yet durable), the open set the TTL sweep walks,
// and a bounded cache of recently closed sessions in front of the store's
// session index. A restart, or a reload after a storage failure, rebuilds the
// resident sessions from the index and their own records, nothing else.
import { fromBinary } from "@bufbuild/protobuf";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import { PolicyDescriptorSchema } from "@/lib/gen/macp/v1/policy_pb";
import type { Identity } from "../auth";
import { bindPolicy, DEFAULT_POLICY, type BoundPolicy } from "../policy";
import type { SessionIndexEntry, SessionSummary, Store } from "../store/types";
import { isResidentStatus, StoreCorruptionError } from "../store/types";
import { replaySession } from "./admission";
import type { Logger } from "./fanout";
import { INDEX_PAGE_ROWS } from "./snapshot";
import {
  ClosedCache,
  closedFromEntry,
  closedFromResident,
  isTerminal,
  sessionSummary,
  STATUS_OF,
  type ClosedSession,
  type Session,
} from "./session";

export class Residents {
  private sessions = new Map<string, Session>();
  private openSet = new Set<Session>();
  private readonly cache: ClosedCache;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    cache: { maxEntries: number; maxBytes: number },
  ) {
    this.cache = new ClosedCache(cache.maxEntries, cache.maxBytes);
  }

  get size(): number {
    return this.sessions.size;
  }

  get openCount(): number {
    return this.openSet.size;
  }

  get cached(): { entries: number; bytes: number } {
    return { entries: this.cache.size, bytes: this.cache.heldBytes };
  }

  /** OPEN sessions, as of now (a copy: the caller may change states while it walks them). */
  open(): Session[] {
    return [...this.openSet];
  }

  /** How many OPEN sessions pass `test`, without copying the set (admission asks on every SessionStart of a capped identity). */
  countOpen(test: (s: Session) => boolean): number {
    let n = 0;
    for (const s of this.openSet) if (test(s)) n++;
    return n;
  }

  all(): IterableIterator<Session> {
    return this.sessions.values();
  }

  get(sessionId: string): Session | undefined {
    return this.sessions.get(sessionId);
  }

  has(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** A new session, admitted (not yet durable). */
  add(s: Session): void {
    this.sessions.set(s.id, s);
    this.openSet.add(s);
  }

  private keep(s: Session): void {
    this.sessions.set(s.id, s);
    if (s.state === SessionState.OPEN) this.openSet.add(s);
  }

  setState(s: Session, state: SessionState): void {
    s.state = state;
    if (state === SessionState.OPEN) this.openSet.add(s);
    else this.openSet.delete(s);
  }

  /** The session resolved in memory: it is no longer open. */
  resolved(s: Session): void {
    this.openSet.delete(s);
  }

  /**
   * The session's terminal record is durable: it leaves memory. Later reads
   * find it in the store (and in the cache of recently closed sessions).
   */
  retire(s: Session): void {
    if (this.sessions.get(s.id) !== s) return; // replaced by a reload after a storage failure
    this.sessions.delete(s.id);
    this.openSet.delete(s);
    this.cache.put(closedFromResident(s));
  }

  /** A closed session from the cache or the store's session index; undefined if there is none. */
  closed(sessionId: string): ClosedSession | undefined {
    const hit = this.cache.get(sessionId);
    if (hit) return hit;
    const entry = this.store.getSession(sessionId);
    if (!entry) return undefined;
    if (isResidentStatus(entry.status)) {
      // The index says it is open but it is not in memory (a reload after a
      // storage failure stopped early): rebuild it from its log.
      if (this.sessions.has(sessionId)) return undefined;
      const s = replaySession(this.store, entry);
      this.log.warn({ sessionId }, "open session was not resident; rebuilt it from storage");
      if (!isTerminal(s.state)) {
        this.keep(s);
        return undefined;
      }
    }
    const c = closedFromEntry(entry);
    this.cache.put(c);
    return c;
  }

  /** The bound policy of a closed session, from its SessionStart record. */
  closedPolicy(c: ClosedSession): BoundPolicy {
    if (c.policy) return c.policy;
    const start = this.store.readSession(c.id, 0, { maxRecords: 1 })[0];
    if (!start) throw new StoreCorruptionError(`session ${c.id} is in the session index but has no SessionStart record`);
    c.policy = start.boundPolicy ? bindPolicy(fromBinary(PolicyDescriptorSchema, start.boundPolicy), c.mode) : DEFAULT_POLICY;
    return c.policy;
  }

  /** Sequence of the newest envelope that is durable and published (0 if there is no such session). */
  durableHead(sessionId: string): number {
    const s = this.sessions.get(sessionId);
    if (s) return s.durableSeq;
    return this.closed(sessionId)?.lastSeq ?? this.sessions.get(sessionId)?.durableSeq ?? 0;
  }

  /** Whether `identity` may read the session (initiator, participant, observer). */
  canRead(identity: Identity, sessionId: string): boolean {
    const found = this.sessions.get(sessionId) ?? this.closed(sessionId) ?? this.sessions.get(sessionId);
    if (!found) return false;
    const participants = "handler" in found ? found.ctx.participants : found.participants;
    return identity.isObserver || identity.sender === found.initiator || participants.has(identity.sender);
  }

  exists(sessionId: string): boolean {
    return this.sessions.has(sessionId) || this.closed(sessionId) !== undefined || this.sessions.has(sessionId);
  }

  private clear(): void {
    this.sessions = new Map();
    this.openSet = new Set();
    this.cache.clear();
  }

  /**
   * Initial load: rebuild the resident sessions from the session index and
   * their own records, writing the index rows a store migrated from schema v2
   * lacks (and repairing a row that disagrees with its log). Returns how many
   * rows it wrote.
   */
  async load(): Promise<number> {
    this.clear();
    let indexed = 0;
    for (const page of this.residentPages()) {
      const writes: { summary: SessionSummary; messageIds: string[] }[] = [];
      for (const entry of page) {
        const s = replaySession(this.store, entry);
        const status = STATUS_OF[s.state] ?? "open";
        if (entry.status === null) {
          writes.push({ summary: sessionSummary(s), messageIds: [...s.dedup] });
        } else if (entry.status !== status) {
          this.log.error(
            { sessionId: s.id, index: entry.status, log: status },
            "session index disagreed with the log; repairing the index from the log",
          );
          writes.push({ summary: sessionSummary(s), messageIds: [] });
        }
        if (!isTerminal(s.state)) this.keep(s);
      }
      if (writes.length > 0) {
        await this.store.indexSessions(writes);
        indexed += writes.length;
      }
    }
    return indexed;
  }

  /** After a storage failure: replace what is held with what the store holds. */
  reload(): void {
    this.clear();
    for (const page of this.residentPages()) {
      for (const entry of page) {
        const s = replaySession(this.store, entry);
        if (!isTerminal(s.state)) this.keep(s);
      }
    }
  }

  /** The index rows of OPEN and SUSPENDED sessions, a page at a time. */
  private *residentPages(): Generator<SessionIndexEntry[], void, undefined> {
    for (let after = 0; ;) {
      const page = this.store.listSessions({ afterPosition: after, limit: INDEX_PAGE_ROWS, residentOnly: true });
      if (page.length === 0) return;
      yield page;
      after = (page[page.length - 1] as SessionIndexEntry).firstPosition;
    }
  }
}
