// Event rows of the core messages every mode shares: session start,
// commitment, cancel, suspend, resume, TTL expiry, progress and signals.
import {
  CommitmentPayloadSchema,
  ProgressPayloadSchema,
  SessionCancelPayloadSchema,
  SessionResumePayloadSchema,
  SessionStartPayloadSchema,
  SessionSuspendPayloadSchema,
  SignalPayloadSchema,
} from "@/lib/gen/macp/v1/core_pb";
import { CORE_TYPES } from "@/lib/macp/constants";
import { decodeAs } from "@/lib/macp/payloads";
import { formatDuration } from "@/lib/views/format";
import { nonEmpty, type EventDetails, type RowContext } from "./model";

/** The row of a core message; undefined for another message type. */
export function coreDetails(c: RowContext): EventDetails | undefined {
  const { env, base, actor, who, undecodable } = c;
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
  }
  return undefined;
}
