// The kernel's closed sessions: a terminal session leaves memory once its
// last record is durable and is then answered from the store's session index
// (its decoded summary), with a small cache of recently closed ones in front,
// bounded by count and bytes.
import { fromBinary } from "@bufbuild/protobuf";
import { SessionMetadataSchema, type SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { SessionState } from "@/lib/gen/macp/v1/envelope_pb";
import type { BoundPolicy } from "./policy";
import type { SessionIndexEntry, SessionStatus } from "./store/types";
import { StoreCorruptionError } from "./store/types";

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

/** Tag and length of a length-delimited protobuf field. */
export function lengthDelimitedHead(field: number, length: number): Uint8Array {
  const bytes = [(field << 3) | 2];
  for (let v = length; ; ) {
    if (v < 0x80) {
      bytes.push(v);
      break;
    }
    bytes.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  return Uint8Array.from(bytes);
}

/** Approximate bytes a decoded SessionMetadata holds (for the closed-session cache). */
export function closedBytes(m: SessionMetadata): number {
  let n = 512 + m.sessionId.length + m.mode.length + m.initiator.length + m.policyVersion.length + m.contextId.length;
  for (const p of m.participants) n += 64 + 2 * p.length;
  for (const a of m.participantActivity) n += 96 + 2 * a.participantId.length;
  for (const k of m.extensionKeys) n += 64 + 2 * k.length;
  return n;
}

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
