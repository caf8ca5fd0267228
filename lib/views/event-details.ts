// A display model for one event row: title, actor, key fields, and the blobs
// to render (context, task input/output). It only decodes payloads and picks
// fields to show; phases and statuses come from the projections.

import type { Envelope } from "@/lib/gen/macp/v1/envelope_pb";
import {
  CommitmentPayloadSchema,
  ProgressPayloadSchema,
  SessionCancelPayloadSchema,
  SessionResumePayloadSchema,
  SessionStartPayloadSchema,
  SessionSuspendPayloadSchema,
  SignalPayloadSchema,
} from "@/lib/gen/macp/v1/core_pb";
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
import { CORE_TYPES, HANDOFF_TYPES, TASK_TYPES } from "@/lib/macp/constants";
import { decodeAs, decodePayload, payloadToJson } from "@/lib/macp/payloads";
import type { SessionEvent } from "@/lib/macp/projections/types";
import type { JsonObject } from "@bufbuild/protobuf";
import { shortParticipantName } from "@/lib/authz/decide";
import { formatDuration, formatPercent } from "@/lib/views/format";
import type { IconName, Tone } from "@/lib/views/labels";
import { MAX_PARAGRAPH_CHARS, clipLine, clipParagraph } from "@/lib/views/clip";

export interface DetailField {
  label: string;
  value: string;
  mono?: boolean;
}

export interface PayloadBlob {
  label: string;
  contentType: string;
  bytes: Uint8Array;
  /** File-name stem for downloads. */
  stem: string;
}

export interface EventDetails {
  title: string;
  icon: IconName;
  tone: Tone;
  actor: string;
  /** One line: "alice offered the handoff to bob". */
  summary: string;
  fields: DetailField[];
  reason?: string;
  context?: PayloadBlob;
  blobs: PayloadBlob[];
  /** 0..1 for task updates. */
  progress?: number;
  outcome?: { positive: boolean; action: string; reason: string; authorityScope: string; commitmentId: string };
  decodeError?: string;
}

/** Display name for a participant id (lib/views/directory.ts nameIn); without a directory, the id without its prefix. */
export type NameOf = (participantId: string) => string;

/** The default name: the id without a conventional prefix ("agent://oncall/alice" → "oncall/alice"). */
export const plainName: NameOf = (id) => shortParticipantName(id);

// One cache per name resolver (the live view keeps one per directory), each per envelope.
const caches = new WeakMap<NameOf, WeakMap<Envelope, EventDetails>>();

/** The row model of one event; people and agents named by `nameOf`. */
export function describeEvent(event: SessionEvent, nameOf: NameOf = plainName): EventDetails {
  let cache = caches.get(nameOf);
  if (!cache) {
    cache = new WeakMap<Envelope, EventDetails>();
    caches.set(nameOf, cache);
  }
  const hit = cache.get(event.envelope);
  if (hit) return hit;
  const d = bounded(build(event, nameOf));
  cache.set(event.envelope, d);
  return d;
}

/** Agents write these texts: each is shown up to a paragraph (lib/views/clip.ts); payload blobs are bounded by their viewers. */
function bounded(d: EventDetails): EventDetails {
  const out: EventDetails = {
    ...d,
    summary: clipParagraph(d.summary),
    fields: d.fields.map((f) => (f.value.length > MAX_PARAGRAPH_CHARS ? { ...f, value: clipParagraph(f.value) } : f)),
  };
  if (d.reason !== undefined) out.reason = clipParagraph(d.reason);
  if (d.outcome) out.outcome = { ...d.outcome, action: clipLine(d.outcome.action), reason: clipParagraph(d.outcome.reason) };
  return out;
}

const nonEmpty = (fields: (DetailField | false)[]): DetailField[] => fields.filter((f): f is DetailField => f !== false && f.value !== "");

