// Event rows of the Handoff mode's messages: offer, context, accept, decline.
import {
  HandoffAcceptPayloadSchema,
  HandoffContextPayloadSchema,
  HandoffDeclinePayloadSchema,
  HandoffOfferPayloadSchema,
} from "@/lib/gen/macp/modes/handoff/v1/handoff_pb";
import { HANDOFF_TYPES } from "@/lib/macp/constants";
import { decodeAs } from "@/lib/macp/payloads";
import { nonEmpty, type EventDetails, type RowContext } from "./model";

/** The row of a handoff message; undefined for another message type. */
export function handoffDetails(c: RowContext): EventDetails | undefined {
  const { env, base, actor, who, seq, undecodable } = c;
  switch (env.messageType) {
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
  }
  return undefined;
}
