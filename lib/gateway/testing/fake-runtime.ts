// An in-memory RuntimeReader for unit tests of the gateway: sessions with an
// envelope log, lifecycle events, passive subscribe with replay-then-live,
// and knobs to reproduce reference-runtime quirks (double delivery around
// replay, dropped watch streams, slow reads).
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  ParticipantActivitySchema,
  SessionLifecycleEvent_EventType as EventType,
  SessionLifecycleEventSchema,
  SessionMetadataSchema,
  type SessionLifecycleEvent,
  type SessionMetadata,
} from "@/lib/gen/macp/v1/core_pb";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { AsyncQueue } from "@/lib/base/async-queue";
import { sleep } from "@/lib/base/abort";
import type { RuntimeReader } from "../runtime-client";
import type { WatchListRowsResponse } from "@/lib/gen/baton/v1/runtime_catalog_pb";

interface FakeSession {
  id: string;
  mode: string;
  state: SessionState;
  initiator: string;
  participants: string[];
  startedAt: number;
  expiresAt: number;
  log: Envelope[];
  listeners: Set<(env: Envelope | null) => void>;
}

export class FakeRuntime implements RuntimeReader {
  readonly kind = "embedded" as const;
  readonly address = "fake:0";
  private open = 0;
  private readonly sessions = new Map<string, FakeSession>();
  private readonly watchers = new Set<AsyncQueue<SessionLifecycleEvent>>();
  /** Re-send the last replayed envelope once more as "live" (reference runtime race). */
  duplicateAroundReplay = false;
  /** Delay before each GetSession answers. */
  getSessionDelayMs = 0;
  /** ping() fails as an unreachable runtime does (UNAVAILABLE). */
  unreachable = false;
  /** Identities of sessions whose history reads fail with PERMISSION_DENIED. */
  readonly forbidden = new Set<string>();
  calls = { getSession: 0, listSessions: 0, watchSessions: 0, subscribe: 0 };
  /** Highest number of upstream streams open at once. */
  maxOpenStreams = 0;
  /** Delay before a passive subscribe starts replaying. */
  subscribeDelayMs = 0;
  /** Highest number of GetSession calls in flight at once. */
  maxConcurrentGets = 0;
  private gets = 0;

  get openStreams(): number {
    return this.open;
  }

  // ------------------------------------------------------------ scripting

  start(env: Envelope, participants: string[], ttlMs = 60_000): void {
    const s: FakeSession = {
      id: env.sessionId,
      mode: env.mode,
      state: SessionState.OPEN,
      initiator: env.sender,
      participants,
      startedAt: Date.now(),
      expiresAt: Date.now() + ttlMs,
      log: [],
      listeners: new Set(),
    };
    this.sessions.set(s.id, s);
    this.append(env);
    this.lifecycle(s, EventType.CREATED);
  }

  append(env: Envelope): void {
    const s = this.must(env.sessionId);
    s.log.push(env);
    for (const l of [...s.listeners]) l(env);
  }

  /** Accept an envelope now but broadcast it only when the returned function is called. */
  appendHeld(env: Envelope): () => void {
    const s = this.must(env.sessionId);
    s.log.push(env);
    return () => {
      for (const l of [...s.listeners]) l(env);
    };
  }

  setState(sessionId: string, state: SessionState, type: EventType): void {
    const s = this.must(sessionId);
    s.state = state;
    this.lifecycle(s, type);
  }

  /** End every WatchSessions stream normally (as a runtime does for a slow watcher). */
  dropWatchers(): void {
    for (const q of this.watchers) q.close();
  }

  /** Fail every passive subscription of a session. */
  failSubscriptions(sessionId: string): void {
    const s = this.must(sessionId);
    for (const l of [...s.listeners]) l(null);
  }

  metadataOf(sessionId: string): SessionMetadata {
    return this.meta(this.must(sessionId));
  }

  // ------------------------------------------------------------ RuntimeReader

  async getSession(sessionId: string, signal?: AbortSignal): Promise<SessionMetadata> {
    this.calls.getSession++;
    this.gets++;
    this.maxConcurrentGets = Math.max(this.maxConcurrentGets, this.gets);
    try {
      if (this.getSessionDelayMs > 0) await sleep(this.getSessionDelayMs, signal);
      if (signal?.aborted) throw new ConnectError("aborted", Code.Canceled);
      const s = this.sessions.get(sessionId);
      if (!s) throw new ConnectError(`session ${sessionId} does not exist`, Code.NotFound);
      return this.meta(s);
    } finally {
      this.gets--;
    }
  }