function build(event: SessionEvent, nameOf: NameOf): EventDetails {
  const env = event.envelope;
  const who = (s: string): string => (s ? nameOf(s) : "the runtime");
  const actor = who(env.sender);
  const base = { actor, fields: [] as DetailField[], blobs: [] as PayloadBlob[] };
  const seq = event.sequence ?? 0;
  const undecodable = (title: string): EventDetails => ({
    ...base,
    title,
    icon: "question",
    tone: "muted",
    summary: `${actor} sent ${env.messageType || "a message"} (payload could not be decoded)`,
    decodeError: "Payload could not be decoded",
  });

  switch (env.messageType) {
    case CORE_TYPES.SessionStart: {
      const p = decodeAs(SessionStartPayloadSchema, env.payload);
      if (!p) return undecodable("Session start");
      return {
        ...base,
        title: "Session started",
        icon: "play",
        tone: "neutral",
        summary: `${actor} started the session`,
        fields: nonEmpty([
          { label: "Intent", value: p.intent },
          { label: "Participants", value: p.participants.join(", ") },
          { label: "TTL", value: formatDuration(Number(p.ttlMs)) },
          { label: "Mode version", value: p.modeVersion, mono: true },
          { label: "Configuration", value: p.configurationVersion, mono: true },
          { label: "Policy", value: p.policyVersion || "policy.default", mono: true },
          { label: "Context id", value: p.contextId, mono: true },
          p.roots.length > 0 && { label: "Roots", value: p.roots.map((r) => r.name || r.uri).join(", ") },
        ]),
      };
    }
    case HANDOFF_TYPES.Offer: {
      const p = decodeAs(HandoffOfferPayloadSchema, env.payload);
      if (!p) return undecodable("Offer");
      return {
        ...base,
        title: "Offer",
        icon: "send",
        tone: "info",
        summary: `${actor} offered ${p.scope || "the handoff"} to ${p.targetParticipant ? who(p.targetParticipant) : "nobody"}`,
        fields: nonEmpty([
          { label: "Target", value: p.targetParticipant, mono: true },
          { label: "Scope", value: p.scope },
          { label: "Handoff id", value: p.handoffId, mono: true },
        ]),
        reason: p.reason,
      };
    }
    case HANDOFF_TYPES.Context: {
      const p = decodeAs(HandoffContextPayloadSchema, env.payload);
      if (!p) return undecodable("Context");
      return {
        ...base,
        title: "Context",
        icon: "document",
        tone: "info",
        summary: `${actor} shared ${p.contentType === "text/markdown" ? "a runbook" : `context (${p.contentType || "untyped"})`}`,
        fields: nonEmpty([
          { label: "Content type", value: p.contentType, mono: true },
          { label: "Size", value: `${p.context.byteLength} bytes` },
        ]),
        context: { label: "Context", contentType: p.contentType, bytes: p.context, stem: `context-${seq}` },
      };
    }
    case HANDOFF_TYPES.Accept: {
      const p = decodeAs(HandoffAcceptPayloadSchema, env.payload);
      if (!p) return undecodable("Accept");
      return {
        ...base,
        title: "Accepted",
        icon: "check",
        tone: "success",
        summary: `${p.acceptedBy ? who(p.acceptedBy) : actor} accepted the offer`,
        fields: nonEmpty([{ label: "Handoff id", value: p.handoffId, mono: true }]),
        reason: p.reason,
      };
    }
    case HANDOFF_TYPES.Decline: {
      const p = decodeAs(HandoffDeclinePayloadSchema, env.payload);
      if (!p) return undecodable("Decline");
      return {
        ...base,
        title: "Declined",
        icon: "x",
        tone: "warning",
        summary: `${p.declinedBy ? who(p.declinedBy) : actor} declined the offer`,
        fields: nonEmpty([{ label: "Handoff id", value: p.handoffId, mono: true }]),
        reason: p.reason,
      };
    }
    case TASK_TYPES.Request: {
      const p = decodeAs(TaskRequestPayloadSchema, env.payload);
      if (!p) return undecodable("Task request");
      const blobs: PayloadBlob[] = p.input.byteLength
        ? [{ label: "Input", contentType: "", bytes: p.input, stem: `task-input-${seq}` }]
        : [];
      const deadline = Number(p.deadlineUnixMs);
      return {
        ...base,
        title: "Task requested",
        icon: "inbox",
        tone: "info",
        summary: `${actor} requested “${p.title || "a task"}” from ${p.requestedAssignee ? who(p.requestedAssignee) : "any participant"}`,
        fields: nonEmpty([
          { label: "Title", value: p.title },
          { label: "Assignee", value: p.requestedAssignee || "any participant", mono: p.requestedAssignee !== "" },
          { label: "Instructions", value: p.instructions },
          { label: "Task id", value: p.taskId, mono: true },
          deadline > 0 && { label: "Deadline", value: new Date(deadline).toISOString() },
        ]),
        blobs,
      };
    }
    case TASK_TYPES.Accept: {
      const p = decodeAs(TaskAcceptPayloadSchema, env.payload);
      if (!p) return undecodable("Task accept");
      return {
        ...base,
        title: "Task accepted",
        icon: "check",
        tone: "success",
        summary: `${p.assignee ? who(p.assignee) : actor} took the task`,
        fields: nonEmpty([{ label: "Task id", value: p.taskId, mono: true }]),
        reason: p.reason,
      };
    }
    case TASK_TYPES.Reject: {
      const p = decodeAs(TaskRejectPayloadSchema, env.payload);
      if (!p) return undecodable("Task reject");
      return {
        ...base,
        title: "Task rejected",
        icon: "x",
        tone: "warning",
        summary: `${p.assignee ? who(p.assignee) : actor} turned the task down`,
        fields: nonEmpty([{ label: "Task id", value: p.taskId, mono: true }]),
        reason: p.reason,
      };
    }
    case TASK_TYPES.Update: {
      const p = decodeAs(TaskUpdatePayloadSchema, env.payload);
      if (!p) return undecodable("Task update");
      const progress = Number.isFinite(p.progress) ? Math.min(1, Math.max(0, p.progress)) : 0;
      return {
        ...base,
        title: "Progress",
        icon: "play",
        tone: "progress",
        summary: `${actor} reported ${formatPercent(progress)}${p.message ? `: ${p.message}` : ""}`,
        fields: nonEmpty([
          { label: "Status", value: p.status },
          { label: "Message", value: p.message },
        ]),
        progress,
        blobs: p.partialOutput.byteLength
          ? [{ label: "Partial output", contentType: "", bytes: p.partialOutput, stem: `partial-output-${seq}` }]
          : [],
      };
    }
    case TASK_TYPES.Complete: {
      const p = decodeAs(TaskCompletePayloadSchema, env.payload);
      if (!p) return undecodable("Task complete");
      return {
        ...base,
        title: "Task completed",
        icon: "check-circle",
        tone: "success",
        summary: `${p.assignee ? who(p.assignee) : actor} completed the task`,
        fields: nonEmpty([{ label: "Summary", value: p.summary }]),
        blobs: p.output.byteLength ? [{ label: "Output", contentType: "", bytes: p.output, stem: `task-output-${seq}` }] : [],
      };
    }
    case TASK_TYPES.Fail: {
      const p = decodeAs(TaskFailPayloadSchema, env.payload);
      if (!p) return undecodable("Task fail");
      return {
        ...base,
        title: "Task failed",
        icon: "alert",
        tone: "danger",
        summary: `${p.assignee ? who(p.assignee) : actor} failed the task${p.errorCode ? ` (${p.errorCode})` : ""}`,
        fields: nonEmpty([
          { label: "Error code", value: p.errorCode, mono: true },
          { label: "Retryable", value: p.retryable ? "yes" : "no" },
        ]),
        reason: p.reason,
      };
    }
    case CORE_TYPES.Commitment: {
      const p = decodeAs(CommitmentPayloadSchema, env.payload);
      if (!p) return undecodable("Commitment");
      return {
        ...base,
        title: "Commitment",
        icon: "seal",
        tone: p.outcomePositive ? "success" : "danger",
        summary: `${actor} committed ${p.action} (${p.outcomePositive ? "positive" : "negative"} outcome)`,
        fields: nonEmpty([
          { label: "Action", value: p.action, mono: true },
          { label: "Authority scope", value: p.authorityScope },
          { label: "Commitment id", value: p.commitmentId, mono: true },
          p.supersedes !== undefined && {
            label: "Supersedes",
            value: `${p.supersedes.sessionId} / ${p.supersedes.commitmentHash}`,
            mono: true,
          },
        ]),
        reason: p.reason,
        outcome: {
          positive: p.outcomePositive,
          action: p.action,
          reason: p.reason,
          authorityScope: p.authorityScope,
          commitmentId: p.commitmentId,
        },
      };
    }
    case CORE_TYPES.SessionCancel: {
      const p = decodeAs(SessionCancelPayloadSchema, env.payload);
      return {
        ...base,
        title: "Cancelled",
        icon: "ban",
        tone: "danger",
        summary: `${p?.cancelledBy ? who(p.cancelledBy) : actor} cancelled the session`,
        ...(p?.reason ? { reason: p.reason } : {}),
      };
    }
    case CORE_TYPES.SessionSuspend: {
      const p = decodeAs(SessionSuspendPayloadSchema, env.payload);
      return {
        ...base,
        title: "Suspended",
        icon: "pause",
        tone: "warning",
        summary: `${p?.suspendedBy ? who(p.suspendedBy) : actor} suspended the session`,
        ...(p?.reason ? { reason: p.reason } : {}),
      };
    }
    case CORE_TYPES.SessionResume: {
      const p = decodeAs(SessionResumePayloadSchema, env.payload);
      return {
        ...base,
        title: "Resumed",
        icon: "play",
        tone: "info",
        summary: `${p?.resumedBy ? who(p.resumedBy) : actor} resumed the session`,
        fields: p ? nonEmpty([{ label: "Suspended for", value: formatDuration(Number(p.bankedMs)) }]) : [],
        ...(p?.reason ? { reason: p.reason } : {}),
      };
    }
    case CORE_TYPES.TtlExpired:
      return { ...base, title: "Expired", icon: "clock", tone: "muted", summary: "The session's TTL elapsed" };
    case CORE_TYPES.Progress: {
      const p = decodeAs(ProgressPayloadSchema, env.payload);
      return {
        ...base,
        title: "Progress",
        icon: "play",
        tone: "progress",
        summary: `${actor} reported progress${p?.message ? `: ${p.message}` : ""}`,
      };
    }
    case CORE_TYPES.Signal: {
      const p = decodeAs(SignalPayloadSchema, env.payload);
      return { ...base, title: "Signal", icon: "dot", tone: "neutral", summary: `${actor} signalled ${p?.signalType ?? ""}`.trim() };
    }
    default:
      return {
        ...base,
        title: env.messageType || "Message",
        icon: "question",
        tone: "muted",
        summary: `${actor} sent ${env.messageType || "a message"} (not interpreted)`,
      };
  }
}

