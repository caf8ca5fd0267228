// Shared machinery of HandoffSession and TaskSession: session identity and
// bound versions, envelope building (one message_id per call, kept in
// `lastEnvelope` so the exact same message can be resent), SessionStart,
// Commitment with the SDKs' outcome inference, control-plane calls and
// re-reading the history into the projection.

import type { Ack, Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import type { SessionMetadata } from "@/lib/gen/macp/v1/core_pb";
import { CORE_TYPES, DEFAULT_CONFIGURATION_VERSION, DEFAULT_POLICY_ID, MAX_TTL_MS, MODE_VERSION } from "@/lib/macp/constants";
import { isValidSessionId, newSessionId } from "@/lib/macp/ids";
import { inferOutcomePositive } from "@/lib/macp/outcome";
import { buildEnvelope, type PayloadInput } from "@/lib/macp/payloads";
import type { MacpClient, SequencedEnvelope } from "./client";
import { MacpUsageError } from "./errors";
import type { HandoffProjection, TaskProjection } from "./projections";

export interface ModeSessionOptions<P> {
  /** Existing or chosen session id; a fresh UUID v4 by default. */
  sessionId?: string;
  modeVersion?: string;
  configurationVersion?: string;
  /** Policy id the session is (or will be) bound to; default policy.default. */
  policyVersion?: string;
  /**
   * Projection to keep up to date. Pass the same instance to several
   * session objects (one per agent) to share one view in a single process.
   */
  projection?: P;
}

/** Per-message options. */
export interface MessageOptions {
  /** Reuse an id to resend a message safely (the runtime deduplicates, §2.5). */
  messageId?: string;
  /** Envelope timestamp (Unix ms); the current clock by default. */
  timestampMs?: number;
  signal?: AbortSignal;
}

export interface StartInput extends MessageOptions {
  intent: string;
  participants: string[];
  ttlMs: number;
  /** Overrides the constructor's policyVersion. */
  policyVersion?: string;
  configurationVersion?: string;
  /** Opaque id linking the session to outside context (kept, never interpreted). */
  contextId?: string;
  roots?: { uri: string; name?: string }[];
  extensions?: Record<string, Uint8Array>;
}

export interface CommitInput extends MessageOptions {
  /** Outcome verb, e.g. `handoff.accepted` or `task.failed`. */
  action: string;
  reason: string;
  /** Default: the mode's short name ("handoff" / "task"). */
  authorityScope?: string;
  /** Default: a fresh UUID. */
  commitmentId?: string;
  /** Default: inferred from the action (false for …rejected/failed/declined, true otherwise). */
  outcomePositive?: boolean;
  supersedes?: { sessionId: string; commitmentHash: string };
}

export abstract class ModeSession<P extends HandoffProjection | TaskProjection> {
  readonly client: MacpClient;
  readonly sessionId: string;
  readonly projection: P;
  modeVersion: string;
  configurationVersion: string;
  policyVersion: string;
  /** The envelope of the latest call, successful or not; resend it with `retryLast()`. */
  lastEnvelope?: Envelope;

  abstract readonly mode: string;
  protected abstract readonly scopeName: string;

  protected constructor(client: MacpClient, projection: P, options: ModeSessionOptions<P>) {
    if (options.sessionId !== undefined && options.sessionId.trim() === "") {
      throw new MacpUsageError("sessionId must not be empty");
    }
    this.client = client;
    this.sessionId = options.sessionId ?? newSessionId();
    this.projection = projection;
    this.modeVersion = options.modeVersion ?? MODE_VERSION;
    this.configurationVersion = options.configurationVersion ?? DEFAULT_CONFIGURATION_VERSION;
    this.policyVersion = options.policyVersion || DEFAULT_POLICY_ID;
  }

  /** Build, remember and send one envelope of this session. */
  protected async post(messageType: string, payload: PayloadInput, opts: MessageOptions = {}): Promise<Ack> {
    const envelope = buildEnvelope({
      mode: this.mode,
      messageType,
      sessionId: this.sessionId,
      sender: this.client.sender ?? "",
      payload,
      ...(opts.messageId !== undefined ? { messageId: opts.messageId } : {}),
      ...(opts.timestampMs !== undefined ? { timestampMs: opts.timestampMs } : {}),
    });
    this.lastEnvelope = envelope;
    return this.deliver(envelope, opts.signal);
  }

  private async deliver(envelope: Envelope, signal?: AbortSignal): Promise<Ack> {
    const ack = await this.client.send(envelope, signal ? { signal } : {});
    if (ack.ok && !ack.duplicate) this.projection.apply(envelope);
    return ack;
  }

  /**
   * Resend the last envelope unchanged (same message_id), e.g. after a
   * transport error left its fate unknown. A copy the runtime already
   * accepted comes back as `duplicate: true`.
   */
  retryLast(opts: { signal?: AbortSignal } = {}): Promise<Ack> {
    if (!this.lastEnvelope) return Promise.reject(new MacpUsageError("nothing was sent yet"));
    return this.deliver(this.lastEnvelope, opts.signal);
  }

  /** Send the SessionStart; the caller becomes the initiator. */
  async start(input: StartInput): Promise<Ack> {
    if (!isValidSessionId(this.sessionId)) {
      throw new MacpUsageError(`session id ${this.sessionId} is not a lowercase UUID v4/v7 or 22+ base64url characters`);
    }
    if (!Number.isInteger(input.ttlMs) || input.ttlMs < 1 || input.ttlMs > MAX_TTL_MS) {
      throw new MacpUsageError(`ttlMs must be an integer between 1 and ${MAX_TTL_MS} (24 h), got ${input.ttlMs}`);
    }
    if (input.participants.length === 0) throw new MacpUsageError("participants must not be empty");
    if (input.policyVersion !== undefined) this.policyVersion = input.policyVersion || DEFAULT_POLICY_ID;
    if (input.configurationVersion !== undefined) this.configurationVersion = input.configurationVersion;
    return this.post(
      CORE_TYPES.SessionStart,
      {
        intent: input.intent,
        participants: input.participants,
        modeVersion: this.modeVersion,
        configurationVersion: this.configurationVersion,
        policyVersion: this.policyVersion,
        ttlMs: BigInt(input.ttlMs),
        contextId: input.contextId ?? "",
        roots: (input.roots ?? []).map((r) => ({ uri: r.uri, name: r.name ?? "" })),
        extensions: input.extensions ?? {},
      },
      input,
    );
  }

  /**
   * Send the terminal Commitment. `outcomePositive` is inferred from the
   * action like the SDKs do unless given; versions are the session's bound ones.
   */
  async commit(input: CommitInput): Promise<Ack> {
    if (input.action.trim() === "") throw new MacpUsageError("commit needs an action, e.g. handoff.accepted");
    return this.post(
      CORE_TYPES.Commitment,
      {
        commitmentId: input.commitmentId ?? globalThis.crypto.randomUUID(),
        action: input.action,
        authorityScope: input.authorityScope ?? this.scopeName,
        reason: input.reason,
        modeVersion: this.modeVersion,
        policyVersion: this.policyVersion,
        configurationVersion: this.configurationVersion,
        outcomePositive: input.outcomePositive ?? inferOutcomePositive(input.action),
        ...(input.supersedes ? { supersedes: input.supersedes } : {}),
      },
      input,
    );
  }

  /** CancelSession (initiator or commitment authority). Throws MacpAckError if refused. */
  cancel(reason = "", opts: { signal?: AbortSignal } = {}): Promise<Ack> {
    return this.client.cancelSession(this.sessionId, reason, opts);
  }

  suspend(reason = "", opts: { signal?: AbortSignal } = {}): Promise<Ack> {
    return this.client.suspendSession(this.sessionId, reason, opts);
  }

  resume(reason = "", opts: { signal?: AbortSignal } = {}): Promise<Ack> {
    return this.client.resumeSession(this.sessionId, reason, opts);
  }

  /** The runtime's SessionMetadata for this session. */
  metadata(opts: { signal?: AbortSignal } = {}): Promise<SessionMetadata> {
    return this.client.getSession(this.sessionId, opts);
  }

  /**
   * Adopt the versions the runtime bound at SessionStart (needed before
   * committing a session this object did not start).
   */
  async syncVersions(opts: { signal?: AbortSignal } = {}): Promise<SessionMetadata> {
    const meta = await this.metadata(opts);
    if (meta.mode !== this.mode) {
      throw new MacpUsageError(`session ${this.sessionId} is a ${meta.mode} session, not ${this.mode}`);
    }
    this.modeVersion = meta.modeVersion || this.modeVersion;
    this.configurationVersion = meta.configurationVersion || this.configurationVersion;
    this.policyVersion = meta.policyVersion || DEFAULT_POLICY_ID;
    return meta;
  }

  /** Re-read the accepted history and rebuild the projection from it. */
  async refresh(opts: { signal?: AbortSignal } = {}): Promise<SequencedEnvelope[]> {
    const events = await this.client.history(this.sessionId, opts);
    this.projection.reset();
    this.projection.applyAll(events);
    return events;
  }

  /** Accepted envelopes after `afterSequence`, then live ones; each is also applied to the projection. */
  async *events(afterSequence = 0, opts: { signal?: AbortSignal } = {}): AsyncGenerator<SequencedEnvelope> {
    for await (const ev of this.client.subscribe(this.sessionId, afterSequence, opts)) {
      this.projection.apply(ev);
      yield ev;
    }
  }
}
