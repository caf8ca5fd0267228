// Session lifecycle outside of Send: expiry (lazy, on lookup, and by the TTL
// sweep) and the control operations Cancel, Suspend and Resume, for resident
// sessions and, with the same answers, for closed ones. Each state change is
// an annotation in the session's log, written through the kernel's write path.
import { create, toBinary } from "@bufbuild/protobuf";
import { CORE_TYPES } from "@/lib/macp/constants";
import { AckSchema, MACPErrorSchema, SessionState, type Ack } from "@/lib/gen/macp/v1/envelope_pb";
import {
  SessionCancelPayloadSchema,
  SessionLifecycleEvent_EventType as EventType,
  SessionResumePayloadSchema,
  SessionSuspendPayloadSchema,
} from "@/lib/gen/macp/v1/core_pb";
import type { Identity } from "../auth";
import { MacpRejection } from "../errors";
import { hasCommitmentAuthority } from "../policy";
import type { Logger } from "./fanout";
import type { Residents } from "./residents";
import type { ClosedSession, Session } from "./session";
import type { SessionWrites } from "./writes";

export class ControlError extends Error {
  constructor(
    readonly kind: "not_found" | "permission_denied",
    message: string,
  ) {
    super(message);
    this.name = "ControlError";
  }
}

export class Lifecycle {
  constructor(
    private readonly residents: Residents,
    private readonly writes: SessionWrites,
    private readonly log: Logger,
    private readonly clock: () => number,
    /** Cap on a session's cumulative suspension (MACP_MAX_SUSPEND_MS). */
    private readonly maxSuspendMs: number,
  ) {}

  /** Expire a session now: its TtlExpired annotation is written, and once durable it leaves memory. */
  expire(s: Session, at: number): void {
    this.residents.setState(s, SessionState.EXPIRED);
    this.writes
      .writeAnnotation(s, "expire", this.writes.annotation(s, CORE_TYPES.TtlExpired, new Uint8Array(), at), at, () => {
        this.writes.emitLifecycle(EventType.EXPIRED, s);
        this.residents.retire(s);
      })
      .catch((e) => this.log.warn({ err: e, sessionId: s.id }, "could not record expiry; it will be retried"));
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

  /** A resident session (with lazy expiry) or a closed one. */
  find(sessionId: string): Session | ClosedSession | undefined {
    const s = this.lookup(sessionId);
    if (s) return s;
    const c = this.residents.closed(sessionId);
    return c ?? this.residents.get(sessionId);
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
      await this.writes.writeAnnotation(s, "cancel", this.writes.annotation(s, CORE_TYPES.SessionCancel, payload, at), at, () => {
        this.writes.emitLifecycle(EventType.CANCELLED, s);
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
      await this.writes.writeAnnotation(s, "suspend", this.writes.annotation(s, CORE_TYPES.SessionSuspend, payload, at), at, () =>
        this.writes.emitLifecycle(EventType.SUSPENDED, s),
      );
      return this.controlAck(s, true);
    }
    if (s.state !== SessionState.SUSPENDED) {
      return this.controlAck(s, false, new MacpRejection("SESSION_NOT_OPEN", `session is ${SessionState[s.state]}, not SUSPENDED`));
    }
    const banked = Math.max(0, at - s.suspendedAtMs);
    if (s.suspendedTotalMs + banked > this.maxSuspendMs) {
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
    await this.writes.writeAnnotation(s, "resume", this.writes.annotation(s, CORE_TYPES.SessionResume, payload, at), at, () =>
      this.writes.emitLifecycle(EventType.RESUMED, s),
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
}
