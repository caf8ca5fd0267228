// The Send path: one envelope from the RPC to its Ack, in the reference order
// of PROTOCOL.md §2.4, §3.1 and §3.3 (the rules themselves are admission.ts).
// Signals and Progress are fanned out and never stored; a SessionStart makes
// a resident session; any other envelope goes to its resident session, or is
// answered from what is stored of a closed one (its index row, its message
// ids). An Ack waits until the record is durable (writes.ts); a retry of an
// admitted message gets the same Ack.
import { create, toBinary } from "@bufbuild/protobuf";
import { CORE_TYPES, DEFAULT_POLICY_ID } from "@/lib/macp/constants";
import { AckSchema, EnvelopeSchema, MACPErrorSchema, SessionState, type Ack, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { SessionLifecycleEvent_EventType as EventType } from "@/lib/gen/macp/v1/core_pb";
import { PolicyDescriptorSchema, type PolicyDescriptor } from "@/lib/gen/macp/v1/policy_pb";
import type { Identity } from "../auth";
import { MacpRejection, reject } from "../errors";
import { bindPolicy, DEFAULT_POLICY, type BoundPolicy } from "../policy";
import type { SlidingWindowLimiter } from "../rate-limit";
import type { LogRecord, Store } from "../store/types";
import { applyInSession, checkAmbient, checkCaller, checkShape, checkStart } from "./admission";
import type { Fanout, Logger } from "./fanout";
import type { Lifecycle } from "./lifecycle";
import type { PolicyRegistry } from "./policies";
import type { Residents } from "./residents";
import { createSession } from "./session";
import type { SessionWrites } from "./writes";

function rejection(err: unknown): MacpRejection {
  if (err instanceof MacpRejection) return err;
  return new MacpRejection("INTERNAL_ERROR", `internal error: ${(err as Error)?.message ?? String(err)}`);
}

export interface SendDeps {
  store: Store;
  residents: Residents;
  policies: PolicyRegistry;
  fanout: Fanout;
  writes: SessionWrites;
  lifecycle: Lifecycle;
  limiters: { starts: SlidingWindowLimiter; messages: SlidingWindowLimiter };
  maxPayloadBytes: number;
  log: Logger;
  clock: () => number;
  /** The kernel is shutting down: nothing more is admitted. */
  closed: () => boolean;
}

export class SendPath {
  private readonly store: Store;
  private readonly residents: Residents;
  private readonly writes: SessionWrites;
  private readonly clock: () => number;

  constructor(private readonly deps: SendDeps) {
    this.store = deps.store;
    this.residents = deps.residents;
    this.writes = deps.writes;
    this.clock = deps.clock;
  }

  /** Submit one envelope (the Send RPC). Never throws: the verdict is in the Ack. */
  async send(identity: Identity | null, input: Envelope): Promise<Ack> {
    const env = create(EnvelopeSchema, input);
    try {
      return await this.admit(identity, env);
    } catch (e) {
      const r = rejection(e);
      if (r.code === "INTERNAL_ERROR") this.deps.log.error({ err: e, sessionId: env.sessionId }, "internal error during admission");
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
    if (this.deps.closed()) reject("INTERNAL_ERROR", "runtime is shutting down");
    checkShape(env, this.deps.maxPayloadBytes);
    const at = this.clock();
    checkCaller(identity, env, at, this.deps.limiters);
    if (env.messageType === CORE_TYPES.Signal || env.messageType === CORE_TYPES.Progress) {
      // Signals and Progress are fanned out, never stored (an ambient Progress has no session).
      checkAmbient(env);
      this.deps.fanout.signal(env);
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
      const d = this.deps.policies.registered(policyId);
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
    await this.writes.persist(s, [record], true, () => {
      this.writes.publish(s, 1, env);
      this.writes.emitLifecycle(EventType.CREATED, s);
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
      this.deps.lifecycle.expire(s, at);
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
    await this.writes.persist(s, [record], resolved, () => {
      this.writes.publish(s, seq, env);
      if (resolved) {
        this.writes.emitLifecycle(EventType.RESOLVED, s);
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
}
