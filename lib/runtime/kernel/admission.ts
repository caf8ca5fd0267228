// Admission rules, in the reference order of PROTOCOL.md §2.4 (shape), §9
// (caller), §3.1 (SessionStart) and §3.3 (steps 6–9, in a session), and the
// replay of stored records through the same rules. Pure with respect to the
// kernel: they read and change only the envelope and session passed in; the
// kernel decides what is resident, what is written and who is told.
import { fromBinary } from "@bufbuild/protobuf";
import { CORE_TYPES, DEFAULT_POLICY_ID, MACP_VERSION, MAX_PARTICIPANTS, MAX_TTL_MS, MODE_VERSION } from "@/lib/macp/constants";
import { isValidSessionId } from "@/lib/macp/ids";
import { leanEnvelope } from "@/lib/macp/projections/summary";
import { EnvelopeSchema, SessionState, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import {
  CommitmentPayloadSchema,
  SessionResumePayloadSchema,
  SessionStartPayloadSchema,
  SignalPayloadSchema,
  type SessionStartPayload,
} from "@/lib/gen/macp/v1/core_pb";
import { PolicyDescriptorSchema } from "@/lib/gen/macp/v1/policy_pb";
import type { Identity } from "../auth";
import { reject } from "../errors";
import { MODES, type AnyMode } from "../modes";
import { bindPolicy, DEFAULT_POLICY, hasCommitmentAuthority } from "../policy";
import type { SlidingWindowLimiter } from "../rate-limit";
import type { SessionIndexEntry, Store, StoredRecord } from "../store/types";
import { isResidentStatus, StoreCorruptionError } from "../store/types";
import { createSession, toMs, type Session } from "./session";

const MAX_ID_CHARS = 256;
const MAX_TYPE_CHARS = 128;

/** Shape checks of §2.4, which run before authentication. */
export function checkShape(env: Envelope, maxPayloadBytes: number): void {
  if (env.macpVersion !== MACP_VERSION)
    reject("UNSUPPORTED_PROTOCOL_VERSION", `macp_version must be "${MACP_VERSION}", got "${env.macpVersion}"`);
  if (env.messageType === "" || env.messageId === "") reject("INVALID_ENVELOPE", "message_type and message_id must not be empty");
  if (env.messageId.length > MAX_ID_CHARS) reject("INVALID_ENVELOPE", `message_id is longer than ${MAX_ID_CHARS} characters`);
  if (env.sessionId.length > MAX_ID_CHARS) reject("INVALID_ENVELOPE", `session_id is longer than ${MAX_ID_CHARS} characters`);
  if (env.messageType.length > MAX_TYPE_CHARS || env.mode.length > MAX_ID_CHARS)
    reject("INVALID_ENVELOPE", "message_type or mode is too long");
  const blankMode = env.mode.trim() === "";
  if (env.messageType === CORE_TYPES.Signal) {
    if (env.sessionId !== "" || !blankMode) reject("INVALID_ENVELOPE", "a Signal must have an empty session_id and mode");
  } else if (env.messageType === CORE_TYPES.Progress && env.sessionId === "") {
    if (!blankMode) reject("INVALID_ENVELOPE", "an ambient Progress must have an empty mode");
  } else if (env.sessionId === "" || blankMode) {
    reject("INVALID_ENVELOPE", "session_id and mode must not be empty");
  }
  if (env.payload.length > maxPayloadBytes) {
    reject("PAYLOAD_TOO_LARGE", `payload is ${env.payload.length} bytes; the limit is ${maxPayloadBytes}`);
  }
}

/**
 * Authentication, sender binding, identity flags and rate limits (§9). Binds
 * `env.sender` to the authenticated identity.
 */
export function checkCaller(
  identity: Identity | null,
  env: Envelope,
  at: number,
  limiters: { starts: SlidingWindowLimiter; messages: SlidingWindowLimiter },
): asserts identity is Identity {
  if (!identity) return reject("UNAUTHENTICATED", "no valid credentials: send Authorization: Bearer <token>");
  if (env.sender !== "" && env.sender !== identity.sender) {
    reject("UNAUTHENTICATED", `sender "${env.sender}" does not match the authenticated identity "${identity.sender}"`);
  }
  env.sender = identity.sender;
  if (identity.isObserver) reject("FORBIDDEN", `${identity.sender} is an observer and may not send`);
  if (identity.allowedModes.length > 0 && !identity.allowedModes.includes(env.mode)) {
    reject("FORBIDDEN", `${identity.sender} may not use mode "${env.mode}"`);
  }
  const start = env.messageType === CORE_TYPES.SessionStart;
  if (start && !identity.canStartSessions) reject("FORBIDDEN", `${identity.sender} may not start sessions`);
  const limiter = start ? limiters.starts : limiters.messages;
  if (!limiter.tryAcquire(identity.sender, at)) reject("RATE_LIMITED", `rate limit exceeded for ${identity.sender}`);
}

/** A Signal or an ambient Progress: checked here, fanned out by the kernel, never stored. */
export function checkAmbient(env: Envelope): void {
  if (env.messageType !== CORE_TYPES.Signal || env.payload.length === 0) return;
  let sig;
  try {
    sig = fromBinary(SignalPayloadSchema, env.payload);
  } catch {
    reject("INVALID_ENVELOPE", "payload is not a valid SignalPayload");
  }
  if (sig && sig.signalType.trim() === "") reject("INVALID_ENVELOPE", "signal_type must not be blank");
}

/** The SessionStart's own checks (§3.1), before the session id is looked up. */
export function checkStart(env: Envelope): { handler: AnyMode; payload: SessionStartPayload } {
  if (!isValidSessionId(env.sessionId)) {
    reject("INVALID_SESSION_ID", "session_id must be a lowercase UUID v4/v7 or at least 22 characters of [A-Za-z0-9_-]");
  }
  const handler = MODES.get(env.mode);
  if (!handler)
    return reject("MODE_NOT_SUPPORTED", `mode "${env.mode}" is not supported by this runtime (supported: ${[...MODES.keys()].join(", ")})`);
  if (env.payload.length === 0) reject("INVALID_ENVELOPE", "SessionStart payload must not be empty");
  let p: SessionStartPayload;
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
  return { handler, payload: p };
}

/** A Commitment's payload checks (§3.3 step 8) against the session it binds. */
function checkCommitment(s: Session, env: Envelope) {
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
  return c;
}

/**
 * Authority, validation and state change for one non-start envelope (§3.3
 * steps 6–9). Used by admission and by replay. Returns true if it resolved
 * the session (its state is then RESOLVED; the kernel drops it from the open set).
 */
export function applyInSession(s: Session, env: Envelope, at: number): boolean {
  const sender = env.sender;
  const isParticipant = sender === s.initiator || s.ctx.participants.has(sender);
  let resolved = false;
  if (env.messageType === CORE_TYPES.Commitment) {
    if (!hasCommitmentAuthority(s.policy.rules, sender, s.initiator, s.ctx.participants)) {
      reject("FORBIDDEN", `${sender} has no commitment authority under policy ${s.policy.descriptor.policyId}`);
    }
    const c = checkCommitment(s, env);
    s.modeState = s.handler.commit(s.modeState, env, c, s.ctx);
    s.state = SessionState.RESOLVED;
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

/** Apply one stored record to the session it belongs to (the first one creates it). */
function replay(s: Session | undefined, r: StoredRecord): Session {
  const env = fromBinary(EnvelopeSchema, r.envelope);
  if (!s) {
    if (r.kind !== "envelope" || env.messageType !== CORE_TYPES.SessionStart) throw new Error("the first record is not a SessionStart");
    if (r.seq !== 1) throw new Error(`SessionStart has sequence ${r.seq}`);
    const policy = r.boundPolicy ? bindPolicy(fromBinary(PolicyDescriptorSchema, r.boundPolicy), env.mode) : DEFAULT_POLICY;
    return createSession(env, policy, r.recvMs);
  }
  if (r.kind === "envelope" && env.messageType === CORE_TYPES.SessionStart) throw new Error("duplicate SessionStart");
  s.touchedMs = Math.max(s.touchedMs, r.recvMs);
  switch (r.kind) {
    case "envelope": {
      if (s.state !== SessionState.OPEN) throw new Error(`envelope recorded while session was ${SessionState[s.state]}`);
      if (r.seq !== s.seq + 1) throw new Error(`sequence ${r.seq} follows ${s.seq}`);
      applyInSession(s, env, r.recvMs);
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

/** Rebuild one session from its records (read lazily, page by page), checked against its index row. */
export function replaySession(store: Store, entry: SessionIndexEntry): Session {
  let s: Session | undefined;
  for (const r of store.sessionRecords(entry.sessionId)) {
    try {
      s = replay(s, r);
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
