// From a generated action to the envelope it sends: the typed payload for
// each message type, the session a slot stands for, and the sender and next
// step chosen from the protocol model's view of the session, so that runs
// reach deep protocol states.
import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { CommitmentPayloadSchema, SessionStartPayloadSchema, SignalPayloadSchema } from "@/lib/gen/macp/v1/core_pb";
import { EnvelopeSchema, type Envelope } from "@/lib/gen/macp/v1/envelope_pb";
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
import { IDS, MODE_TYPES, mutate, type Action, type Caller, type Fields } from "./fuzz-actions";
import { HANDOFF, TASK, type ModelSession, type ProtocolModel } from "./protocol-model";

const bin = <D extends DescMessage>(schema: D, init: MessageInitShape<D>) => toBinary(schema, create(schema, init));

function commitmentAction(mode: string, f: Fields): { action: string; outcomePositive: boolean } {
  const verbs = mode === TASK ? ["task.completed", "task.failed"] : ["handoff.accepted", "handoff.declined"];
  const action = f.action === "positive" ? verbs[0]! : f.action === "negative" ? verbs[1]! : "handoff.noted";
  const positive = f.action !== "negative";
  return { action, outcomePositive: f.outcomeAgrees ? positive : !positive };
}

function payloadFor(type: string, mode: string, f: Fields): Uint8Array {
  switch (type) {
    case "SessionStart":
      return bin(SessionStartPayloadSchema, {
        intent: f.text,
        participants: f.participants,
        modeVersion: f.modeVersion,
        configurationVersion: f.configurationVersion,
        policyVersion: f.policyVersion,
        ttlMs: f.ttl,
      });
    case "Commitment":
      return bin(CommitmentPayloadSchema, {
        commitmentId: f.commitmentId,
        ...commitmentAction(mode, f),
        authorityScope: f.text === "" ? "scope" : f.text,
        reason: "fuzz",
        modeVersion: f.modeVersion,
        configurationVersion: f.configurationVersion,
        policyVersion: f.policyVersion,
        supersedes: f.supersedes ?? undefined,
      });
    case "HandoffOffer":
      return bin(HandoffOfferPayloadSchema, { handoffId: f.handoffId, targetParticipant: f.target, scope: f.text, reason: f.text });
    case "HandoffContext":
      return bin(HandoffContextPayloadSchema, { handoffId: f.handoffId, contentType: "text/plain", context: f.blob });
    case "HandoffAccept":
      return bin(HandoffAcceptPayloadSchema, { handoffId: f.handoffId, acceptedBy: f.by, reason: f.text });
    case "HandoffDecline":
      return bin(HandoffDeclinePayloadSchema, { handoffId: f.handoffId, declinedBy: f.by, reason: f.text });
    case "TaskRequest":
      return bin(TaskRequestPayloadSchema, { taskId: f.taskId, title: f.text, requestedAssignee: f.by, input: f.blob });
    case "TaskAccept":
      return bin(TaskAcceptPayloadSchema, { taskId: f.taskId, assignee: f.by, reason: f.text });
    case "TaskReject":
      return bin(TaskRejectPayloadSchema, { taskId: f.taskId, assignee: f.by, reason: f.text });
    case "TaskUpdate":
      return bin(TaskUpdatePayloadSchema, { taskId: f.taskId, status: f.text, progress: 0.5, partialOutput: f.blob });
    case "TaskComplete":
      return bin(TaskCompletePayloadSchema, { taskId: f.taskId, assignee: f.by, output: f.blob, summary: f.text });
    case "TaskFail":
      return bin(TaskFailPayloadSchema, { taskId: f.taskId, assignee: f.by, errorCode: "E", reason: f.text, retryable: f.outcomeAgrees });
    case "Signal":
      return f.signalType === "" && f.blob.length === 0
        ? new Uint8Array()
        : bin(SignalPayloadSchema, { signalType: f.signalType, data: f.blob });
    default:
      return f.blob;
  }
}

/** One property run's sessions: fresh ids for the slots, and the model. */
export interface Run {
  ids: string[];
  model: ProtocolModel;
  /** One line per action run so far, for the failure report. */
  log: string[];
}

export function sessionLabel(run: Run, id: string): string {
  const slot = run.ids.indexOf(id);
  return slot >= 0 ? `S${slot}` : JSON.stringify(id.length > 40 ? `${id.slice(0, 40)}…` : id);
}