  async ping(): Promise<void> {
    if (this.unreachable) throw new ConnectError("connect ECONNREFUSED fake:0", Code.Unavailable);
  }

  async listSessions(): Promise<SessionMetadata[]> {
    this.calls.listSessions++;
    return [...this.sessions.values()].map((s) => this.meta(s));
  }

  /** A plain MACP runtime: Baton's list-row feed is not there (the console folds histories itself). */
  // eslint-disable-next-line require-yield
  async *watchListRows(): AsyncGenerator<WatchListRowsResponse> {
    throw new ConnectError("baton.v1.RuntimeCatalogService is not implemented", Code.Unimplemented);
  }

  async *watchSessions(signal: AbortSignal): AsyncGenerator<SessionLifecycleEvent> {
    this.calls.watchSessions++;
    const q = new AsyncQueue<SessionLifecycleEvent>();
    this.watchers.add(q);
    const onAbort = () => q.close();
    signal.addEventListener("abort", onAbort, { once: true });
    for (const s of this.sessions.values()) {
      q.push(
        create(SessionLifecycleEventSchema, { eventType: EventType.CREATED, session: this.meta(s), observedAtUnixMs: BigInt(s.startedAt) }),
      );
    }
    this.open++;
    try {
      for await (const ev of q) {
        if (signal.aborted) break;
        yield ev;
      }
      if (signal.aborted) throw new ConnectError("aborted", Code.Canceled);
    } finally {
      this.open--;
      signal.removeEventListener("abort", onAbort);
      this.watchers.delete(q);
    }
  }

  async *subscribeSession(sessionId: string, afterSequence: number, signal: AbortSignal): AsyncGenerator<Envelope> {
    this.calls.subscribe++;
    const s = this.sessions.get(sessionId);
    if (!s) throw new ConnectError(`session ${sessionId} does not exist`, Code.NotFound);
    if (this.forbidden.has(sessionId))
      throw new ConnectError("FORBIDDEN: caller is not a declared participant or observer", Code.PermissionDenied);
    const q = new AsyncQueue<Envelope | null>();
    const listener = (env: Envelope | null) => q.push(env);
    s.listeners.add(listener);
    const onAbort = () => q.close();
    signal.addEventListener("abort", onAbort, { once: true });
    const history = s.log.slice(afterSequence);
    this.open++;
    this.maxOpenStreams = Math.max(this.maxOpenStreams, this.open);
    try {
      if (this.subscribeDelayMs > 0) await sleep(this.subscribeDelayMs, signal);
      for (const env of history) yield env;
      if (this.duplicateAroundReplay && history.length > 0) yield history[history.length - 1] as Envelope;
      for await (const env of q) {
        if (env === null) throw new ConnectError("subscription failed", Code.Unavailable);
        yield env;
      }
      if (signal.aborted) throw new ConnectError("aborted", Code.Canceled);
    } finally {
      this.open--;
      s.listeners.delete(listener);
      signal.removeEventListener("abort", onAbort);
    }
  }

  close(): void {
    for (const q of this.watchers) q.close();
  }

  // ------------------------------------------------------------ internals

  private must(id: string): FakeSession {
    const s = this.sessions.get(id);
    if (!s) throw new Error(`no fake session ${id}`);
    return s;
  }

  private meta(s: FakeSession): SessionMetadata {
    const activity = new Map<string, { count: number; last: number }>();
    for (const env of s.log.slice(1)) {
      const a = activity.get(env.sender) ?? { count: 0, last: 0 };
      a.count++;
      a.last = Math.max(a.last, Number(env.timestampUnixMs));
      activity.set(env.sender, a);
    }
    return create(SessionMetadataSchema, {
      sessionId: s.id,
      mode: s.mode,
      state: s.state,
      startedAtUnixMs: BigInt(s.startedAt),
      expiresAtUnixMs: BigInt(s.expiresAt),
      modeVersion: "1.0.0",
      configurationVersion: "config.default",
      policyVersion: "policy.default",
      participants: s.participants,
      participantActivity: [...activity].map(([participantId, a]) =>
        create(ParticipantActivitySchema, { participantId, messageCount: a.count, lastMessageAtUnixMs: BigInt(a.last) }),
      ),
      initiator: s.initiator,
    });
  }

  private lifecycle(s: FakeSession, type: EventType): void {
    const ev = create(SessionLifecycleEventSchema, { eventType: type, session: this.meta(s), observedAtUnixMs: BigInt(Date.now()) });
    for (const q of this.watchers) q.push(ev);
  }
}
