// What the kernel holds of one session: the resident form (OPEN, SUSPENDED, or
// terminal while its last record is being written) and the closed form
// (answered from the store's session index), with the pure functions that
// build and describe them. No kernel state here: the kernel owns the maps.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import {
  ParticipantActivitySchema,
  SessionMetadataSchema,
  SessionStartPayloadSchema,
  type SessionMetadata,
} from "@/lib/gen/macp/v1/core_pb";
import { leanEnvelope, nextActors, SessionFold, toSummary } from "@/lib/macp/projections/summary";
import { MacpRejection } from "../errors";
import { MODES, type AnyMode } from "../modes";
import type { SessionContext } from "../modes/types";
import { encodeListSummary } from "../list-row-codec";
import type { BoundPolicy } from "../policy";
import type { ListRow, SessionIndexEntry, SessionStatus, SessionSummary } from "../store/types";
import { StoreCorruptionError } from "../store/types";

export interface Activity {
  count: number;
  lastMs: number;
}

export interface Session {
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

/** A terminal session, answered from the store's session index (never written again). */
export interface ClosedSession {
  readonly id: string;
  readonly mode: string;
  readonly state: SessionState;
  readonly initiator: string;
  readonly participants: ReadonlySet<string>;
  readonly metadata: SessionMetadata;
  /** Sequence of its last accepted envelope: the end of its history. */
  readonly lastSeq: number;
  /** Approximate memory held by this entry, for the cache's byte bound. */
  readonly bytes: number;
  /** Its bound policy (authority for Cancel/Suspend/Resume); read from its SessionStart record when first needed. */
  policy?: BoundPolicy;
}

export const STATUS_OF: Partial<Record<SessionState, SessionStatus>> = {
  [SessionState.OPEN]: "open",
  [SessionState.SUSPENDED]: "suspended",
  [SessionState.RESOLVED]: "resolved",
  [SessionState.EXPIRED]: "expired",
  [SessionState.CANCELLED]: "cancelled",
};

export const isTerminal = (state: SessionState): boolean =>
  state === SessionState.RESOLVED || state === SessionState.EXPIRED || state === SessionState.CANCELLED;

export const toMs = (v: bigint): number => Number(v);

/** A new resident session from its (already validated) SessionStart. */
export function createSession(env: Envelope, policy: BoundPolicy, recvMs: number): Session {
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

/** The session's metadata as of now (GetSession, lifecycle events, its index row). */
export function sessionMetadata(s: Session): SessionMetadata {
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

/** The session's row in the store's session index, as of now. */
export function sessionSummary(s: Session): SessionSummary {
  return {
    sessionId: s.id,
    status: STATUS_OF[s.state] ?? "open",
    activityMs: s.touchedMs,
    metadata: toBinary(SessionMetadataSchema, sessionMetadata(s)),
  };
}

/** The session's list row as of its newest admitted record. */
export function residentListRow(s: Session): ListRow {
  const meta = sessionMetadata(s);
  // Read and dropped right here (toSummary and nextActors copy what they keep), so the fold's batch goes on.
  const view = s.fold.peek();
  // Agents' timestamps are clamped to the server time of the newest record: the row follows from the log.
  const c = s.policy.rules.commitment;
  const committers = c.authority === "designated_role" ? c.designatedRoles : undefined;
  const summary = toSummary(meta, view, s.fold.count, s.touchedMs, committers);
  return {
    sessionId: s.id,
    summary: encodeListSummary(summary),
    nextActors: nextActors(meta, view, committers),
    final: isTerminal(s.state),
  };
}

/** Approximate bytes a decoded SessionMetadata holds (for the closed-session cache). */
export function closedBytes(m: SessionMetadata): number {
  let n = 512 + m.sessionId.length + m.mode.length + m.initiator.length + m.policyVersion.length + m.contextId.length;
  for (const p of m.participants) n += 64 + 2 * p.length;
  for (const a of m.participantActivity) n += 96 + 2 * a.participantId.length;
  for (const k of m.extensionKeys) n += 64 + 2 * k.length;
  return n;
}

/** A closed session as it leaves memory. */
export function closedFromResident(s: Session): ClosedSession {
  const metadata = sessionMetadata(s);
  return {
    id: s.id,
    mode: s.mode,
    state: s.state,
    initiator: s.initiator,
    participants: s.ctx.participants,
    metadata,
    lastSeq: s.durableSeq,
    bytes: closedBytes(metadata),
    policy: s.policy,
  };
}

/** The metadata stored in a session's index row, checked against the row. */
export function decodeMetadata(entry: SessionIndexEntry): SessionMetadata {
  if (entry.metadata === null) throw new StoreCorruptionError(`session ${entry.sessionId}: its index row has no summary`);
  let m: SessionMetadata;
  try {
    m = fromBinary(SessionMetadataSchema, entry.metadata);
  } catch (e) {
    throw new StoreCorruptionError(`session ${entry.sessionId}: its index summary cannot be decoded: ${(e as Error).message}`);
  }
  if (m.sessionId !== entry.sessionId || STATUS_OF[m.state] !== entry.status) {
    throw new StoreCorruptionError(`session ${entry.sessionId}: its index summary does not match its row`);
  }
  return m;
}

/** A closed session read from its index row. */
export function closedFromEntry(entry: SessionIndexEntry): ClosedSession {
  const metadata = decodeMetadata(entry);
  return {
    id: entry.sessionId,
    mode: metadata.mode,
    state: metadata.state,
    initiator: metadata.initiator,
    participants: new Set(metadata.participants),
    metadata,
    lastSeq: entry.lastSeq,
    bytes: closedBytes(metadata),
  };
}

/**
 * Recently closed sessions, least recently used first out, bounded by count
 * and by approximate bytes (a session's metadata grows with its participants).
 */
export class ClosedCache {
  private readonly entries = new Map<string, ClosedSession>();
  private bytes = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get heldBytes(): number {
    return this.bytes;
  }

  get(id: string): ClosedSession | undefined {
    const c = this.entries.get(id);
    if (c) {
      this.entries.delete(id);
      this.entries.set(id, c);
    }
    return c;
  }

  put(c: ClosedSession): void {
    this.delete(c.id);
    if (this.maxEntries <= 0 || c.bytes > this.maxBytes) return;
    this.entries.set(c.id, c);
    this.bytes += c.bytes;
    for (const [id, old] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.entries.delete(id);
      this.bytes -= old.bytes;
    }
  }

  delete(id: string): void {
    const c = this.entries.get(id);
    if (!c) return;
    this.entries.delete(id);
    this.bytes -= c.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