export function envelopeFor(a: Action, run: Run, maxPayload: number): { env: Envelope; identity: string | null } {
  const slotMode = (slot: number) => (slot % 2 === 0 ? HANDOFF : TASK);
  const sessionId = "slot" in a.session ? run.ids[a.session.slot]! : a.session.literal;
  const baseMode = "slot" in a.session ? slotMode(a.session.slot) : HANDOFF;
  const types = MODE_TYPES[baseMode]!;
  const s = run.model.sessions.get(sessionId);
  const step = a.next && s && s.state === "open" ? nextStep(s, a.type) : null;
  const messageType = a.oddType ?? step?.type ?? types[a.type % types.length]!;
  const ambient = messageType === "Signal" || messageType === "Progress";
  const mode = a.modeOverride ?? (ambient && a.type % 2 === 0 ? "" : baseMode);
  const typed = payloadFor(messageType, mode, a.fields.current && s ? currentIds(a.fields, s, messageType) : a.fields);
  const payload =
    a.payload.kind === "typed"
      ? typed
      : a.payload.kind === "mutated"
        ? mutate(typed, a.payload.mutations)
        : a.payload.kind === "random"
          ? a.payload.bytes
          : new Uint8Array(maxPayload + a.payload.extra).fill(0x2a);
  const identity = step && "role" in a.as ? step.sender : callerFor(a.as, s);
  const sender = a.sender === "self" ? (identity ?? "") : a.sender === "empty" ? "" : a.sender;
  const env = create(EnvelopeSchema, {
    macpVersion: a.macpVersion,
    mode,
    messageType,
    messageId: a.messageId,
    sessionId: ambient && a.type % 3 === 0 ? "" : sessionId,
    sender,
    timestampUnixMs: a.timestamp,
    payload,
  });
  return { env, identity };
}

/** What a well-behaved participant would send next in `s`, and who would send it. */
function nextStep(s: ModelSession, pick: number): { type: string; sender: string } {
  const choose = <T>(xs: readonly T[]) => xs[pick % xs.length]!;
  if (s.mode === HANDOFF) {
    const offers = [...s.offers.values()];
    const pending = offers.find((o) => o.state === "offered");
    if (pending)
      return {
        type: choose(["HandoffAccept", "HandoffDecline", "HandoffContext", "HandoffAccept"]),
        sender: choose([pending.target, pending.target, pending.by, pending.target]),
      };
    if (offers.some((o) => o.state === "accepted")) return { type: "Commitment", sender: s.initiator };
    if (offers.length > 0 && pick % 2 === 0) return { type: "Commitment", sender: s.initiator };
    return { type: "HandoffOffer", sender: s.initiator };
  }
  const t = s.task;
  if (!t) return { type: "TaskRequest", sender: s.initiator };
  if (t.terminal) return { type: "Commitment", sender: s.initiator };
  if (t.active !== "") return { type: choose(["TaskUpdate", "TaskComplete", "TaskFail", "TaskComplete"]), sender: t.active };
  const responder = t.requested !== "" ? t.requested : ([...s.participants].find((p) => p !== s.initiator) ?? s.initiator);
  return { type: choose(["TaskAccept", "TaskAccept", "TaskReject"]), sender: responder };
}

/** The fields with the ids of the session's current offer or task (a fresh one for a new offer). */
function currentIds(f: Fields, s: ModelSession, messageType: string): Fields {
  const offers = [...s.offers.keys()];
  const handoffId = messageType === "HandoffOffer" ? `h${offers.length + 1}` : (offers.at(-1) ?? f.handoffId);
  return { ...f, handoffId, taskId: s.task?.taskId ?? f.taskId };
}

/** The identity behind a caller role, as the model sees the session (or any identity if it has none). */
function callerFor(caller: Caller, s: ModelSession | undefined): string | null {
  if ("id" in caller) return caller.id;
  const any = IDS[caller.pick % IDS.length]!;
  if (!s || caller.role === "anyone") return any;
  if (caller.role === "initiator") return s.initiator;
  const pending = [...s.offers.values()].filter((o) => o.state === "offered").map((o) => o.target);
  const task = s.task ? [s.task.active, s.task.requested].filter((p) => p !== "") : [];
  const others = [...s.participants].filter((p) => p !== s.initiator);
  const candidates = pending.length > 0 ? pending : task.length > 0 ? task : others;
  return candidates[caller.pick % Math.max(1, candidates.length)] ?? any;
}