/** Header fields and decoded payload of an envelope, for the raw view. */
export interface RawEnvelopeView {
  header: { label: string; value: string }[];
  payloadJson?: JsonObject;
  payloadTypeName?: string;
  payloadError?: string;
  payloadBytes: number;
}

export function rawEnvelopeView(event: SessionEvent): RawEnvelopeView {
  const env = event.envelope;
  const header = [
    { label: "sequence", value: event.sequence !== undefined ? String(event.sequence) : "—" },
    { label: "macp_version", value: env.macpVersion },
    { label: "mode", value: env.mode },
    { label: "message_type", value: env.messageType },
    { label: "message_id", value: env.messageId },
    { label: "session_id", value: env.sessionId },
    { label: "sender", value: env.sender },
    { label: "timestamp_unix_ms", value: env.timestampUnixMs.toString() },
  ];
  if (event.receivedAtMs !== undefined) header.push({ label: "observed_at_unix_ms", value: String(event.receivedAtMs) });
  const decoded = decodePayload(env.mode, env.messageType, env.payload);
  const view: RawEnvelopeView = { header, payloadBytes: env.payload.byteLength };
  if (decoded.ok) {
    try {
      view.payloadJson = payloadToJson(decoded);
      view.payloadTypeName = decoded.typeName;
    } catch (err) {
      view.payloadError = err instanceof Error ? err.message : String(err);
    }
  } else {
    view.payloadError = decoded.reason;
  }
  return view;
}
