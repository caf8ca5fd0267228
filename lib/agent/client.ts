// MacpClient: an agent's connection to any MACP runtime (Baton's embedded one,
// or the Rust reference runtime) over gRPC on HTTP/2, h2c or TLS. Method names
// follow the official SDKs (initialize, send, getSession, cancelSession, …).
//
// Error contract:
// - `send` (and cancel/suspend/resume) resolve with the Ack when it is ok or a
//   duplicate, and throw MacpAckError for a rejected Ack (unless
//   `raiseOnNack: false`);
// - inline StreamSession errors throw MacpStreamError;
// - transport failures and gRPC statuses stay ConnectError.
//
// Reaching the runtime (address, TLS, credentials, the HTTP/2 session) is
// connection.ts; this file is the calls and their retry and error contract.

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Http2SessionManager } from "@connectrpc/connect-node";
import type {
  AgentManifest,
  InitializeResponse,
  MACPRuntimeService,
  ModeDescriptor,
  SessionLifecycleEvent,
  SessionMetadata,
  StreamSessionRequestSchema,
} from "@/lib/gen/macp/v1/core_pb";
import type { Ack, Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import { PolicyDescriptorSchema, type PolicyDescriptor } from "@/lib/gen/macp/v1/policy_pb";
import { MACP_VERSION } from "@/lib/macp/constants";
import type { SessionEvent } from "@/lib/macp/projections/types";
import { AsyncQueue } from "@/lib/base/async-queue";
import { linkedController, sleep } from "@/lib/base/abort";
import { authSender, type AuthConfig } from "./auth";
import { connectRuntime, type ConnectionOptions } from "./connection";
import { MacpAckError, MacpStreamError, MacpUsageError } from "./errors";

export { DEFAULT_RUNTIME_ADDRESS, runtimeBaseUrl, type ConnectionOptions, type TlsOptions } from "./connection";

export interface RetryOptions {
  /** Total attempts per call, the first included. Default 3. */
  attempts: number;
  /** Delay before the first retry; doubles each time. Default 150 ms. */
  backoffMs: number;
}

export interface MacpClientOptions extends ConnectionOptions {
  /** Deadline for unary calls. Default 15 s. */
  defaultTimeoutMs?: number;
  /** Retry policy for Send when the runtime is unreachable or reports INTERNAL_ERROR. */
  retry?: Partial<RetryOptions>;
  clientName?: string;
  clientVersion?: string;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface SendOptions extends CallOptions {
  /** Throw MacpAckError on a rejected Ack (default true). */
  raiseOnNack?: boolean;
}

/** One accepted envelope delivered by `subscribe`, numbered 1..n in acceptance order. */
export interface SequencedEnvelope extends SessionEvent {
  sequence: number;
  envelope: Envelope;
  /** Local receive time (Unix ms). */
  receivedAtMs: number;
}

export interface HistoryOptions extends CallOptions {
  /**
   * When the expected count cannot be derived, stop after this long without a
   * new envelope. Default 400 ms.
   */
  quietMs?: number;
}

export type PolicyInit = MessageInitShape<typeof PolicyDescriptorSchema>;

type Frame = MessageInitShape<typeof StreamSessionRequestSchema>;

export class MacpClient {
  readonly baseUrl: string;
  readonly auth?: AuthConfig;
  readonly secure: boolean;
  /** Filled by `initialize()`. */
  runtimeInfo?: InitializeResponse["runtimeInfo"];
  selectedProtocolVersion?: string;

  private readonly rpc: Client<typeof MACPRuntimeService>;
  private readonly sessionManager: Http2SessionManager;
  private readonly defaultTimeoutMs: number;
  private readonly retry: RetryOptions;
  private readonly clientName: string;
  private readonly clientVersion: string;
  private readonly streams = new Set<AbortController>();
  private closed = false;

  constructor(options: MacpClientOptions = {}) {
    const connection = connectRuntime(options);
    this.baseUrl = connection.baseUrl;
    this.secure = connection.secure;
    this.rpc = connection.rpc;
    this.sessionManager = connection.sessionManager;
    this.auth = options.auth;
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? 15_000;
    this.retry = { attempts: Math.max(1, options.retry?.attempts ?? 3), backoffMs: options.retry?.backoffMs ?? 150 };
    this.clientName = options.clientName ?? "baton-agent";
    this.clientVersion = options.clientVersion ?? "0.1.0";
  }

  /** The identity envelopes are sent as, when the credential names it. */
  get sender(): string | undefined {
    return authSender(this.auth);
  }

  private unary(opts: CallOptions = {}): { signal?: AbortSignal; timeoutMs: number } {
    if (this.closed) throw new MacpUsageError("this MacpClient is closed");
    return { signal: opts.signal, timeoutMs: opts.timeoutMs ?? this.defaultTimeoutMs };
  }

  // ------------------------------------------------------------ lifecycle

  /** Negotiate the protocol version and read the runtime's capabilities (§11.1). */
  async initialize(opts: CallOptions = {}): Promise<InitializeResponse> {
    const res = await this.rpc.initialize(
      {
        supportedProtocolVersions: [MACP_VERSION],
        clientInfo: {
          name: this.clientName,
          title: this.clientName,
          version: this.clientVersion,
          description: "Baton agent client",
          websiteUrl: "",
        },
        capabilities: {
          sessions: { stream: true, listSessions: true, watchSessions: true },
          cancellation: { cancelSession: true },
          policyRegistry: { registerPolicy: true, listPolicies: true, listChanged: true },
        },
      },
      this.unary(opts),
    );
    this.runtimeInfo = res.runtimeInfo;
    this.selectedProtocolVersion = res.selectedProtocolVersion;
    return res;
  }

  /** Close the connection and end every open stream. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ac of this.streams) ac.abort();
    this.streams.clear();
    this.sessionManager.abort();
  }

  // ----------------------------------------------------------------- send

  /**
   * Submit one envelope. Resolves with the Ack when accepted (or a duplicate
   * of an accepted message); a rejected Ack throws MacpAckError. An
   * unreachable runtime or an INTERNAL_ERROR Ack is retried with the *same*
   * envelope, so the runtime deduplicates it by message_id.
   */
  async send(envelope: Envelope, opts: SendOptions = {}): Promise<Ack> {
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= this.retry.attempts;
      let ack: Ack | undefined;
      try {
        ack = (await this.rpc.send({ envelope }, this.unary(opts))).ack;
      } catch (e) {
        if (!last && e instanceof ConnectError && e.code === Code.Unavailable && !opts.signal?.aborted) {
          await sleep(this.retry.backoffMs * 2 ** (attempt - 1), opts.signal);
          continue;
        }
        throw e;
      }
      if (!ack) throw new ConnectError("runtime answered Send without an Ack", Code.Internal);
      if (ack.ok || ack.duplicate) return ack;
      if (!last && ack.error?.code === "INTERNAL_ERROR") {
        await sleep(this.retry.backoffMs * 2 ** (attempt - 1), opts.signal);
        continue;
      }
      if (opts.raiseOnNack === false) return ack;
      throw new MacpAckError(ack);
    }
  }

  // ------------------------------------------------------------- sessions

  async getSession(sessionId: string, opts: CallOptions = {}): Promise<SessionMetadata> {
    const res = await this.rpc.getSession({ sessionId }, this.unary(opts));
    if (!res.metadata) throw new ConnectError(`runtime returned no metadata for ${sessionId}`, Code.Internal);
    return res.metadata;
  }

  async listSessions(opts: CallOptions = {}): Promise<SessionMetadata[]> {
    return (await this.rpc.listSessions({}, this.unary(opts))).sessions;
  }

  /**
   * Lifecycle events: first one CREATED per known session (read the real state
   * from `event.session.state`), then live transitions, until `signal` aborts
   * or the iteration is left.
   */
  async *watchSessions(opts: { signal?: AbortSignal } = {}): AsyncGenerator<SessionLifecycleEvent> {
    const ac = this.track(opts.signal);
    try {
      for await (const res of this.rpc.watchSessions({}, { signal: ac.signal })) {
        if (res.event) yield res.event;
      }
    } catch (e) {
      if (opts.signal?.aborted || (this.closed && ac.signal.aborted)) return;
      throw e;
    } finally {
      this.untrack(ac);
    }
  }

  /**
   * Passive subscribe (§8.1): the accepted history after `afterSequence`, then
   * live envelopes, each numbered explicitly (afterSequence + 1, + 2, …) and
   * deduplicated by message_id (replay and live delivery may overlap). Runs
   * until `signal` aborts or the loop is left; the request side stays open so
   * the runtime keeps the stream alive.
   */
  async *subscribe(sessionId: string, afterSequence = 0, opts: { signal?: AbortSignal } = {}): AsyncGenerator<SequencedEnvelope> {
    if (this.closed) throw new MacpUsageError("this MacpClient is closed");
    const frames = new AsyncQueue<Frame>();
    frames.push({ subscribeSessionId: sessionId, afterSequence: BigInt(afterSequence) });
    const ac = this.track(opts.signal);
    const seen = new Set<string>();
    let sequence = afterSequence;
    try {
      for await (const res of this.rpc.streamSession(frames, { signal: ac.signal })) {
        const r = res.response;
        if (r.case === "error") {
          throw new MacpStreamError(r.value.code, r.value.message, r.value.sessionId || sessionId, r.value.messageId);
        }
        if (r.case !== "envelope") continue;
        const env = r.value;
        if (env.messageId !== "") {
          if (seen.has(env.messageId)) continue;
          seen.add(env.messageId);
        }
        sequence += 1;
        yield { sequence, envelope: env, receivedAtMs: Date.now() };
      }
    } catch (e) {
      if (e instanceof ConnectError && ac.signal.aborted && (opts.signal?.aborted || this.closed)) return;
      throw e;
    } finally {
      frames.close();
      this.untrack(ac);
    }
  }

  /**
   * A snapshot of a session's accepted history (SessionStart first). The
   * expected length comes from the metadata (SessionStart plus every counted
   * participant message); if the runtime's counts do not add up, the read ends
   * after a quiet period instead.
   */
  async history(sessionId: string, opts: HistoryOptions = {}): Promise<SequencedEnvelope[]> {
    const meta = await this.getSession(sessionId, opts);
    const expected = 1 + meta.participantActivity.reduce((n, a) => n + a.messageCount, 0);
    const ac = linkedController(opts.signal);
    const overall = setTimeout(() => ac.abort(), opts.timeoutMs ?? this.defaultTimeoutMs);
    let quiet: ReturnType<typeof setTimeout> | undefined;
    const out: SequencedEnvelope[] = [];
    try {
      for await (const ev of this.subscribe(sessionId, 0, { signal: ac.signal })) {
        out.push(ev);
        if (out.length >= expected) break;
        clearTimeout(quiet);
        quiet = setTimeout(() => ac.abort(), opts.quietMs ?? 400);
      }
    } finally {
      clearTimeout(overall);
      clearTimeout(quiet);
      ac.abort();
    }
    if (opts.signal?.aborted) throw new ConnectError("history read aborted", Code.Canceled);
    if (out.length === 0) throw new ConnectError(`no history received for session ${sessionId}`, Code.DeadlineExceeded);
    return out;
  }

  // -------------------------------------------------------- control plane

  async cancelSession(sessionId: string, reason = "", opts: SendOptions = {}): Promise<Ack> {
    return this.controlAck((await this.rpc.cancelSession({ sessionId, reason }, this.unary(opts))).ack, opts);
  }

  async suspendSession(sessionId: string, reason = "", opts: SendOptions = {}): Promise<Ack> {
    return this.controlAck((await this.rpc.suspendSession({ sessionId, reason }, this.unary(opts))).ack, opts);
  }

  async resumeSession(sessionId: string, reason = "", opts: SendOptions = {}): Promise<Ack> {
    return this.controlAck((await this.rpc.resumeSession({ sessionId, reason }, this.unary(opts))).ack, opts);
  }

  /** Alias of `cancelSession`. */
  cancel(sessionId: string, reason = "", opts: SendOptions = {}): Promise<Ack> {
    return this.cancelSession(sessionId, reason, opts);
  }

  /** Alias of `suspendSession`. */
  suspend(sessionId: string, reason = "", opts: SendOptions = {}): Promise<Ack> {
    return this.suspendSession(sessionId, reason, opts);
  }

  /** Alias of `resumeSession`. */
  resume(sessionId: string, reason = "", opts: SendOptions = {}): Promise<Ack> {
    return this.resumeSession(sessionId, reason, opts);
  }

  private controlAck(ack: Ack | undefined, opts: SendOptions): Ack {
    if (!ack) throw new ConnectError("runtime answered without an Ack", Code.Internal);
    if (!ack.ok && opts.raiseOnNack !== false) throw new MacpAckError(ack);
    return ack;
  }

  // ------------------------------------------------------------- policies

  /** Register a governance policy; `ok: false` carries the runtime's reason (§10.5). */
  async registerPolicy(descriptor: PolicyDescriptor | PolicyInit, opts: CallOptions = {}): Promise<{ ok: boolean; error: string }> {
    const policyDescriptor = create(PolicyDescriptorSchema, descriptor);
    const res = await this.rpc.registerPolicy({ policyDescriptor }, this.unary(opts));
    return { ok: res.ok, error: res.error };
  }

  async unregisterPolicy(policyId: string, opts: CallOptions = {}): Promise<{ ok: boolean; error: string }> {
    const res = await this.rpc.unregisterPolicy({ policyId }, this.unary(opts));
    return { ok: res.ok, error: res.error };
  }

  /** A registered policy; an unknown id throws ConnectError NotFound. */
  async getPolicy(policyId: string, opts: CallOptions = {}): Promise<PolicyDescriptor> {
    const res = await this.rpc.getPolicy({ policyId }, this.unary(opts));
    if (!res.policyDescriptor) throw new ConnectError(`runtime returned no descriptor for ${policyId}`, Code.Internal);
    return res.policyDescriptor;
  }

  /** Policies for `mode` (and those for every mode, "*"), or all when mode is empty. */
  async listPolicies(mode = "", opts: CallOptions = {}): Promise<PolicyDescriptor[]> {
    return (await this.rpc.listPolicies({ mode }, this.unary(opts))).descriptors;
  }

  /** The full policy list now and after every change. */
  async *watchPolicies(opts: { signal?: AbortSignal } = {}): AsyncGenerator<PolicyDescriptor[]> {
    const ac = this.track(opts.signal);
    try {
      for await (const res of this.rpc.watchPolicies({}, { signal: ac.signal })) yield res.descriptors;
    } catch (e) {
      if (opts.signal?.aborted || (this.closed && ac.signal.aborted)) return;
      throw e;
    } finally {
      this.untrack(ac);
    }
  }

  // ------------------------------------------------------------ discovery

  async listModes(opts: CallOptions = {}): Promise<ModeDescriptor[]> {
    return (await this.rpc.listModes({}, this.unary(opts))).modes;
  }

  async getManifest(agentId = "", opts: CallOptions = {}): Promise<AgentManifest | undefined> {
    return (await this.rpc.getManifest({ agentId }, this.unary(opts))).manifest;
  }

  // -------------------------------------------------------------- helpers

  private track(parent?: AbortSignal): AbortController {
    if (this.closed) throw new MacpUsageError("this MacpClient is closed");
    const ac = linkedController(parent);
    this.streams.add(ac);
    return ac;
  }

  private untrack(ac: AbortController): void {
    ac.abort();
    this.streams.delete(ac);
  }
}
