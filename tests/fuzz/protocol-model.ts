// An independent model of which envelopes a MACP runtime must accept, for the
// runtime fuzzer (runtime-fuzzer.ts). Written from PROTOCOL.md (§2 envelope
// rules, §3 session lifecycle and admission order, §4 Handoff, §5 Task, §9
// identity, §10 default policy) for the runtime's configuration under fuzz:
// dev identities, no rate limits, no registered policies. It predicts the
// verdict only (accept, duplicate, reject), not the error code, and updates
// its sessions exactly when it predicts acceptance.
//
// Nothing here calls the runtime's own admission code: a rule the kernel
// gets wrong shows up as a disagreement instead of being copied.
import { fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { CommitmentPayloadSchema, SessionStartPayloadSchema, SignalPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import {
  HandoffAcceptPayloadSchema,
  HandoffContextPayloadSchema,
  HandoffDeclinePayloadSchema,
  HandoffOfferPayloadSchema,
} from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import {
  TaskAcceptPayloadSchema,
  TaskCompletePayloadSchema,
  TaskFailPayloadSchema,
  TaskRejectPayloadSchema,
  TaskRequestPayloadSchema,
  TaskUpdatePayloadSchema,
} from "@/lib/gen/macp/modes/task/v1/task_pb";

export const HANDOFF = "macp.mode.handoff.v1";
export const TASK = "macp.mode.task.v1";
const MAX_ID = 256;
const MAX_TYPE = 128;
const MAX_TTL = 86_400_000;
const MAX_PARTICIPANTS = 1000;

export type Verdict = "accept" | "duplicate" | "reject";

interface Offer {
  target: string;
  by: string;
  state: "offered" | "accepted" | "declined";
}

interface TaskState {
  taskId: string;
  requested: string;
  active: string;
  rejected: Set<string>;
  terminal: boolean;
}

export interface ModelSession {
  readonly id: string;
  readonly mode: string;
  readonly initiator: string;
  readonly participants: ReadonlySet<string>;
  readonly modeVersion: string;
  readonly configurationVersion: string;
  /** Unix ms after which the session is expired. */
  readonly deadline: number;
  state: "open" | "resolved" | "expired";
  readonly ids: Set<string>;
  readonly offers: Map<string, Offer>;
  task: TaskState | null;
  /** Accepted envelopes in order (for the history check). */
  readonly accepted: Envelope[];
}

function decode<D extends DescMessage>(schema: D, bytes: Uint8Array): MessageShape<D> | null {
  try {
    return fromBinary(schema, bytes);
  } catch {
    return null;
  }
}

const blank = (s: string) => s.trim() === "";

/** §2.6: a lowercase UUID v4/v7, or 22+ base64url characters; anything UUID-shaped is judged as a UUID. */
export function validSessionId(id: string): boolean {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) {
    return /^[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id);
  }
  return /^[A-Za-z0-9_-]{22,}$/.test(id);
}

export class ProtocolModel {
  readonly sessions = new Map<string, ModelSession>();

  constructor(private readonly maxPayloadBytes: number) {}

  /**
   * The verdict for `input` sent by `identity` (null: no credentials) at
   * `now`, applying it to the model when it is accepted.
   */
  decide(identity: string | null, input: Envelope, now: number): Verdict {
    const env = { ...input };
    // §2.4 shape, before authentication.
    if (env.macpVersion !== "1.0") return "reject";
    if (env.messageType === "" || env.messageId === "") return "reject";
    if (env.messageId.length > MAX_ID || env.sessionId.length > MAX_ID) return "reject";
    if (env.messageType.length > MAX_TYPE || env.mode.length > MAX_ID) return "reject";
    const ambient = env.messageType === "Signal" || (env.messageType === "Progress" && env.sessionId === "");
    if (env.messageType === "Signal") {
      if (env.sessionId !== "" || !blank(env.mode)) return "reject";
    } else if (ambient) {
      if (!blank(env.mode)) return "reject";
    } else if (env.sessionId === "" || blank(env.mode)) {
      return "reject";
    }
    if (env.payload.length > this.maxPayloadBytes) return "reject";
    // §9: authenticated, and the sender is the caller (an empty sender is filled in).
    if (identity === null) return "reject";
    if (env.sender !== "" && env.sender !== identity) return "reject";
    env.sender = identity;

    if (env.messageType === "Signal") {
      if (env.payload.length === 0) return "accept";
      const sig = decode(SignalPayloadSchema, env.payload);
      return sig && !blank(sig.signalType) ? "accept" : "reject";
    }
    if (env.messageType === "Progress") return "accept"; // advisory, never stored
    if (env.messageType === "SessionStart") return this.start(env, now);
    return this.inSession(env, now);
  }

  private start(env: Envelope, now: number): Verdict {
    if (!validSessionId(env.sessionId)) return "reject";
    if (env.mode !== HANDOFF && env.mode !== TASK) return "reject";
    if (env.payload.length === 0) return "reject";
    const p = decode(SessionStartPayloadSchema, env.payload);
    if (!p) return "reject";
    const ttl = Number(p.ttlMs);
    if (!(ttl >= 1 && ttl <= MAX_TTL)) return "reject";
    if (blank(p.modeVersion) || blank(p.configurationVersion)) return "reject";
    if (p.participants.length === 0 || p.participants.length > MAX_PARTICIPANTS) return "reject";
    const seen = new Set<string>();
    for (const part of p.participants) {
      const t = part.trim();
      if (t === "" || part.length > MAX_ID || seen.has(t)) return "reject";
      seen.add(t);
    }
    if (p.modeVersion !== "1.0.0") return "reject";
    const existing = this.sessions.get(env.sessionId);
    if (existing) return existing.ids.has(env.messageId) ? "duplicate" : "reject";
    if (p.policyVersion !== "" && p.policyVersion !== "policy.default") return "reject"; // nothing is registered
    const participants = new Set(p.participants);
    // Handoff and Task: two or more participants, the initiator among them.
    if (participants.size < 2 || !participants.has(env.sender)) return "reject";
    const ts = Number(env.timestampUnixMs);
    this.sessions.set(env.sessionId, {
      id: env.sessionId,
      mode: env.mode,
      initiator: env.sender,
      participants,
      modeVersion: p.modeVersion,
      configurationVersion: p.configurationVersion,
      deadline: (ts > 0 ? ts : now) + ttl,
      state: "open",
      ids: new Set([env.messageId]),
      offers: new Map(),
      task: null,
      accepted: [env],
    });
    return "accept";
  }

  private inSession(env: Envelope, now: number): Verdict {
    const s = this.sessions.get(env.sessionId);
    if (!s) return "reject";
    if (s.ids.has(env.messageId)) return "duplicate";
    if (env.mode !== s.mode) return "reject";
    if (s.state === "open" && now > s.deadline) s.state = "expired";
    if (s.state !== "open") return "reject";
    const ok = env.messageType === "Commitment" ? this.commitment(s, env) : s.mode === HANDOFF ? this.handoff(s, env) : this.task(s, env);
    if (!ok) return "reject";
    s.ids.add(env.messageId);
    s.accepted.push(env);
    return "accept";
  }

  /** §10 default policy: only the initiator commits; §3.5 commitment fields; §4.6 / §5.6 eligibility. */
  private commitment(s: ModelSession, env: Envelope): boolean {
    if (env.sender !== s.initiator) return false;
    const c = decode(CommitmentPayloadSchema, env.payload);
    if (!c) return false;
    if ([c.commitmentId, c.action, c.authorityScope, c.reason].some(blank)) return false;
    if (c.modeVersion !== s.modeVersion || c.configurationVersion !== s.configurationVersion) return false;
    if (c.policyVersion !== "" && c.policyVersion !== "policy.default") return false;
    if (c.supersedes && (blank(c.supersedes.sessionId) || blank(c.supersedes.commitmentHash))) return false;
    if (/(rejected|failed|declined)$/.test(c.action) && c.outcomePositive) return false;
    if (/(selected|accepted|completed|approved)$/.test(c.action) && !c.outcomePositive) return false;
    if (s.mode === HANDOFF) {
      if (![...s.offers.values()].some((o) => o.state !== "offered")) return false;
    } else if (!s.task?.terminal) {
      return false;
    }
    s.state = "resolved";
    return true;
  }

  /** §4: one outstanding offer at a time, made by the owner to another participant; its target answers once. */
  private handoff(s: ModelSession, env: Envelope): boolean {
    const sender = env.sender;
    switch (env.messageType) {
      case "HandoffOffer": {
        if (sender !== s.initiator) return false;
        const p = decode(HandoffOfferPayloadSchema, env.payload);
        if (!p || blank(p.handoffId) || s.offers.has(p.handoffId)) return false;
        if (p.targetParticipant === "" || !s.participants.has(p.targetParticipant) || p.targetParticipant === sender) return false;
        if ([...s.offers.values()].some((o) => o.state !== "declined")) return false;
        s.offers.set(p.handoffId, { target: p.targetParticipant, by: sender, state: "offered" });
        return true;
      }
      case "HandoffContext": {
        if (!s.participants.has(sender)) return false;
        const p = decode(HandoffContextPayloadSchema, env.payload);
        const offer = p ? s.offers.get(p.handoffId) : undefined;
        return offer !== undefined && p?.handoffId !== "" && offer.by === sender;
      }
      case "HandoffAccept":
      case "HandoffDecline": {
        if (!s.participants.has(sender)) return false;
        const accept = env.messageType === "HandoffAccept";
        const p = accept ? decode(HandoffAcceptPayloadSchema, env.payload) : decode(HandoffDeclinePayloadSchema, env.payload);
        if (!p || p.handoffId === "") return false;
        const offer = s.offers.get(p.handoffId);
        if (!offer || offer.target !== sender || offer.state !== "offered") return false;
        const by = "acceptedBy" in p ? p.acceptedBy : p.declinedBy;
        if (by !== "" && by !== sender) return false;
        offer.state = accept ? "accepted" : "declined";
        return true;
      }
      default:
        return false;
    }
  }

  /** §5 under the default policy: one task; the named (or any non-requester) participant takes it; no reassignment. */
  private task(s: ModelSession, env: Envelope): boolean {
    const sender = env.sender;
    const t = s.task;
    const mayRespond = (task: TaskState) => (task.requested !== "" ? sender === task.requested : sender !== s.initiator);
    const sameTask = (id: string) => t !== null && id !== "" && id === t.taskId;
    switch (env.messageType) {
      case "TaskRequest": {
        if (sender !== s.initiator) return false;
        const p = decode(TaskRequestPayloadSchema, env.payload);
        if (!p || t || blank(p.taskId)) return false;
        if (p.requestedAssignee !== "" && !s.participants.has(p.requestedAssignee)) return false;
        s.task = { taskId: p.taskId, requested: p.requestedAssignee, active: "", rejected: new Set(), terminal: false };
        return true;
      }
      case "TaskAccept": {
        if (!s.participants.has(sender)) return false;
        const p = decode(TaskAcceptPayloadSchema, env.payload);
        if (!p || !t || !sameTask(p.taskId)) return false;
        if (t.active !== "" || t.rejected.size > 0) return false;
        if ((p.assignee !== "" && p.assignee !== sender) || !mayRespond(t)) return false;
        t.active = sender;
        return true;
      }
      case "TaskReject": {
        if (!s.participants.has(sender)) return false;
        const p = decode(TaskRejectPayloadSchema, env.payload);
        if (!p || !t || !sameTask(p.taskId)) return false;
        if (t.active !== "") return false; // the active assignee may not reject, nobody else may either
        if ((p.assignee !== "" && p.assignee !== sender) || !mayRespond(t) || t.rejected.has(sender)) return false;
        t.rejected.add(sender);
        return true;
      }
      case "TaskUpdate": {
        if (!s.participants.has(sender)) return false;
        const p = decode(TaskUpdatePayloadSchema, env.payload);
        return p !== null && t !== null && sameTask(p.taskId) && !t.terminal && sender === t.active;
      }
      case "TaskComplete":
      case "TaskFail": {
        if (!s.participants.has(sender)) return false;
        const p =
          env.messageType === "TaskComplete" ? decode(TaskCompletePayloadSchema, env.payload) : decode(TaskFailPayloadSchema, env.payload);
        if (!p || !t || !sameTask(p.taskId) || t.terminal || sender !== t.active) return false;
        if (p.assignee !== "" && p.assignee !== sender) return false;
        t.terminal = true;
        return true;
      }
      default:
        return false;
    }
  }
}
